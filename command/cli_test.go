package command

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pushform/internal/testutil"
	"pushform/views"
)

// TestCommandLineErrors runs every command and subcommand with an unknown
// flag, a flag without its value, a bad value, -h, and a single-dash long
// flag: errors are one line naming the command and the flag and exit 1,
// help goes to stdout and exits 0, and -flag means --flag.
func TestCommandLineErrors(t *testing.T) {
	type single struct {
		args   []string
		code   int
		output string // in stdout or stderr
	}
	for _, c := range []struct {
		cmd      string // as typed: "state list"
		valueArg string // a flag that takes a value
		badValue []string
		single   single
	}{
		{"validate", "--var", []string{"--json=maybe"}, single{[]string{"-json"}, 0, `"valid":true`}},
		{"plan", "--out", []string{"--lock-timeout", "5x"}, single{[]string{"-json", "-markdown"}, 1, "--json and --markdown cannot be combined"}},
		{"apply", "--parallelism", []string{"--parallelism", "abc"}, single{[]string{"-parallelism=0"}, 1, "--parallelism must be at least 1"}},
		{"show", "--state", []string{"--json=2"}, single{[]string{"-json", "-markdown", "x.plan"}, 1, "--json and --markdown cannot be combined"}},
		{"test", "--junit-xml", []string{"--verbose=x"}, single{[]string{"-filter=nope.pftest.hcl"}, 1, "--filter nope.pftest.hcl: no such test file"}},
		{"history", "--since", []string{"--since", "yesterday"}, single{[]string{"-user=alice", "-json"}, 0, `"known":false`}},
		{"test-send", "--device", []string{"--lock-timeout", "soon"}, single{[]string{"-device=x", "notification.nope"}, 1, "notification.nope is not a notification or badge of the configuration"}},
		{"render", "--user", []string{"--json=maybe"}, single{[]string{"-user=alice", "notification.beta_invite"}, 0, `title:`}},
		{"fmt", "--chdir", []string{"--check=yes"}, single{[]string{"-check", "-recursive"}, 0, ""}},
		{"state list", "--state", []string{"--no-color=x"}, single{[]string{"-state=none.state"}, 0, "No state at " + filepath.Join("DIR", "none.state")}},
		{"state show", "--state", []string{"--all=x"}, single{[]string{"-state=none.state", "badge.reset"}, 1, "no state at " + filepath.Join("DIR", "none.state")}},
		{"state rm", "--lock-timeout", []string{"--lock-timeout", "soon"}, single{[]string{"-state=none.state", "badge.reset"}, 1, "no state at " + filepath.Join("DIR", "none.state")}},
		{"state mv", "--state", []string{"--lock-timeout", "soon"}, single{[]string{"-state=none.state", "badge.a", "badge.b"}, 1, "no state at " + filepath.Join("DIR", "none.state")}},
		{"state pull", "--state", []string{"--no-color=x"}, single{[]string{"-state=none.state"}, 1, "no state in " + filepath.Join("DIR", "none.state")}},
		{"state push", "--lock-timeout", []string{"--force=x"}, single{[]string{"-state=none.state", "-force", "x.state"}, 1, "no state in " + filepath.Join("DIR", "x.state")}},
		{"state repair", "--lock-timeout", []string{"--force=x"}, single{[]string{"-state=none.state", "-force"}, 0, "There is no state journal (" + filepath.Join("DIR", "none.state.journal") + "): nothing to repair."}},
		{"state prune", "--before", []string{"--before", "someday"}, single{[]string{"-before=2020-01-01", "-state=none.state"}, 1, "no state at " + filepath.Join("DIR", "none.state")}},
		{"force-unlock", "--state", []string{"--force=x"}, single{[]string{"-force", "-state=none.state", "id"}, 1, filepath.Join("DIR", "none.state.lock.info")}},
		{"recipients", "--var-file", []string{"--json=x"}, single{[]string{"-json"}, 0, `["alice","bob"]`}},
		{"sandbox", "--seed", []string{"--fail-rate", "half"}, single{[]string{"-seed=sandbox.hcl", "-fail-rate=2"}, 1, "--fail-rate must be between 0 and 1"}},
		{"sandbox show", "--addr", []string{"--json=x"}, single{[]string{"-file=none.json", "alice-phone"}, 1, "no sandbox devices file at " + filepath.Join("DIR", "none.json")}},
		{"version", "--chdir", []string{"--json=x"}, single{[]string{"-json"}, 0, `"format_version":"1"`}},
		{"completion", "--chdir", []string{"--no-color=x"}, single{[]string{"-no-color", "bash"}, 0, "complete -o default -F _pushform pushform"}},
		{"help", "--chdir", []string{"--no-color=x"}, single{[]string{"-no-color", "plan"}, 0, "Usage: pushform [global options] plan [options]"}},
	} {
		words := strings.Fields(c.cmd)
		run := func(t *testing.T, args ...string) (int, string, string, string) {
			dir := testutil.Quickstart(t)
			code, out, errOut := runIn(t, dir, "", nil, append(slices.Clone(words), args...)...)
			return code, strings.ReplaceAll(out, dir, "DIR"), strings.ReplaceAll(errOut, dir, "DIR"), dir
		}
		usageLine := "run 'pushform " + c.cmd + " -h' for usage\n"
		t.Run(c.cmd+"/unknown flag", func(t *testing.T) {
			code, out, errOut, _ := run(t, "--bogus-flag")
			want := "Error: " + c.cmd + ": unknown flag --bogus-flag\n" + usageLine
			if code != ExitError || out != "" || errOut != want {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant:\n%s", code, out, errOut, want)
			}
		})
		t.Run(c.cmd+"/misspelt flag", func(t *testing.T) {
			name := strings.TrimPrefix(c.valueArg, "--")
			typo := name[:len(name)-1] + "x" + name[len(name)-1:]
			code, _, errOut, _ := run(t, "--"+typo, "v")
			if want := "unknown flag --" + typo + " (did you mean --" + name + "?)"; code != ExitError || !strings.Contains(errOut, want) {
				t.Errorf("exit %d, stderr:\n%s\nwant %q", code, errOut, want)
			}
		})
		t.Run(c.cmd+"/missing value", func(t *testing.T) {
			code, _, errOut, _ := run(t, c.valueArg)
			if want := "Error: " + c.cmd + ": flag " + c.valueArg + " needs a value: " + c.valueArg + " "; code != ExitError || !strings.HasPrefix(errOut, want) || !strings.HasSuffix(errOut, usageLine) {
				t.Errorf("exit %d, stderr:\n%s\nwant prefix %q", code, errOut, want)
			}
		})
		t.Run(c.cmd+"/bad value", func(t *testing.T) {
			code, out, errOut, _ := run(t, c.badValue...)
			flag, _, _ := strings.Cut(c.badValue[0], "=")
			if code != ExitError || out != "" || !strings.Contains(errOut, "Error: "+c.cmd+": ") || !strings.Contains(errOut, flag) ||
				!strings.HasSuffix(errOut, usageLine) || strings.Count(errOut, "\n") != 2 {
				t.Errorf("exit %d, stdout %q, stderr:\n%s", code, out, errOut)
			}
		})
		for _, h := range []string{"-h", "--help", "-help"} {
			t.Run(c.cmd+"/"+h, func(t *testing.T) {
				code, out, errOut, _ := run(t, h)
				if code != ExitOK || errOut != "" || !strings.HasPrefix(out, "Usage: pushform [global options] "+c.cmd) ||
					!strings.Contains(out, "Global options:\n") || !strings.Contains(out, "\nExamples:\n") {
					t.Errorf("exit %d, stderr %q, stdout:\n%s", code, errOut, out)
				}
			})
		}
		t.Run(c.cmd+"/help command", func(t *testing.T) {
			code, out, _, _ := run(t, "-h")
			dir := testutil.Quickstart(t)
			hcode, hout, herr := runIn(t, dir, "", nil, append([]string{"help"}, words...)...)
			if hcode != ExitOK || herr != "" || hout != out || code != ExitOK {
				t.Errorf("pushform help %s differs from %s -h:\n%s\n---\n%s", c.cmd, c.cmd, hout, out)
			}
		})
		t.Run(c.cmd+"/single dash", func(t *testing.T) {
			code, out, errOut, _ := run(t, c.single.args...)
			if code != c.single.code || !strings.Contains(out+errOut, c.single.output) || strings.Contains(errOut, "unknown") {
				t.Errorf("exit %d (want %d), stdout:\n%s\nstderr:\n%s\nwant %q", code, c.single.code, out, errOut, c.single.output)
			}
		})
	}
}

