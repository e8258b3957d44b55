package command

import (
	"context"
	"errors"
	"runtime"
	"runtime/debug"
	"strings"

	"pushform/views"
)

// Version overrides the version Go records from the module and VCS when set
// at build time with -ldflags "-X pushform/command.Version=...".
var Version = "dev"

// readBuildInfo reads the version Go stamps into the binary: the module
// version (a tag, a pseudo-version such as v0.0.0-20261122...-ba9e90e1d2c3,
// or "(devel)") and the vcs.* settings of the checkout it was built in.
func readBuildInfo() views.BuildInfo {
	info := views.BuildInfo{FormatVersion: "1", Version: Version, GoVersion: runtime.Version(), Platform: runtime.GOOS + "_" + runtime.GOARCH}
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

// versionHelp is the help of version; its flags come from the flag set it parses.
func versionHelp() helpDoc {
	return helpDoc{
		usage:    []string{"version [options]"},
		text:     "Prints the pushform version and the commit it was built from, as Go recorded them in the binary, and the Go version and platform.",
		examples: []string{"pushform version", "pushform version -json"},
	}
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
	if err := views.NewVersion(jf.format(), m.view(jf.indent)).Version(readBuildInfo()); err != nil {
		return m.fail(err)
	}
	return ExitOK
}
