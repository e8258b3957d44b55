package command

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"pushform/internal/testutil"
)

func TestNormaliseArgs(t *testing.T) {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs.String("out", "", "")
	fs.Bool("auto-approve", false, "")
	fs.StringArray("var", nil, "")
	fs.Duration("lock-timeout", 0, "")
	fs.BoolP("version", "v", false, "")
	for _, c := range []struct {
		name         string
		in, want     []string
		interspersed bool
	}{
		{"single-dash with =", []string{"-out=x.plan"}, []string{"--out=x.plan"}, true},
		{"single-dash bool", []string{"-auto-approve", "plan.file"}, []string{"--auto-approve", "plan.file"}, true},
		{"single-dash with value", []string{"-var", "k=v"}, []string{"--var", "k=v"}, true},
		{"value starting with a dash is a value", []string{"-var", "-x=1", "--lock-timeout", "-5m"}, []string{"--var", "-x=1", "--lock-timeout", "-5m"}, true},
		{"double dash unchanged", []string{"--out", "-weird"}, []string{"--out", "-weird"}, true},
		{"shorthands unchanged", []string{"-h", "-v", "-v=true"}, []string{"-h", "-v", "-v=true"}, true},
		{"stdin marker", []string{"-", "-out=x"}, []string{"-", "--out=x"}, true},
		{"after --", []string{"-out=x", "--", "-auto-approve"}, []string{"--out=x", "--", "-auto-approve"}, true},
		{"unknown flags too, for the error", []string{"-ot=x"}, []string{"--ot=x"}, true},
		{"globals stop at the command", []string{"-chdir=d", "plan", "-out=x"}, []string{"--chdir=d", "plan", "-out=x"}, false},
		{"bool takes no value", []string{"-auto-approve", "-out", "x"}, []string{"--auto-approve", "--out", "x"}, true},
	} {
		if got := normaliseArgs(fs, c.in, c.interspersed); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %q -> %q, want %q", c.name, c.in, got, c.want)
		}
	}
}

func TestSuggest(t *testing.T) {
	names := []string{"out", "auto-approve", "parallelism", "lock-timeout", "var", "var-file"}
	for typed, want := range map[string]string{
		"ot": "out", "auto-aprove": "auto-approve", "paralelism": "parallelism", "lock-timout": "lock-timeout",
		"var-fil": "var-file", "auto": "auto-approve", "parallel": "parallelism", "xyzzy": "", "va": "var",
	} {
		if got := suggest(typed, names); got != want {
			t.Errorf("suggest(%q) = %q, want %q", typed, got, want)
		}
	}
}

