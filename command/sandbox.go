package command

import "context"

// Placeholder until the owning work lands; replaced wholesale.
func runSandbox(_ context.Context, m *Meta, _ []string) int {
	return m.Errorf("%s is not built yet", "sandbox")
}
