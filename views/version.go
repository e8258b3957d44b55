package views

import (
	"fmt"
	"io"
)

// BuildInfo is what version reports: which pushform this is. Its JSON
// is the version --json document.
type BuildInfo struct {
	FormatVersion string `json:"format_version"`
	Version       string `json:"version"`
	Commit        string `json:"commit,omitempty"`
	CommitTime    string `json:"commit_time,omitempty"`
	Modified      bool   `json:"modified"`
	GoVersion     string `json:"go_version"`
	Platform      string `json:"platform"`
}

// Version shows which pushform this is.
type Version interface {
	Version(info BuildInfo) error
}

var (
	_ Version = (*VersionHuman)(nil)
	_ Version = (*VersionJSON)(nil)
)

// VersionHuman shows the version in a few lines: version, commit, Go and
// platform.
type VersionHuman struct{ w io.Writer }

// NewVersionHuman returns a human version view writing to w.
func NewVersionHuman(w io.Writer) *VersionHuman { return &VersionHuman{w: w} }

// Version writes the lines.
func (v *VersionHuman) Version(info BuildInfo) error {
	out := fmt.Sprintf("pushform %s\n", info.Version)
	if info.Commit != "" {
		modified := ""
		if info.Modified {
			modified = ", with uncommitted changes"
		}
		out += fmt.Sprintf("commit %s (%s%s)\n", info.Commit, info.CommitTime, modified)
	}
	out += fmt.Sprintf("%s on %s\n", info.GoVersion, info.Platform)
	_, err := io.WriteString(v.w, out)
	return err
}

// VersionJSON writes the version as one JSON object: one line, or
// indented.
type VersionJSON struct {
	w      io.Writer
	indent bool
}

// NewVersionJSON returns a JSON version view writing to w; indent spreads
// the document over indented lines (--json-indent).
func NewVersionJSON(w io.Writer, indent bool) *VersionJSON { return &VersionJSON{w: w, indent: indent} }

// Version writes the document.
func (v *VersionJSON) Version(info BuildInfo) error {
	enc := newEncoder(v.w, v.indent)
	return enc.Encode(info)
}
