package views

import (
	"fmt"
	"io"
	"testing"
)

// TestFactories checks each factory returns its format's implementation
// and refuses a format its view does not have.
func TestFactories(t *testing.T) {
	v := &View{Stdout: io.Discard, Stderr: io.Discard}
	tests := []struct {
		name string
		new  func(Format) any
		want map[Format]string // format -> implementation type
	}{
		{"plan", func(f Format) any { return NewPlan(f, v) },
			map[Format]string{Human: "*views.PlanHuman", JSON: "*views.PlanJSON", Markdown: "*views.PlanMarkdown"}},
		{"apply", func(f Format) any { return NewApply(f, v) },
			map[Format]string{Human: "*views.ApplyHuman", JSON: "*views.ApplyJSON"}},
		{"state", func(f Format) any { return NewState(f, v, 0) },
			map[Format]string{Human: "*views.StateHuman", JSON: "*views.StateJSON"}},
		{"history", func(f Format) any { return NewHistory(f, v) },
			map[Format]string{Human: "*views.HistoryHuman", JSON: "*views.HistoryJSON"}},
		{"recipients", func(f Format) any { return NewRecipients(f, v) },
			map[Format]string{Human: "*views.RecipientsHuman", JSON: "*views.RecipientsJSON"}},
		{"validate", func(f Format) any { return NewValidate(f, v) },
			map[Format]string{Human: "*views.ValidateHuman", JSON: "*views.ValidateJSON"}},
		{"version", func(f Format) any { return NewVersion(f, v) },
			map[Format]string{Human: "*views.VersionHuman", JSON: "*views.VersionJSON"}},
		{"sandbox device", func(f Format) any { return NewSandboxDevice(f, v) },
			map[Format]string{Human: "*views.SandboxDeviceHuman", JSON: "*views.SandboxDeviceJSON"}},
	}
	for _, tt := range tests {
		for _, f := range []Format{Human, JSON, Markdown, Format(99)} {
			got, panicked := func() (got string, panicked any) {
				defer func() { panicked = recover() }()
				return fmt.Sprintf("%T", tt.new(f)), nil
			}()
			want, ok := tt.want[f]
			switch {
			case ok && got != want:
				t.Errorf("%s view in %s = %s (panic %v), want %s", tt.name, f, got, panicked, want)
			case !ok && panicked == nil:
				t.Errorf("%s view in %s = %s, want a panic", tt.name, f, got)
			}
		}
	}
}
