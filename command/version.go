package command

import (
	"context"
	"fmt"
	"runtime/debug"
)

// Version is set at build time with -ldflags "-X pushform/command.Version=...".
var Version = "dev"

func runVersion(_ context.Context, m *Meta, _ []string) int {
	v := Version
	if bi, ok := debug.ReadBuildInfo(); ok && v == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	fmt.Fprintf(m.Stdout, "pushform %s\n", v)
	return ExitOK
}
