package e2e

import (
	"bufio"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// readmeCommand is one command of a fenced shell block of a README.
type readmeCommand struct {
	line int
	text string
	exit int // from a trailing "# exits N: ..."; 0 otherwise
}

var exitsComment = regexp.MustCompile(`#\s*exits\s+(\d+)\b`)

// readmeCommands parses the ```sh (or bash, shell, console) blocks of a
// markdown file: one command per line, "\" continues a line, "#" starts
// a comment, and "# exits N" says which exit code the command has. A
// block whose info string says norun (```sh norun: it installs something
// or needs a real service) is not read, nor is a "go test" line: that is
// the suite running this test.
func readmeCommands(path string) ([]readmeCommand, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var cmds []readmeCommand
	var pending strings.Builder
	start, inBlock := 0, false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if fence, ok := strings.CutPrefix(trimmed, "```"); ok {
			if inBlock {
				inBlock = false
				continue
			}
			words := strings.Fields(fence)
			if len(words) > 0 && !slices.Contains(words[1:], "norun") {
				switch words[0] {
				case "sh", "bash", "shell", "console":
					inBlock = true
				}
			}
			continue
		}
		if !inBlock || trimmed == "" || strings.HasPrefix(trimmed, "#") || strings.HasPrefix(trimmed, "go test ") {
			continue
		}
		if pending.Len() == 0 {
			start = n
		}
		if cont, ok := strings.CutSuffix(trimmed, `\`); ok {
			pending.WriteString(strings.TrimSpace(cont) + " ")
			continue
		}
		pending.WriteString(trimmed)
		c := readmeCommand{line: start, text: pending.String()}
		pending.Reset()
		if m := exitsComment.FindStringSubmatch(c.text); m != nil {
			c.exit, _ = strconv.Atoi(m[1])
		}
		cmds = append(cmds, c)
	}
	return cmds, sc.Err()
}

// copyRepository copies the repository into dir as a fresh clone would
// have it: without .git and without what earlier runs left in examples.
func copyRepository(t *testing.T, dir string) {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		name := d.Name()
		switch {
		case d.IsDir() && name == ".git":
			return filepath.SkipDir
		case d.IsDir():
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		case name == ".git", strings.HasPrefix(name, "pushform.state"), name == "pushform.sandbox.json", strings.HasSuffix(name, ".plan"):
			return nil
		case !d.Type().IsRegular():
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), src, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestReadmeCommands runs every command of the README and of every example
// README, in order, from the root of a fresh copy of the repository with
// the built binary on PATH as pushform, as a user following the README
// would, and checks each exits as documented. The README's first command
// is the quickstart, `go run .` on a fresh machine.
func TestReadmeCommands(t *testing.T) {
	readmes, err := filepath.Glob("../examples/*/README.md")
	if err != nil || len(readmes) < 5 {
		t.Fatalf("example READMEs: %v %v", readmes, err)
	}
	readmes = append(readmes, "../README.md")
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	// The environment of a fresh shell: nothing of pushform's, so no
	// command can reach a real service or depend on a developer's setup.
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PUSHFORM_") && !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	env = append(env, "PATH="+filepath.Dir(binary)+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=1")
	for _, readme := range readmes {
		name := filepath.Base(filepath.Dir(readme))
		if readme == "../README.md" {
			name = "README"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cmds, err := readmeCommands(readme)
			if err != nil {
				t.Fatal(err)
			}
			if len(cmds) == 0 {
				t.Fatalf("%s has no ```sh block of commands", readme)
			}
			root := t.TempDir()
			copyRepository(t, root)
			env := env[:len(env):len(env)]
			if name != "README" {
				env = append(env, pgExample(t, filepath.Join(root, "examples", name))...)
			}
			for _, c := range cmds {
				if strings.HasPrefix(c.text, "export ") {
					t.Errorf("%s:%d exports a variable; the examples need none: %s", readme, c.line, c.text)
				}
				cmd := exec.Command(sh, "-c", c.text)
				cmd.Dir, cmd.Env = root, env
				out, err := cmd.CombinedOutput()
				code := 0
				if ee, ok := err.(*exec.ExitError); ok {
					code = ee.ExitCode()
				} else if err != nil {
					t.Fatal(err)
				}
				if code != c.exit {
					t.Errorf("%s:%d: %s\nexited %d, the README says %d:\n%s", readme, c.line, c.text, code, c.exit, out)
				}
			}
		})
	}
}

func TestReadmeCommandsParser(t *testing.T) {
	path := filepath.Join(t.TempDir(), "README.md")
	os.WriteFile(path, []byte("intro\n```sh\n# a comment\npushform validate\ngo test ./...\npushform plan \\\n  --out x.plan   # exits 2: changes\n```\n\n```text\nError: not a command\n```\n```\nnot run either\n```\n```sh norun\nnor this\n```\n"), 0o644)
	cmds, err := readmeCommands(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []readmeCommand{{4, "pushform validate", 0}, {6, "pushform plan --out x.plan   # exits 2: changes", 2}}
	if len(cmds) != len(want) || cmds[0] != want[0] || cmds[1] != want[1] {
		t.Errorf("got %+v, want %+v", cmds, want)
	}
}
