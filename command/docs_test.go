package command

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"pushform/config"
	"pushform/internal/testutil"
	"pushform/sandbox"
	"pushform/testfile"
)

// The documentation cannot drift from the program: every command's page
// carries its --help, every HCL snippet is canonical and valid for its
// kind, and every relative link resolves. The conventions are in
// docs/CONTRIBUTING.md.

// commandPage is the page of a command as typed ("state list"):
// docs/commands/state-list.md.
func commandPage(name string) string {
	return "docs/commands/" + strings.ReplaceAll(name, " ", "-") + ".md"
}

// commandPagesOther are the pages of docs/commands that are not one
// command's.
var commandPagesOther = []string{"README.md", "apply-json.md", "conventions.md", "output.md"}

// generatedHelp is the block of a page that holds `pushform NAME -h`,
// between its markers.
func generatedHelp(name, help string) string {
	cmd := helpCommand(name)
	return "<!-- begin: " + cmd + " (generated: go test ./command -run TestCommandPages -update) -->\n" +
		"```text\n" + help + "```\n" +
		"<!-- end: " + cmd + " -->\n"
}

// helpCommand is the command line that prints name's help.
func helpCommand(name string) string {
	return strings.Join(append(append([]string{"pushform"}, strings.Fields(name)...), "-h"), " ")
}

// helpFlag matches a flag at the start of a line of help: "  --out FILE",
// "  -v, --version".
var helpFlag = regexp.MustCompile(`(?m)^ +(?:-[a-zA-Z], )?(--[a-z0-9-]+)`)

// TestCommandPages checks that every command and subcommand has its page
// under docs/commands and that the page holds exactly what `pushform
// COMMAND -h` prints (with -update, it rewrites that block): a flag in
// --help is never missing from its page. The index, docs/commands/README.md,
// holds `pushform -h`.
func TestCommandPages(t *testing.T) {
	names := []string{""}
	for _, c := range commands() {
		names = append(names, c.name)
		for _, s := range c.subs {
			names = append(names, c.name+" "+s.name)
		}
	}
	for _, name := range names {
		args := append(strings.Fields(name), "-h")
		code, help, errOut := runIn(t, t.TempDir(), "", nil, args...)
		if code != ExitOK || errOut != "" {
			t.Fatalf("pushform %s: exit %d, stderr %s", strings.Join(args, " "), code, errOut)
		}
		page := commandPage(name)
		if name == "" {
			page = "docs/commands/README.md"
		}
		checkCommandPage(t, page, name, help)
	}
	// No page outlives its command.
	want := map[string]bool{}
	for _, name := range names {
		want[filepath.Base(commandPage(name))] = true
	}
	pages, _ := filepath.Glob(filepath.Join(repoRoot, "docs", "commands", "*.md"))
	for _, p := range pages {
		if base := filepath.Base(p); !want[base] && !slices.Contains(commandPagesOther, base) {
			t.Errorf("docs/commands/%s documents no command of pushform -h (remove it, or add it to commandPagesOther)", base)
		}
	}
}

