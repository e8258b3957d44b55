package command

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/sergi/go-diff/diffmatchpatch"

	"pushform/config"
)

// fmtOptions are the parsed flags of fmt.
type fmtOptions struct {
	check, diff, recursive, write bool
}

// fmtHelp is the help of fmt; its flags come from the flag set it parses.
func fmtHelp() helpDoc {
	return helpDoc{
		usage: []string{"fmt [options] [PATH...]"},
		text: "Rewrites configuration files in the canonical format: indentation, spacing and aligned " +
			"equals signs. PATH is a file, a directory (its *.hcl files) or - for standard input; the " +
			"default is the configuration directory. A file that does not parse is refused with its " +
			"diagnostics and left untouched. --check exits 3 when a file would change.",
		examples: []string{
			"pushform fmt",
			"pushform fmt -check -diff",
		},
	}
}

// runFmt rewrites configuration files in canonical format. Files that do
// not parse are refused with diagnostics and left untouched.
func runFmt(_ context.Context, m *Meta, args []string) int {
	flags := m.FlagSet("fmt")
	var o fmtOptions
	flags.BoolVar(&o.check, "check", false, "list files that would change and exit 3 if any; change nothing")
	flags.BoolVar(&o.diff, "diff", false, "print a unified diff of the changes")
	flags.BoolVar(&o.recursive, "recursive", false, "also format files in subdirectories")
	flags.BoolVar(&o.write, "write", true, "write the formatted files back")
	if err := m.parse(flags, args); err != nil {
		return m.usageError("fmt", err)
	}
	if o.check {
		o.write = false
	}
	targets := flags.Args()
	if len(targets) == 0 {
		targets = []string{""}
	}
	failed, changed := false, false
	for _, t := range targets {
		if t == "-" {
			c, err := m.fmtStdin(o)
			failed = failed || err
			changed = changed || c
			continue
		}
		files, err := m.fmtFiles(t, o.recursive)
		if err != nil {
			m.Errorf("%v", err)
			failed = true
			continue
		}
		for _, f := range files {
			c, bad := m.fmtFile(f, o)
			failed = failed || bad
			changed = changed || c
		}
	}
	switch {
	case failed:
		return ExitError
	case o.check && changed:
		return ExitFmt
	}
	return ExitOK
}

// fmtFile is one file to format: where it is and how to name it.
type fmtFile struct {
	path    string // absolute
	display string // as the user would write it
}

