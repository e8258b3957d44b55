package views

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"pushform/planner"
	"pushform/sandbox"
	"pushform/termtext"
)

// SandboxDevice shows one sandbox device: what it received and holds
// (pushform sandbox show).
type SandboxDevice interface {
	Device(d sandbox.DeviceView) error
}

var (
	_ SandboxDevice = (*SandboxDeviceHuman)(nil)
	_ SandboxDevice = (*SandboxDeviceJSON)(nil)
)

// SandboxDeviceHuman shows a device as a table and its inbox as another.
type SandboxDeviceHuman struct{ w io.Writer }

// NewSandboxDeviceHuman returns a human device view writing to w.
func NewSandboxDeviceHuman(w io.Writer) *SandboxDeviceHuman { return &SandboxDeviceHuman{w: w} }

// Device writes the tables.
func (v *SandboxDeviceHuman) Device(d sandbox.DeviceView) error {
	var b bytes.Buffer
	writeSandboxDevice(&b, d)
	_, err := v.w.Write(b.Bytes())
	return err
}

// SandboxDeviceJSON writes a device as the sandbox serves it, with the
// format version: one line, or indented.
type SandboxDeviceJSON struct {
	w      io.Writer
	indent bool
}

// NewSandboxDeviceJSON returns a JSON device view writing to w; indent
// spreads the document over indented lines (--json-indent).
func NewSandboxDeviceJSON(w io.Writer, indent bool) *SandboxDeviceJSON {
	return &SandboxDeviceJSON{w: w, indent: indent}
}

// Device writes the document.
func (v *SandboxDeviceJSON) Device(d sandbox.DeviceView) error {
	doc := struct {
		FormatVersion string `json:"format_version"`
		sandbox.DeviceView
	}{planner.FormatVersion, d}
	enc := newEncoder(v.w, v.indent)
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("writing JSON: %w", err)
	}
	return nil
}

// writeSandboxDevice writes the device as a table, then its inbox and
// pending messages.
func writeSandboxDevice(w io.Writer, v sandbox.DeviceView) {
	var flags []string
	for _, f := range []struct {
		on      bool
		yes, no string
	}{
		{on: v.Online, yes: "online", no: "offline"},
		{on: v.PushToken, yes: "push token", no: "no push token"},
		{on: v.Permission, yes: "permission granted", no: "permission not granted"},
	} {
		if f.on {
			flags = append(flags, f.yes)
		} else {
			flags = append(flags, f.no)
		}
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	// Ids and texts come from a seed and from what was sent: escaped.
	fmt.Fprintf(tw, "Device\t%s\n", termtext.Clean(v.DeviceID))
	if v.UserID != "" {
		fmt.Fprintf(tw, "User\t%s\n", termtext.Clean(v.UserID))
	}
	if v.Environment != "" {
		fmt.Fprintf(tw, "Environment\t%s\n", termtext.Clean(v.Environment))
	}
	if v.ShellVersion != "" {
		fmt.Fprintf(tw, "Shell version\t%s\n", termtext.Clean(v.ShellVersion))
	}
	fmt.Fprintf(tw, "State\t%s\n", strings.Join(flags, ", "))
	fmt.Fprintf(tw, "Badge\t%d\n", v.Badge)
	fmt.Fprintf(tw, "Received\t%d\n", v.Received)
	tw.Flush()
	writeSandboxEntries(w, "Inbox", v.Inbox)
	if len(v.Pending) > 0 {
		writeSandboxEntries(w, "Pending until the device comes online", v.Pending)
	}
}

// writeSandboxEntries lists inbox entries, oldest first.
func writeSandboxEntries(w io.Writer, title string, es []sandbox.InboxEntry) {
	if len(es) == 0 {
		fmt.Fprintf(w, "\n%s: empty\n", title)
		return
	}
	fmt.Fprintf(w, "\n%s (%d, oldest first):\n", title, len(es))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  #\tTITLE\tBODY\tTAG\tBADGE\tOPEN TO\tREQUEST")
	dash := func(s string) string {
		if s == "" {
			return "-"
		}
		return sandboxCell(s)
	}
	for i, e := range es {
		badge := "-"
		if e.BadgeCount != nil {
			badge = strconv.FormatInt(*e.BadgeCount, 10)
		}
		title := e.Title
		if title == "" && e.Body == "" {
			title = "(badge update)"
		}
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\t%s\t%s\n", i+1, dash(title), dash(e.Body), dash(e.Tag), badge, dash(e.OpenToURL), termtext.Clean(e.RequestID))
	}
	tw.Flush()
}

// sandboxCell shortens s to one line of at most 32 characters for a
// table, control characters escaped.
func sandboxCell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) > 32 {
		return termtext.Clean(string(r[:31])) + "…"
	}
	return termtext.Clean(s)
}
