package command

import "github.com/spf13/pflag"

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
