package config

import (
	"strings"
	"testing"
)

// TestPeopleCSV: a CSV file read in place or through encoding/csv (with
// quotes) gives the cells csvdecode gives, finds each id whatever the
// file's order, and names the rows of an id given twice.
func TestPeopleCSV(t *testing.T) {
	tests := []struct {
		name, src string
		want      map[string][]string // id -> its cells
		dup       string
		err       string
	}{
		{"sorted", "id,name\na,Ann\nb,Bob\n", map[string][]string{"a": {"a", "Ann"}, "b": {"b", "Bob"}}, "", ""},
		{"unsorted, CRLF, blank lines", "id,name\r\nb,Bob\r\n\r\na,Ann\r\n", map[string][]string{"a": {"a", "Ann"}, "b": {"b", "Bob"}}, "", ""},
		{"quotes", "id,name\n\"b\",\"Bob, \"\"the builder\"\"\"\na,\"Ann\nMarie\"\n", map[string][]string{"a": {"a", "Ann\nMarie"}, "b": {"b", `Bob, "the builder"`}}, "", ""},
		{"empty cells", "id,name,city\na,,\n", map[string][]string{"a": {"a", "", ""}}, "", ""},
		{"duplicate", "id,name\nb,1\na,2\nb,3\n", nil, "b", ""},
		{"ragged", "id,name\na\n", nil, "", "line 2: wrong number of fields"},
		{"no column", "user,name\na,b\n", nil, "", `no column "id"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parsePeopleCSV(tt.src, "id")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			dup, _, ok := c.index()
			if tt.dup != "" {
				if ok || dup != tt.dup {
					t.Fatalf("duplicate %q, %v; want %q", dup, ok, tt.dup)
				}
				return
			}
			if !ok {
				t.Fatalf("duplicate %q", dup)
			}
			for id, cells := range tt.want {
				row, found := c.find(id)
				if !found {
					t.Fatalf("%s not found", id)
				}
				for col, want := range cells {
					if got := c.cell(row, col); got != want {
						t.Errorf("%s column %d = %q, want %q", id, col, got, want)
					}
				}
			}
			if _, found := c.find("zz"); found {
				t.Error("found an id the file lacks")
			}
		})
	}
}
