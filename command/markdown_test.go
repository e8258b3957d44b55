package command

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// The documentation's markdown, read the way the docs tests need it:
// fenced blocks with their info strings, links, and heading anchors.

// repoRoot is the repository, seen from this package's directory.
const repoRoot = ".."

// docFiles lists the markdown the docs tests hold to their rules: the
// README and every page under docs/, less docs/pending/ (features' drafts,
// folded in by whoever merges them) and docs/plan-comment.md (pushform's
// own output, written by scripts/screenshot-plan.sh). Paths are relative
// to the repository, with slashes.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(repoRoot, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repoRoot, p)
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir() && rel == "docs/pending":
			return filepath.SkipDir
		case d.IsDir(), filepath.Ext(rel) != ".md", rel == "docs/plan-comment.md":
			return nil
		}
		files = append(files, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// fence is one fenced code block.
type fence struct {
	line int    // of the opening fence, 1-based
	info string // the words after the opening backticks
	body string // the lines between the fences, unindented
}

var fenceOpen = regexp.MustCompile("^( *)(```+)(.*)$")

// scanMarkdown splits markdown into its fenced blocks and the text outside
// them (fenced lines blanked, so line numbers stay). An unclosed fence is
// an error.
func scanMarkdown(src string) (fences []fence, prose string, err error) {
	var out strings.Builder
	var cur *fence
	var indent, ticks int
	var body strings.Builder
	sc := bufio.NewScanner(strings.NewReader(src))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		m := fenceOpen.FindStringSubmatch(line)
		switch {
		case cur == nil && m != nil:
			indent, ticks = len(m[1]), len(m[2])
			cur = &fence{line: n, info: strings.TrimSpace(m[3])}
			body.Reset()
			out.WriteString("\n")
		case cur != nil && m != nil && len(m[2]) >= ticks && strings.TrimSpace(m[3]) == "":
			cur.body = body.String()
			fences = append(fences, *cur)
			cur = nil
			out.WriteString("\n")
		case cur != nil:
			trimmed := line
			for i := 0; i < indent && strings.HasPrefix(trimmed, " "); i++ {
				trimmed = trimmed[1:]
			}
			body.WriteString(trimmed + "\n")
			out.WriteString("\n")
		default:
			out.WriteString(line + "\n")
		}
	}
	if cur != nil {
		return nil, "", fmt.Errorf("line %d: a fence that is never closed", cur.line)
	}
	return fences, out.String(), sc.Err()
}

var (
	mdHeading = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *#*$`)
	// mdLink is an inline link's target: [text](target) or ![alt](target).
	mdLink     = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	codeSpan   = regexp.MustCompile("`[^`\n]*`")
	htmlAnchor = regexp.MustCompile(`<a (?:name|id)="([^"]+)"`)
)

// anchors returns the anchors GitHub makes for prose's headings.
func anchors(prose string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, m := range mdHeading.FindAllStringSubmatch(prose, -1) {
		slug := headingSlug(m[1])
		if n := seen[slug]; n > 0 {
			out[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	for _, m := range htmlAnchor.FindAllStringSubmatch(prose, -1) {
		out[m[1]] = true
	}
	return out
}

// headingSlug is GitHub's anchor of a heading: lower case, punctuation
// dropped, spaces turned into hyphens.
func headingSlug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// linkRef is a link's target and the line it is on.
type linkRef struct {
	line   int
	target string
}

// links returns the link targets of prose; code spans are not read.
func links(prose string) []linkRef {
	var out []linkRef
	for i, line := range strings.Split(prose, "\n") {
		line = codeSpan.ReplaceAllString(line, "")
		for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
			out = append(out, linkRef{i + 1, m[1]})
		}
	}
	return out
}

func readDoc(t *testing.T, rel string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(src)
}

func TestScanMarkdown(t *testing.T) {
	src := "# Title\n\n```hcl fragment\nx = 1\n```\n\n- item\n\n  ```text\n  out\n    more\n  ```\n\n## A `code` heading: yes\n```\nno info\n````\n"
	fences, prose, err := scanMarkdown(src)
	if err != nil {
		t.Fatal(err)
	}
	want := []fence{{3, "hcl fragment", "x = 1\n"}, {9, "text", "out\n  more\n"}, {15, "", "no info\n"}}
	if len(fences) != len(want) {
		t.Fatalf("fences %+v, want %+v", fences, want)
	}
	for i := range want {
		if fences[i] != want[i] {
			t.Errorf("fence %d: %+v, want %+v", i, fences[i], want[i])
		}
	}
	if got := anchors(prose); !got["title"] || !got["a-code-heading-yes"] || len(got) != 2 {
		t.Errorf("anchors %v", got)
	}
	if _, _, err := scanMarkdown("```sh\nopen\n"); err == nil {
		t.Error("an unclosed fence was accepted")
	}
	if got := headingSlug("Scheduled runs: apply --scheduled"); got != "scheduled-runs-apply---scheduled" {
		t.Errorf("slug %q", got)
	}
}