func TestSplitWords(t *testing.T) {
	for in, want := range map[string][]string{
		"":                          nil,
		"  -out=x.plan   -json ":    {"-out=x.plan", "-json"},
		`-var 'greeting=hello you'`: {"-var", "greeting=hello you"},
		`-var "a=\"b\" \$c"`:        {"-var", `a="b" $c`},
		`-var a\ b`:                 {"-var", "a b"},
		`''`:                        {""},
		`x"y"'z'`:                   {"xyz"},
		"a\tb\nc":                   {"a", "b", "c"},
		`"a\nb"`:                    {`a\nb`},
	} {
		got, err := splitWords(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("splitWords(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{`'open`, `"open`, `trailing\`} {
		if _, err := splitWords(in); err == nil {
			t.Errorf("splitWords(%q): no error", in)
		}
	}
}

// FuzzSplitWords: any input splits or fails without panicking, and
// shellQuote'd words split back to themselves.
func FuzzSplitWords(f *testing.F) {
	for _, s := range []string{"", "a b", `'x'"y"`, `a\ b`, "it's", `"\$"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		splitWords(s)
		words := []string{s, s + "x", "-var=" + s}
		var quoted []string
		for _, w := range words {
			quoted = append(quoted, shellQuote(w))
		}
		got, err := splitWords(strings.Join(quoted, " "))
		if err != nil || !reflect.DeepEqual(got, words) {
			t.Fatalf("%q: quoted %q split to %q, %v", words, quoted, got, err)
		}
	})
}

func TestWithEnvArgs(t *testing.T) {
	env := map[string]string{
		"PUSHFORM_CLI_ARGS":              "-no-color",
		"PUSHFORM_CLI_ARGS_plan":         "-lock-timeout=5m -var 'a=b c'",
		"PUSHFORM_CLI_ARGS_state_list":   "-state=x.state",
		"PUSHFORM_CLI_ARGS_force_unlock": "-force",
	}
	getenv := func(k string) string { return env[k] }
	for _, c := range []struct {
		args  []string
		depth int
		want  []string
		from  []string
	}{
		{[]string{"plan", "-out=p"}, 1, []string{"plan", "-no-color", "-lock-timeout=5m", "-var", "a=b c", "-out=p"}, []string{"PUSHFORM_CLI_ARGS", "PUSHFORM_CLI_ARGS_plan"}},
		{[]string{"state", "list"}, 2, []string{"state", "list", "-no-color", "-state=x.state"}, []string{"PUSHFORM_CLI_ARGS", "PUSHFORM_CLI_ARGS_state_list"}},
		{[]string{"force-unlock", "ID"}, 1, []string{"force-unlock", "-no-color", "-force", "ID"}, []string{"PUSHFORM_CLI_ARGS", "PUSHFORM_CLI_ARGS_force_unlock"}},
		{[]string{"apply"}, 1, []string{"apply", "-no-color"}, []string{"PUSHFORM_CLI_ARGS"}},
	} {
		got, from, err := withEnvArgs(getenv, c.args[:c.depth], c.args)
		if err != nil || !reflect.DeepEqual(got, c.want) || !reflect.DeepEqual(from, c.from) {
			t.Errorf("%q: %q from %q, %v; want %q from %q", c.args, got, from, err, c.want, c.from)
		}
	}
	env["PUSHFORM_CLI_ARGS_apply"] = "-var 'open"
	if _, _, err := withEnvArgs(getenv, []string{"apply"}, []string{"apply"}); err == nil || !strings.Contains(err.Error(), "PUSHFORM_CLI_ARGS_apply: unterminated single quote") {
		t.Errorf("bad quoting: %v", err)
	}
}

// TestCLIArgsEnv runs commands with PUSHFORM_CLI_ARGS variables set: their
// flags apply, the command line's own win, and an error says where a flag
// came from.
func TestCLIArgsEnv(t *testing.T) {
	dir := testutil.Quickstart(t)
	environ := []string{"PUSHFORM_CLI_ARGS=-no-color", "PUSHFORM_CLI_ARGS_plan=-out=env.plan -detailed-exitcode"}
	code, out, errOut := runIn(t, dir, "", environ, "plan")
	if code != ExitChanges || !strings.Contains(out, "Saved the plan to env.plan") {
		t.Fatalf("plan with PUSHFORM_CLI_ARGS_plan: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "env.plan")); err != nil {
		t.Fatal(err)
	}
	// The command line comes last, so it wins.
	if code, out, _ = runIn(t, dir, "", environ, "plan", "-out=cli.plan"); code != ExitChanges || !strings.Contains(out, "Saved the plan to cli.plan") {
		t.Errorf("-out on the command line: exit %d\n%s", code, out)
	}
	// help and completion do not take them.
	if code, _, errOut = runIn(t, dir, "", []string{"PUSHFORM_CLI_ARGS=-bogus"}, "help", "plan"); code != ExitOK {
		t.Errorf("help with PUSHFORM_CLI_ARGS: exit %d %s", code, errOut)
	}
	code, _, errOut = runIn(t, dir, "", []string{"PUSHFORM_CLI_ARGS_validate=-jsn"}, "validate")
	want := "Error: validate: unknown flag --jsn (did you mean --json?)\nrun 'pushform validate -h' for usage\n(the arguments include those of PUSHFORM_CLI_ARGS_validate)\n"
	if code != ExitError || errOut != want {
		t.Errorf("exit %d, stderr:\n%s\nwant:\n%s", code, errOut, want)
	}
}

// TestPathsRelativeToChdir plans with every path flag relative to --chdir,
// from the directory above, then runs the apply command plan suggests,
// exactly as printed, from the same place.
func TestPathsRelativeToChdir(t *testing.T) {
	root := t.TempDir()
	cfg := filepath.Join(root, "campaigns", "env")
	if err := os.CopyFS(cfg, os.DirFS(filepath.Join("..", "examples", "environments"))); err != nil {
		t.Fatal(err)
	}
	for _, leftover := range []string{"env/test.state", "env/pushform.sandbox.json"} {
		os.Remove(filepath.Join(cfg, leftover))
	}
	code, out, errOut := runIn(t, root, "", nil, "-chdir=campaigns/env", "plan", "-var-file=env/test.pfvars", "-state=env/test.state", "-out=test plan")
	if code != ExitOK {
		t.Fatalf("plan: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(cfg, "test plan")); err != nil {
		t.Fatalf("the plan is not in the --chdir directory: %v", err)
	}
	_, suggested, ok := strings.Cut(out, "To send exactly these notifications, run:\n  ")
	suggested, _, _ = strings.Cut(suggested, "\n")
	want := "pushform --chdir campaigns/env apply --state env/test.state 'test plan'"
	if !ok || suggested != want {
		t.Fatalf("suggested %q, want %q", suggested, want)
	}
	words, err := splitWords(suggested)
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runIn(t, root, "", nil, words[1:]...)
	if code != ExitOK || !strings.Contains(out, "Apply complete") {
		t.Fatalf("%s: exit %d\n%s\n%s", suggested, code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(cfg, "env", "test.state")); err != nil {
		t.Errorf("the state is not in the --chdir directory: %v", err)
	}
	// show and state read the same files from the same place.
	for _, args := range [][]string{
		{"-chdir=campaigns/env", "show", "test plan"},
		{"-chdir=campaigns/env", "state", "list", "-state=env/test.state"},
		{"-chdir=campaigns/env", "state", "show", "-state=env/test.state", "notification.beta_invite"},
		{"-chdir=campaigns/env", "sandbox", "show", "-file=env/pushform.sandbox.json", "alice-test-phone"},
	} {
		if code, out, errOut := runIn(t, root, "", nil, args...); code != ExitOK || out == "" {
			t.Errorf("%v: exit %d\n%s\n%s", args, code, out, errOut)
		}
	}
}

// TestBashCompletion loads the bash script and asks it for completions.
func TestBashCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	_, script, _ := runIn(t, t.TempDir(), "", nil, "completion", "bash")
	for _, c := range []struct {
		line string // the words typed, the last one being completed
		want []string
	}{
		{"pushform pl", []string{"plan"}},
		{"pushform ", commandNames()},
		{"pushform --chdir dir ap", []string{"apply"}},
		{"pushform -chdir=dir ap", []string{"apply"}},
		{"pushform plan --o", []string{"--out", "--override-policy", "--override-reason"}},
		{"pushform plan -detailed", []string{"--detailed-exitcode"}},
		{"pushform apply --auto-approve --para", []string{"--parallelism"}},
		{"pushform state ", []string{"list", "show", "rm", "mv", "pull", "push", "repair", "prune"}},
		{"pushform history --u", []string{"--user", "--until"}},
		{"pushform state prune --b", []string{"--before"}},
		{"pushform state show --a", []string{"--all"}},
		{"pushform sandbox show --j", []string{"--json", "--json-indent"}},
		{"pushform sandbox --fa", []string{"--fail-rate", "--fail-targets", "--fault-seed"}},
		{"pushform help st", []string{"state"}},
		{"pushform completion ", []string{"bash", "zsh", "fish"}},
		{"pushform plan --out ", nil}, // a value: left to file name completion
	} {
		words := strings.Split(c.line, " ")
		// bash splits "--flag=value" into three words.
		var split []string
		for _, w := range words {
			if k, v, ok := strings.Cut(w, "="); ok && strings.HasPrefix(w, "-") {
				split = append(split, k, "=", v)
			} else {
				split = append(split, w)
			}
		}
		var quoted []string
		for _, w := range split {
			quoted = append(quoted, shellQuote(w))
		}
		prog := script + "\nCOMP_WORDS=(" + strings.Join(quoted, " ") + ")\nCOMP_CWORD=" + strconv.Itoa(len(split)-1) +
			"\n_pushform\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
		out, err := exec.Command(bash, "--norc", "--noprofile", "-c", prog).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.line, err, out)
		}
		got := strings.Fields(string(out))
		slices.Sort(got)
		want := slices.Clone(c.want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%q completes to %q, want %q", c.line, got, want)
		}
	}
}

// TestCompletionScripts checks the other shells' scripts: fish lists every
// command and flag; zsh is the bash function under bashcompinit.
func TestCompletionScripts(t *testing.T) {
	_, fish, _ := runIn(t, t.TempDir(), "", nil, "completion", "fish")
	for _, want := range []string{
		"complete -c pushform -n '__fish_use_subcommand' -a 'plan' -d 'Show what apply would send'",
		"complete -c pushform -n '__fish_seen_subcommand_from plan' -l out -r -F -d 'save the plan to FILE for apply'",
		"complete -c pushform -n '__fish_seen_subcommand_from state; and not __fish_seen_subcommand_from list show rm mv pull push repair prune' -a 'list'",
		"complete -c pushform -n '__fish_seen_subcommand_from state; and __fish_seen_subcommand_from show' -l all",
	} {
		if !strings.Contains(fish, want) {
			t.Errorf("fish script lacks %q", want)
		}
	}
	_, zsh, _ := runIn(t, t.TempDir(), "", nil, "completion", "zsh")
	if !strings.HasPrefix(zsh, "#compdef pushform\n") || !strings.Contains(zsh, "bashcompinit") || !strings.Contains(zsh, "complete -o default -F _pushform pushform") {
		t.Errorf("zsh script:\n%s", zsh)
	}
	if path, err := exec.LookPath("fish"); err == nil {
		file := filepath.Join(t.TempDir(), "pushform.fish")
		os.WriteFile(file, []byte(fish), 0o644)
		for line, want := range map[string]string{
			"pushform pl":               "plan",
			"pushform state show --a":   "--all",
			"pushform show --mark":      "--markdown",
			"pushform state show --mar": "",
			"pushform sandbox sh":       "show",
		} {
			out, err := exec.Command(path, "--no-config", "-c", "source "+shellQuote(file)+"; complete -C"+shellQuote(line)).CombinedOutput()
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				if w, _, _ := strings.Cut(l, "\t"); w != "" {
					got = append(got, w)
				}
			}
			if err != nil || strings.Join(got, " ") != want {
				t.Errorf("fish: %q completes to %q (%v), want %q", line, got, err, want)
			}
		}
	}
	for shell, script := range map[string]string{"fish": fish, "zsh": zsh} {
		if path, err := exec.LookPath(shell); err == nil {
			if out, err := exec.Command(path, "-n", "-c", script).CombinedOutput(); err != nil {
				t.Errorf("%s -n: %v\n%s", shell, err, out)
			}
		}
	}
}