// fmtFiles expands a target: a file, or the *.hcl files of a directory.
// "" is the configuration directory, shown with bare file names.
func (m *Meta) fmtFiles(target string, recursive bool) ([]fmtFile, error) {
	root := m.ConfigDir()
	path := root
	if target != "" {
		path = target
		if !filepath.IsAbs(path) {
			path = filepath.Join(root, target)
		}
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("no file or directory %s", displayOr(target, path))
	}
	if !info.IsDir() {
		return []fmtFile{{path: path, display: target}}, nil
	}
	var out []fmtFile
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != path && (!recursive || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if filepath.Ext(p) != ".hcl" || !d.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(path, p)
		out = append(out, fmtFile{path: p, display: filepath.Join(target, rel)})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", displayOr(target, path), err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].display < out[j].display })
	return out, nil
}

func displayOr(target, path string) string {
	if target != "" {
		return target
	}
	return path
}

// formatSource parses src (refusing broken files) and formats it.
func (m *Meta) formatSource(name string, src []byte) ([]byte, bool) {
	f, diags := config.ParseSource(name, src)
	if diags.HasErrors() {
		files := map[string]*hcl.File{}
		if f != nil {
			files[name] = f
		}
		if err := config.WriteFileDiagnostics(m.Stderr, files, diags, uint(m.Width), m.Color()); err != nil {
			m.Errorf("%v", err)
		}
		return nil, false
	}
	return hclwrite.Format(src), true
}

func (m *Meta) fmtFile(f fmtFile, o fmtOptions) (changed, failed bool) {
	info, err := os.Stat(f.path)
	if err != nil {
		m.Errorf("%v", err)
		return false, true
	}
	src, err := config.ReadSource(f.path, config.MaxFileSize)
	if err != nil {
		m.Errorf("%v", err)
		return false, true
	}
	out, ok := m.formatSource(f.display, src)
	if !ok {
		return false, true
	}
	if bytes.Equal(src, out) {
		return false, false
	}
	fmt.Fprintln(m.Stdout, f.display)
	if o.diff {
		io.WriteString(m.Stdout, unifiedDiff("old/"+filepath.ToSlash(f.display), "new/"+filepath.ToSlash(f.display), string(src), string(out)))
	}
	if o.write {
		// WriteFile keeps the mode of an existing file.
		if err := os.WriteFile(f.path, out, info.Mode().Perm()); err != nil {
			m.Errorf("writing %s: %v", f.display, err)
			return true, true
		}
	}
	return true, false
}

// fmtStdin formats stdin to stdout; with --check or --diff it only reports.
func (m *Meta) fmtStdin(o fmtOptions) (changed, failed bool) {
	if m.Stdin == nil {
		m.Errorf("no standard input")
		return false, true
	}
	src, err := io.ReadAll(io.LimitReader(m.Stdin, config.MaxFileSize+1))
	if err != nil {
		m.Errorf("reading standard input: %v", err)
		return false, true
	}
	out, ok := m.formatSource("<stdin>", src)
	if !ok {
		return false, true
	}
	changed = !bytes.Equal(src, out)
	switch {
	case o.diff:
		if changed {
			io.WriteString(m.Stdout, unifiedDiff("old/<stdin>", "new/<stdin>", string(src), string(out)))
		}
	case o.check:
	default:
		m.Stdout.Write(out)
	}
	return changed, false
}

// diffLine is one line of a line diff: op is ' ', '-' or '+'.
type diffLine struct {
	op   byte
	text string
}

// unifiedDiff renders a unified diff (3 lines of context) of a and b, built
// from go-diff's line-mode diff. It is "" when a == b.
func unifiedDiff(nameA, nameB, a, b string) string {
	if a == b {
		return ""
	}
	dmp := diffmatchpatch.New()
	ca, cb, lines := dmp.DiffLinesToChars(a, b)
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(ca, cb, false), lines)
	var ls []diffLine
	for _, d := range diffs {
		op := byte(' ')
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			op = '-'
		case diffmatchpatch.DiffInsert:
			op = '+'
		}
		for _, t := range strings.SplitAfter(d.Text, "\n") {
			if t != "" {
				ls = append(ls, diffLine{op, t})
			}
		}
	}
	// oldNo[i] and newNo[i] count the old and new lines before ls[i].
	oldNo := make([]int, len(ls)+1)
	newNo := make([]int, len(ls)+1)
	for i, l := range ls {
		oldNo[i+1], newNo[i+1] = oldNo[i], newNo[i]
		if l.op != '+' {
			oldNo[i+1]++
		}
		if l.op != '-' {
			newNo[i+1]++
		}
	}
	const context = 3
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", nameA, nameB)
	for i := 0; i < len(ls); {
		if ls[i].op == ' ' {
			i++
			continue
		}
		start := max(0, i-context)
		last := i
		for j := i; j < len(ls); {
			if ls[j].op != ' ' {
				last = j
				j++
				continue
			}
			k := j
			for k < len(ls) && ls[k].op == ' ' {
				k++
			}
			if k == len(ls) || k-j > 2*context {
				break
			}
			j = k
		}
		stop := min(len(ls), last+1+context)
		oldCount, newCount := oldNo[stop]-oldNo[start], newNo[stop]-newNo[start]
		oldStart, newStart := oldNo[start], newNo[start]
		if oldCount > 0 {
			oldStart++
		}
		if newCount > 0 {
			newStart++
		}
		fmt.Fprintf(&sb, "@@ -%d,%d +%d,%d @@\n", oldStart, oldCount, newStart, newCount)
		for _, l := range ls[start:stop] {
			sb.WriteByte(l.op)
			sb.WriteString(l.text)
			if !strings.HasSuffix(l.text, "\n") {
				sb.WriteString("\n\\ No newline at end of file\n")
			}
		}
		i = stop
	}
	return sb.String()
}