// TestEveryCommandIsTested keeps TestCommandLineErrors covering every
// command: a new one must be added there.
func TestEveryCommandIsTested(t *testing.T) {
	src, err := os.ReadFile("cli_test.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range commands() {
		names := []string{c.name}
		for _, s := range c.subs {
			names = append(names, c.name+" "+s.name)
		}
		for _, n := range names {
			if !strings.Contains(string(src), "{\""+n+"\", ") {
				t.Errorf("TestCommandLineErrors has no case for %q", n)
			}
		}
	}
}

func TestUnknownCommand(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"plna"}, "Error: unknown command \"plna\" (did you mean plan?)\nrun 'pushform -h' for the list of commands\n"},
		{[]string{"aply", "--auto-approve"}, "Error: unknown command \"aply\" (did you mean apply?)\nrun 'pushform -h' for the list of commands\n"},
		{[]string{"frobnicate"}, "Error: unknown command \"frobnicate\"\nrun 'pushform -h' for the list of commands\n"},
		{[]string{"state", "lst"}, "Error: state: unknown subcommand \"lst\" (did you mean list?)\nrun 'pushform state -h' for usage\n"},
		{[]string{"state"}, "Error: state: missing subcommand: list, show, rm, mv, pull, push, repair or prune\nrun 'pushform state -h' for usage\n"},
		{[]string{"help", "stat"}, "Error: help: no command \"stat\" (did you mean state?)\nrun 'pushform help -h' for usage\n"},
		{[]string{"--chdr", "x", "plan"}, "Error: unknown flag --chdr (did you mean --chdir?)\nrun 'pushform -h' for usage\n"},
		{[]string{"plan", "--\x1b[31mred"}, "Error: plan: unknown flag --\\x1b[31mred\nrun 'pushform plan -h' for usage\n"},
		{[]string{"-chdir"}, "Error: flag --chdir needs a value: --chdir DIR\nrun 'pushform -h' for usage\n"},
		{[]string{"completion", "tcsh"}, "Error: completion: no completion for shell \"tcsh\": use bash, zsh or fish\nrun 'pushform completion -h' for usage\n"},
	} {
		code, out, errOut := runIn(t, t.TempDir(), "", nil, c.args...)
		if code != ExitError || out != "" || errOut != c.want {
			t.Errorf("%v: exit %d, stdout %q, stderr:\n%s\nwant:\n%s", c.args, code, out, errOut, c.want)
		}
	}
	// No command: the list of commands, on stderr.
	code, out, errOut := runIn(t, t.TempDir(), "", nil)
	if code != ExitError || out != "" || !strings.Contains(errOut, "Main commands:") {
		t.Errorf("no command: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
}

func TestMainHelp(t *testing.T) {
	// -help before a command, as Terraform's, is that command's help.
	_, planHelp, _ := runIn(t, t.TempDir(), "", nil, "plan", "-h")
	for _, args := range [][]string{{"-help", "plan"}, {"--chdir", "x", "-h", "plan"}} {
		if code, out, errOut := runIn(t, t.TempDir(), "", nil, args...); code != ExitOK || out != planHelp {
			t.Errorf("%v: exit %d, stderr %s, stdout:\n%s", args, code, errOut, out)
		}
	}
	for _, args := range [][]string{{"--help"}, {"-h"}, {"-help"}, {"help"}} {
		code, out, errOut := runIn(t, t.TempDir(), "", nil, args...)
		if code != ExitOK || errOut != "" {
			t.Fatalf("%v: exit %d, stderr %s", args, code, errOut)
		}
		for _, c := range commands() {
			if !strings.Contains(out, "\n  "+c.name+" ") {
				t.Errorf("%v does not list %s:\n%s", args, c.name, out)
			}
		}
		if args[0] == "--help" {
			testutil.Golden(t, filepath.Join("testdata", "help.txt"), []byte(out))
		}
	}
}

func TestHelpGolden(t *testing.T) {
	for _, cmd := range []string{"plan", "apply"} {
		code, out, errOut := runIn(t, t.TempDir(), "", nil, cmd, "-h")
		if code != ExitOK || errOut != "" {
			t.Fatalf("%s -h: exit %d, stderr %s", cmd, code, errOut)
		}
		for _, line := range strings.Split(out, "\n") {
			if len([]rune(line)) > helpWidth {
				t.Errorf("%s -h: line longer than %d columns: %q", cmd, helpWidth, line)
			}
		}
		testutil.Golden(t, filepath.Join("testdata", "help-"+cmd+".txt"), []byte(out))
	}
}

// TestVersion checks version against the build information of the test
// binary, whatever it holds.
func TestVersion(t *testing.T) {
	info := readBuildInfo()
	code, out, _ := runIn(t, t.TempDir(), "", nil, "version")
	if code != ExitOK || !strings.HasPrefix(out, "pushform "+info.Version+"\n") || !strings.Contains(out, info.GoVersion+" on "+info.Platform) {
		t.Errorf("version: exit %d\n%s", code, out)
	}
	for _, args := range [][]string{{"-v"}, {"--version"}, {"-version"}} {
		if c, o, _ := runIn(t, t.TempDir(), "", nil, args...); c != ExitOK || o != out {
			t.Errorf("%v: exit %d\n%s", args, c, o)
		}
	}
	code, out, _ = runIn(t, t.TempDir(), "", nil, "version", "--json")
	var got views.BuildInfo
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != ExitOK || got != info || strings.Count(out, "\n") != 1 {
		t.Errorf("version --json: exit %d, %v\n%s", code, err, out)
	}
}

// TestHelpGroups: a flag is listed under the heading that says what it
// does in that command (test-send's --device picks a target; history's
// filters what is shown).
func TestHelpGroups(t *testing.T) {
	for _, tt := range []struct{ cmd, flag, group string }{
		{"test-send", "--device", "Targets"},
		{"test-send", "--user", "Targets"},
		{"test-send", "--as-user", "Targets"},
		{"render", "--user", "Targets"},
		{"history", "--device", "History options"},
		{"history", "--user", "History options"},
		{"plan", "--allow-resend", "Plan options"},
		{"apply", "--allow-resend", "Apply options"},
	} {
		code, out, _ := runIn(t, t.TempDir(), "", nil, tt.cmd, "-h")
		group := ""
		for _, line := range strings.Split(out, "\n") {
			if strings.HasSuffix(line, ":") && !strings.HasPrefix(line, " ") {
				group = strings.TrimSuffix(line, ":")
			}
			if strings.HasPrefix(strings.TrimSpace(line), tt.flag+" ") {
				break
			}
		}
		if code != ExitOK || group != tt.group {
			t.Errorf("%s -h: %s listed under %q, want %q", tt.cmd, tt.flag, group, tt.group)
		}
	}
}
