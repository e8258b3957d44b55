package command

import (
	"encoding/json"
	"io"

	"github.com/spf13/pflag"
)

// jsonFlags are --json and --json-indent of every command that prints
// data: JSON documents are one compact line (as Terraform's show -json),
// and indented for people with --json-indent.
type jsonFlags struct {
	json, indent bool
}

// bind adds the flags; what names what --json prints.
func (f *jsonFlags) bind(fs *pflag.FlagSet, what string) {
	fs.BoolVar(&f.json, "json", false, "print "+what+" as JSON (one line)")
	fs.BoolVar(&f.indent, "json-indent", false, "print "+what+" as indented JSON (implies --json)")
}

// enabled reports whether JSON output was asked for.
func (f *jsonFlags) enabled() bool { return f.json || f.indent }

// write prints v as one JSON document: one line, or indented with
// --json-indent.
func (f *jsonFlags) write(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	if f.indent {
		enc.SetIndent("", "  ")
	}
	return enc.Encode(v)
}