// checkCommandPage compares the generated block of page with help, naming
// first the flags of help that the page lacks.
func checkCommandPage(t *testing.T, page, name, help string) {
	t.Helper()
	path := filepath.Join(repoRoot, filepath.FromSlash(page))
	src, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("%s: %v (every command has a page: write it with the markers of generatedHelp, then run go test ./command -run TestCommandPages -update)", page, err)
		return
	}
	want := generatedHelp(name, help)
	begin := strings.SplitAfterN(want, "\n", 2)[0]
	endMarker := "<!-- end: " + helpCommand(name) + " -->\n"
	i := strings.Index(string(src), begin)
	j := strings.Index(string(src), endMarker)
	if i < 0 || j < i {
		t.Errorf("%s has no block %q ... %q for %s", page, strings.TrimSpace(begin), strings.TrimSpace(endMarker), helpCommand(name))
		return
	}
	got := string(src[i : j+len(endMarker)])
	if got == want {
		return
	}
	if testutil.Updating() {
		updated := string(src[:i]) + want + string(src[j+len(endMarker):])
		if err := os.WriteFile(path, []byte(updated), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	for _, m := range helpFlag.FindAllStringSubmatch(help, -1) {
		if !regexp.MustCompile(`(?m)^ +(?:-[a-zA-Z], )?` + regexp.QuoteMeta(m[1]) + `\b`).MatchString(got) {
			t.Errorf("%s lacks %s, which %s lists", page, m[1], helpCommand(name))
		}
	}
	t.Errorf("%s differs from %s (go test ./command -run TestCommandPages -update rewrites its block):\n--- page\n%s\n--- help\n%s", page, helpCommand(name), got, want)
}

// snippetFixtures are the files a whole configuration in the docs may
// read beside it, taken from the examples; sandbox.hcl only when the
// snippet names it.
var snippetFixtures = map[string]string{
	"orders.csv":  "examples/orders/orders.csv",
	"users.csv":   "examples/local-time/users.csv",
	"sandbox.hcl": "examples/quickstart/sandbox.hcl",
}

// TestDocSnippets holds every fenced block of the README and docs/ to the
// convention of docs/CONTRIBUTING.md: each names its language; an hcl
// block is what `pushform fmt` writes, and by its kind a whole
// configuration that `pushform validate` accepts (hcl), a part of one that
// parses (hcl fragment), or a sandbox seed the sandbox accepts (hcl seed).
func TestDocSnippets(t *testing.T) {
	checked := 0
	for _, rel := range docFiles(t) {
		fences, _, err := scanMarkdown(readDoc(t, rel))
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		for _, f := range fences {
			where := fmt.Sprintf("%s:%d", rel, f.line)
			if f.info == "" {
				t.Errorf("%s: a fence without a language (text for output; see docs/CONTRIBUTING.md)", where)
				continue
			}
			words := strings.Fields(f.info)
			if words[0] != "hcl" {
				continue
			}
			kind := strings.Join(words[1:], " ")
			if err := checkSnippet(t, kind, f.body); err != nil {
				t.Errorf("%s: ```%s: %v", where, f.info, err)
			}
			checked++
		}
	}
	if checked < 20 {
		t.Errorf("only %d hcl snippets checked: is the docs tree there?", checked)
	}
}

// checkSnippet checks one hcl block of the given kind.
func checkSnippet(t *testing.T, kind, body string) error {
	switch kind {
	case "", "fragment", "seed", "policy", "test":
	default:
		return fmt.Errorf("unknown kind %q: hcl (a whole configuration), hcl fragment, hcl seed, hcl policy or hcl test", kind)
	}
	// fmt parses first: a fragment that does not parse fails here.
	switch code, out, errOut := runIn(t, t.TempDir(), body, nil, "fmt", "--diff", "-"); {
	case code != ExitOK:
		return fmt.Errorf("pushform fmt refuses it:\n%s", errOut)
	case out != "":
		return fmt.Errorf("not as pushform fmt writes it:\n%s", out)
	}
	switch kind {
	case "":
		dir := t.TempDir()
		for name, from := range snippetFixtures {
			if filepath.Ext(name) == ".hcl" && !strings.Contains(body, `"`+name+`"`) {
				continue // a seed is read as configuration unless the service block names it
			}
			src, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(from)))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), src, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, _, errOut := runIn(t, dir, "", nil, "validate", "--no-color"); code != ExitOK {
			return fmt.Errorf("pushform validate exits %d (a part of a configuration is an hcl fragment):\n%s", code, errOut)
		}
	case "seed":
		if _, diags := sandbox.ParseSeed("seed.hcl", []byte(body)); diags.HasErrors() {
			return fmt.Errorf("not a sandbox seed: %s", diags.Error())
		}
	case "policy":
		// A file of a policy directory, beside the smallest configuration.
		dir := t.TempDir()
		testutil.WriteFile(t, dir, "main.hcl", testutil.ServiceTest)
		testutil.WriteFile(t, dir, "org/org.policy.hcl", body)
		if code, _, errOut := runIn(t, dir, "", nil, "validate", "--no-color", "--policy-dir", "org"); code != ExitOK {
			return fmt.Errorf("pushform validate --policy-dir refuses it:\n%s", errOut)
		}
	case "test":
		f, diags := config.ParseSource("x.pftest.hcl", []byte(body))
		if !diags.HasErrors() {
			_, diags = testfile.Decode("x.pftest.hcl", f, config.Functions(t.TempDir()))
		}
		if diags.HasErrors() {
			return fmt.Errorf("not a test file: %s", diags.Error())
		}
	}
	return nil
}

// TestDocLinks checks that every relative link of the README, docs/ and
// the other READMEs (examples, sandbox) names a file of the repository
// and, into markdown, a heading there.
func TestDocLinks(t *testing.T) {
	others, err := filepath.Glob(filepath.Join(repoRoot, "*", "*", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob(filepath.Join(repoRoot, "*", "README.md"))
	files := docFiles(t)
	for _, p := range append(others, more...) {
		rel, _ := filepath.Rel(repoRoot, p)
		if rel = filepath.ToSlash(rel); !slices.Contains(files, rel) && !strings.HasPrefix(rel, "docs/pending/") {
			files = append(files, rel)
		}
	}
	for _, rel := range files {
		_, prose, err := scanMarkdown(readDoc(t, rel))
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		for _, l := range links(prose) {
			target := l.target
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			dest := rel
			if file != "" {
				dest = filepath.ToSlash(filepath.Join(filepath.Dir(rel), file))
			}
			info, err := os.Stat(filepath.Join(repoRoot, filepath.FromSlash(dest)))
			if err != nil {
				t.Errorf("%s:%d: link to %s: no such file", rel, l.line, target)
				continue
			}
			if anchor == "" || info.IsDir() || filepath.Ext(dest) != ".md" {
				continue
			}
			_, destProse, err := scanMarkdown(readDoc(t, dest))
			if err == nil && !anchors(destProse)[anchor] {
				t.Errorf("%s:%d: link to %s: %s has no heading #%s", rel, l.line, target, dest, anchor)
			}
		}
	}
}
