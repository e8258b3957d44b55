package command

import (
	"github.com/spf13/pflag"

	"pushform/views"
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

// format is the output format the flags ask for.
func (f *jsonFlags) format() views.Format { return jsonFormat(f.enabled()) }

// jsonFormat is JSON when asJSON is set, human otherwise.
func jsonFormat(asJSON bool) views.Format {
	if asJSON {
		return views.JSON
	}
	return views.Human
}

// view is what the views of this run write with; indent indents JSON.
func (m *Meta) view(indent bool) *views.View {
	return &views.View{Stdout: m.Stdout, Stderr: m.Stderr, Color: m.Color(), Terminal: m.StdoutTerminal, Indent: indent}
}
