package config

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// The people of a user_data or device_data block read straight from a
// CSV file, as csvdecode would read it (see peopleFromCSV).

// peopleFromCSV reads attributes written as
// { for VAR in csvdecode(file(PATH)) : VAR.COLUMN => VAR } (or
// VAR["COLUMN"]) straight from the file: a million rows as values of the
// language take seconds and gigabytes, and more than a configuration's
// budget. The result is what the expression means, with file up to
// MaxDataFileSize. ok is false for any other expression.
func peopleFromCSV(a *hcl.Attribute, ctx *hcl.EvalContext, dir, root string) (*peopleTable, hcl.Diagnostics, bool) {
	fe, ok := unwrapExpr(a.Expr).(*hclsyntax.ForExpr)
	if !ok || fe.KeyExpr == nil || fe.CondExpr != nil || fe.Group || fe.KeyVar != "" {
		return nil, nil, false
	}
	if v, ok := unwrapExpr(fe.ValExpr).(*hclsyntax.ScopeTraversalExpr); !ok || len(v.Traversal) != 1 || v.Traversal.RootName() != fe.ValVar {
		return nil, nil, false
	}
	column, ok := columnOf(unwrapExpr(fe.KeyExpr), fe.ValVar)
	if !ok {
		return nil, nil, false
	}
	dec, ok := unwrapExpr(fe.CollExpr).(*hclsyntax.FunctionCallExpr)
	if !ok || dec.Name != "csvdecode" || len(dec.Args) != 1 || dec.ExpandFinal || !hasFunction(ctx, "csvdecode") {
		return nil, nil, false
	}
	fc, ok := unwrapExpr(dec.Args[0]).(*hclsyntax.FunctionCallExpr)
	if !ok || fc.Name != "file" || len(fc.Args) != 1 || fc.ExpandFinal || !hasFunction(ctx, "file") {
		return nil, nil, false
	}
	pv, diags := fc.Args[0].Value(ctx)
	if diags.HasErrors() {
		return nil, diags, true
	}
	if !pv.IsWhollyKnown() || pv.IsNull() || pv.Type() != cty.String {
		return nil, nil, false
	}
	path := pv.AsString()
	fail := func(detail string) (*peopleTable, hcl.Diagnostics, bool) {
		return nil, append(diags, errDiag("Invalid attributes", detail, a.Expr.Range().Ptr())), true
	}
	full, err := resolvePath(dir, path)
	if err != nil {
		return fail(fmt.Sprintf("Reading the %s data: %s.", root, err))
	}
	if info, err := os.Stat(full); err != nil || !info.Mode().IsRegular() {
		return fail(fmt.Sprintf("Reading the %s data: %s is not a regular file.", root, path))
	}
	if err := checkCSVHeader(full, column); err != nil {
		return fail(fmt.Sprintf("csvdecode of %s: %s.", path, err))
	}
	// The rows are read when a text is first filled in: a plan that
	// sends nothing (everyone has the template already) reads none.
	t := &peopleTable{rng: a.Expr.Range()}
	t.load = func() error {
		src, err := ReadSource(full, MaxDataFileSize)
		if err != nil {
			return fmt.Errorf("reading the %s data: %w", root, err)
		}
		c, err := parsePeopleCSV(string(src), column)
		if err != nil {
			return fmt.Errorf("csvdecode of %s: %w", path, err)
		}
		if dup, rows, ok := c.index(); !ok {
			return fmt.Errorf("two rows of %s have %s %s (rows %d and %d): each %s is one row", path, column, quoteValue(dup), rows[0]+1, rows[1]+1, root)
		}
		t.csv = c
		return nil
	}
	return t, diags, true
}

// checkCSVHeader reads the first line of the CSV file at path and checks
// it names column, as csvdecode and the for expression would.
func checkCSVHeader(path, column string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := csv.NewReader(bufio.NewReaderSize(io.LimitReader(f, MaxFunctionFileSize), 64<<10))
	header, err := r.Read()
	if err == io.EOF {
		return errors.New("missing header line")
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("CSV parse error on line %d: %w", pe.Line, pe.Err)
	}
	if err != nil {
		return err
	}
	if !slices.Contains(header, column) {
		return fmt.Errorf("no column %q (the columns are %s)", column, strings.Join(header, ", "))
	}
	return nil
}

// columnOf returns COLUMN of VAR.COLUMN or VAR["COLUMN"].
func columnOf(e hclsyntax.Expression, v string) (string, bool) {
	switch e := e.(type) {
	case *hclsyntax.ScopeTraversalExpr:
		if len(e.Traversal) != 2 || e.Traversal.RootName() != v {
			return "", false
		}
		switch s := e.Traversal[1].(type) {
		case hcl.TraverseAttr:
			return s.Name, true
		case hcl.TraverseIndex:
			if s.Key.Type() == cty.String {
				return s.Key.AsString(), true
			}
		}
	case *hclsyntax.IndexExpr:
		c, ok := unwrapExpr(e.Collection).(*hclsyntax.ScopeTraversalExpr)
		k, ok2 := unwrapExpr(e.Key).(*hclsyntax.TemplateExpr)
		if ok && ok2 && len(c.Traversal) == 1 && c.Traversal.RootName() == v && k.IsStringLiteral() {
			kv, _ := k.Value(nil)
			return kv.AsString(), true
		}
	}
	return "", false
}

