package views

import (
	"fmt"
	"io"
	"strings"

	"pushform/planner"
	"pushform/termtext"
)

// Recipients shows the users who can receive a push right now.
type Recipients interface {
	Recipients(ids []string) error
}

var (
	_ Recipients = (*RecipientsHuman)(nil)
	_ Recipients = (*RecipientsJSON)(nil)
)

// RecipientsHuman shows a recipients list for people: one user id a line
// on stdout, so it pipes into other tools, and the count on stderr.
type RecipientsHuman struct {
	w, errw io.Writer
}

// NewRecipientsHuman returns a human recipients view writing the ids to
// stdout and the count to stderr.
func NewRecipientsHuman(stdout, stderr io.Writer) *RecipientsHuman {
	return &RecipientsHuman{w: stdout, errw: stderr}
}

// Recipients writes the list; ids come from the service and are escaped.
func (v *RecipientsHuman) Recipients(ids []string) error {
	var b strings.Builder
	for _, id := range ids {
		b.WriteString(termtext.Clean(id))
		b.WriteByte('\n')
	}
	if _, err := io.WriteString(v.w, b.String()); err != nil {
		return err
	}
	_, err := fmt.Fprintf(v.errw, "%s can receive a push right now.\n", plural(len(ids), "user", "users"))
	return err
}

// RecipientsJSON shows a recipients list as JSON:
// {"format_version","count","user_ids":[...]}.
type RecipientsJSON struct {
	w      io.Writer
	indent bool
}

// NewRecipientsJSON returns a JSON recipients view writing to w.
func NewRecipientsJSON(w io.Writer, indent bool) *RecipientsJSON {
	return &RecipientsJSON{w: w, indent: indent}
}

// Recipients writes the list; ids are written exactly as the service sent them.
func (v *RecipientsJSON) Recipients(ids []string) error {
	if ids == nil {
		ids = []string{}
	}
	return writeJSON(v.w, struct {
		FormatVersion string   `json:"format_version"`
		Count         int      `json:"count"`
		UserIDs       []string `json:"user_ids"`
	}{planner.FormatVersion, len(ids), ids}, v.indent)
}
