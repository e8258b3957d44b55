package command

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Version overrides the version Go records from the module and VCS when set
// at build time with -ldflags "-X pushform/command.Version=...".
var Version = "dev"

// buildInfo is what version reports: which pushform this is.
type buildInfo struct {
	FormatVersion string `json:"format_version"`
	Version       string `json:"version"`
	Commit        string `json:"commit,omitempty"`
	CommitTime    string `json:"commit_time,omitempty"`
	Modified      bool   `json:"modified"`
	GoVersion     string `json:"go_version"`
	Platform      string `json:"platform"`
}

// readBuildInfo reads the version Go stamps into the binary: the module
// version (a tag, a pseudo-version such as v0.0.0-20261122...-ba9e90e1d2c3,
// or "(devel)") and the vcs.* settings of the checkout it was built in.
func readBuildInfo() buildInfo {
	info := buildInfo{FormatVersion: "1", Version: Version, GoVersion: runtime.Version(), Platform: runtime.GOOS + "_" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return info
	}
	if info.Version == "dev" && bi.Main.Version != "" {
		info.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Commit = s.Value
		case "vcs.time":
			info.CommitTime = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		}
	}
	return info
}

// userAgentVersion is the version sent in the User-Agent header.
func userAgentVersion() string {
	v := readBuildInfo().Version
	if strings.HasPrefix(v, "(") { // "(devel)": parentheses are not allowed in a product token
		return "dev"
	}
	return v
}

func runVersion(_ context.Context, m *Meta, args []string) int {
	fs := m.FlagSet("version")
	var jf jsonFlags
	jf.bind(fs, "the version")
	if err := m.parse(fs, args); err != nil {
		return m.usageError("version", err)
	}
	if fs.NArg() > 0 {
		return m.usageError("version", errors.New("version takes no arguments"))
	}
	info := readBuildInfo()
	if jf.enabled() {
		if err := jf.write(m.Stdout, info); err != nil {
			return m.fail(err)
		}
		return ExitOK
	}
	fmt.Fprintf(m.Stdout, "pushform %s\n", info.Version)
	if info.Commit != "" {
		modified := ""
		if info.Modified {
			modified = ", with uncommitted changes"
		}
		fmt.Fprintf(m.Stdout, "commit %s (%s%s)\n", info.Commit, info.CommitTime, modified)
	}
	fmt.Fprintf(m.Stdout, "%s on %s\n", info.GoVersion, info.Platform)
	return ExitOK
}