// csvTable is a CSV file's people: its cells as offsets into one text
// (the file itself, or, for a file with quotes, the cells' values laid
// end to end), without a pointer for the collector to follow a cell: a
// million people's three cells as strings were 48 MiB of them, scanned
// at every collection of an apply.
type csvTable struct {
	text    string
	columns []string
	key     int      // the id column
	cells   []uint32 // the start and end of each cell, row after row
	// order lists the rows in id order; nil when the file is in id order.
	order []int32
}

func (c *csvTable) len() int { return len(c.cells) / 2 / len(c.columns) }

// cell returns the text of row's column col.
func (c *csvTable) cell(row, col int) string {
	k := 2 * (row*len(c.columns) + col)
	return c.text[c.cells[k]:c.cells[k+1]]
}

// rowAt is the row of the i-th id, in id order.
func (c *csvTable) rowAt(i int) int {
	if c.order == nil {
		return i
	}
	return int(c.order[i])
}

// find returns the row of id.
func (c *csvTable) find(id string) (int, bool) {
	lo, hi := 0, c.len()
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if c.cell(c.rowAt(m), c.key) < id {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < c.len() && c.cell(c.rowAt(lo), c.key) == id {
		return c.rowAt(lo), true
	}
	return 0, false
}

// index orders the rows by id when the file does not, reporting an id
// given twice (two rows, counted from 0).
func (c *csvTable) index() (dup string, rows [2]int, ok bool) {
	n := c.len()
	sorted := true
	for r := 1; r < n && sorted; r++ {
		sorted = c.cell(r-1, c.key) < c.cell(r, c.key)
	}
	if !sorted {
		c.order = make([]int32, n)
		for r := range c.order {
			c.order[r] = int32(r)
		}
		slices.SortStableFunc(c.order, func(a, b int32) int { return strings.Compare(c.cell(int(a), c.key), c.cell(int(b), c.key)) })
	}
	for i := 1; i < n; i++ {
		if a, b := c.rowAt(i-1), c.rowAt(i); c.cell(a, c.key) == c.cell(b, c.key) {
			return c.cell(a, c.key), [2]int{min(a, b), max(a, b)}, false
		}
	}
	return "", rows, true
}

// parsePeopleCSV reads src as csvdecode does (RFC 4180, the first row
// naming the columns, every row as long) into a table keyed by column. A
// file without quotes is split in place, at a cost of a few nanoseconds a
// cell; one with quotes is read by encoding/csv.
func parsePeopleCSV(src, column string) (*csvTable, error) {
	var header []string
	c := &csvTable{text: src, cells: make([]uint32, 0, 2*(strings.Count(src, ",")+strings.Count(src, "\n")+1))}
	if strings.IndexByte(src, '"') < 0 {
		line, off := 0, 0
		for rest := src; rest != ""; {
			l, more, _ := strings.Cut(rest, "\n")
			start := off
			off += len(l) + 1
			rest = more
			line++
			l = strings.TrimSuffix(l, "\r")
			if l == "" {
				continue // encoding/csv skips empty lines
			}
			if header == nil {
				header = strings.Split(l, ",")
				continue
			}
			n := len(c.cells)
			for pos := start; ; {
				i := strings.IndexByte(l[pos-start:], ',')
				if i < 0 {
					c.cells = append(c.cells, uint32(pos), uint32(start+len(l)))
					break
				}
				c.cells = append(c.cells, uint32(pos), uint32(pos+i))
				pos += i + 1
			}
			if (len(c.cells)-n)/2 != len(header) {
				return nil, fmt.Errorf("CSV parse error on line %d: wrong number of fields", line)
			}
		}
	} else {
		var text strings.Builder
		r := csv.NewReader(strings.NewReader(src))
		r.ReuseRecord = true
		for {
			rec, err := r.Read()
			if err == io.EOF {
				break
			}
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, fmt.Errorf("CSV parse error on line %d: %w", pe.Line, pe.Err)
			}
			if err != nil {
				return nil, err
			}
			if header == nil {
				header = slices.Clone(rec)
				continue
			}
			for _, v := range rec {
				c.cells = append(c.cells, uint32(text.Len()), uint32(text.Len()+len(v)))
				text.WriteString(v)
			}
		}
		c.text = text.String()
	}
	if header == nil {
		return nil, errors.New("missing header line")
	}
	c.key = -1
	for i, h := range header {
		if slices.Index(header, h) != i {
			return nil, fmt.Errorf("duplicate column name %q", h)
		}
		if h == column {
			c.key = i
		}
	}
	if c.key < 0 {
		return nil, fmt.Errorf("no column %q (the columns are %s)", column, strings.Join(header, ", "))
	}
	c.columns = header
	return c, nil
}
