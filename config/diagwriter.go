package config

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"sort"

	"github.com/hashicorp/hcl/v2"
)

// HCL's text writer finds a diagnostic's source lines by scanning its whole
// file from the start, grapheme by grapheme, once per diagnostic: a file
// with many errors costs its size times their number (50 ms for 53 errors
// in 2 KiB; minutes for a large generated file, and the stalls of
// FuzzLoad). writeDiagnostics writes exactly what HCL's writer writes, but
// finds the lines in an index made once per file.

// lineIndex is the lines of a file as HCL's writer finds them: scanned
// once with the same hcl.RangeScanner and bufio.ScanLines, so line
// numbers and ranges are the same in every case (invalid UTF-8, lone
// "\r"s).
type lineIndex struct {
	src   []byte
	lines []indexedLine
}

type indexedLine struct {
	rng hcl.Range
	tok []byte
}

func newLineIndex(src []byte, filename string) *lineIndex {
	ix := &lineIndex{src: src}
	for sc := hcl.NewRangeScanner(src, filename, bufio.ScanLines); sc.Scan(); {
		ix.lines = append(ix.lines, indexedLine{sc.Range(), sc.Bytes()})
	}
	return ix
}

// writeDiagnostics writes diags as hcl.NewDiagnosticTextWriter(w, files,
// width, color) does.
func writeDiagnostics(w io.Writer, files map[string]*hcl.File, diags hcl.Diagnostics, width uint, color bool) error {
	indexes := map[string]*lineIndex{}
	for _, d := range diags {
		if err := writeDiagnostic(w, files, indexes, d, width, color); err != nil {
			return err
		}
	}
	return nil
}

func writeDiagnostic(w io.Writer, files map[string]*hcl.File, indexes map[string]*lineIndex, d *hcl.Diagnostic, width uint, color bool) error {
	if d == nil || d.Subject == nil {
		return hcl.NewDiagnosticTextWriter(w, files, width, color).WriteDiagnostic(d)
	}
	var colorCode, highlightCode, resetCode string
	if color {
		switch d.Severity {
		case hcl.DiagError:
			colorCode = "\x1b[31m"
		case hcl.DiagWarning:
			colorCode = "\x1b[33m"
		}
		resetCode = "\x1b[0m"
		highlightCode = "\x1b[1;4m"
	}
	severity := "???????"
	switch d.Severity {
	case hcl.DiagError:
		severity = "Error"
	case hcl.DiagWarning:
		severity = "Warning"
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s%s%s: %s\n\n", colorCode, severity, resetCode, d.Summary)

	snip := *d.Subject
	highlight := snip
	if d.Context != nil {
		snip = hcl.RangeOver(snip, *d.Context)
	}
	if snip.Empty() {
		snip.End.Byte++
		snip.End.Column++
	}
	if highlight.Empty() {
		highlight.End.Byte++
		highlight.End.Column++
	}
	file := files[d.Subject.Filename]
	if file == nil || file.Bytes == nil {
		fmt.Fprintf(&b, "  on %s line %d:\n  (source code not available)\n\n", d.Subject.Filename, d.Subject.Start.Line)
	} else {
		context := ""
		if cs, ok := file.Nav.(interface{ ContextString(int) string }); ok {
			if c := cs.ContextString(d.Subject.Start.Byte); c != "" {
				context = ", in " + c
			}
		}
		fmt.Fprintf(&b, "  on %s line %d%s:\n", d.Subject.Filename, d.Subject.Start.Line, context)
		ix := indexes[d.Subject.Filename]
		if ix == nil {
			ix = newLineIndex(file.Bytes, d.Subject.Filename)
			indexes[d.Subject.Filename] = ix
		}
		src := ix.src
		// A line overlaps the snippet only if it ends at or after the
		// snippet's start and starts at or before its end.
		lo, hi := min(snip.Start.Byte, snip.End.Byte), max(snip.Start.Byte, snip.End.Byte)
		first := sort.Search(len(ix.lines), func(i int) bool { return ix.lines[i].rng.End.Byte >= lo })
		for _, l := range ix.lines[first:] {
			lr := l.rng
			if lr.Start.Byte > hi {
				break
			}
			if !lr.Overlaps(snip) {
				continue
			}
			before, highlighted, after := lr.PartitionAround(highlight)
			if highlighted.Empty() {
				fmt.Fprintf(&b, "%4d: %s\n", lr.Start.Line, l.tok)
			} else {
				fmt.Fprintf(&b, "%4d: %s%s%s%s%s\n", lr.Start.Line, before.SliceBytes(src), highlightCode, highlighted.SliceBytes(src), resetCode, after.SliceBytes(src))
			}
		}
		b.WriteByte('\n')
	}
	// The values of the expression's variables and the detail, as HCL
	// writes them after a snippet: written for a stand-in one-line file,
	// without what comes before them.
	tail, err := diagnosticTail(d, width)
	if err != nil {
		return err
	}
	b.Write(tail)
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("write failed: %w", err)
	}
	return nil
}

// diagnosticTail is what HCL's writer writes for d after its snippet.
func diagnosticTail(d *hcl.Diagnostic, width uint) ([]byte, error) {
	if d.Detail == "" && (d.Expression == nil || d.EvalContext == nil) {
		return nil, nil
	}
	const name = "\x00stand-in"
	files := map[string]*hcl.File{name: {Bytes: []byte("x")}}
	rng := &hcl.Range{Filename: name, Start: hcl.InitialPos, End: hcl.Pos{Line: 1, Column: 2, Byte: 1}}
	stub := &hcl.Diagnostic{Severity: d.Severity, Subject: rng}
	var head, full bytes.Buffer
	if err := hcl.NewDiagnosticTextWriter(&head, files, width, false).WriteDiagnostic(stub); err != nil {
		return nil, err
	}
	stub.Detail, stub.Expression, stub.EvalContext = d.Detail, d.Expression, d.EvalContext
	if err := hcl.NewDiagnosticTextWriter(&full, files, width, false).WriteDiagnostic(stub); err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(full.Bytes(), head.Bytes()) {
		return nil, fmt.Errorf("writing diagnostics: unexpected output of the HCL writer")
	}
	return full.Bytes()[head.Len():], nil
}
