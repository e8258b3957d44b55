package views

import (
	"fmt"
	"io"
	"time"

	"pushform/plandoc"
	"pushform/state"
)

// Format is the kind of output a command prints. Commands turn their
// flags into a Format once and hand it to a view factory (NewPlan,
// NewApply, ...): those are the only places that choose an implementation.
type Format int

const (
	// Human is text for people: a terminal or a log.
	Human Format = iota
	// JSON is for scripts: one document (or one event per line for apply).
	JSON
	// Markdown is a pull-request comment (plans only).
	Markdown
)

// String names the format as its flag does.
func (f Format) String() string {
	switch f {
	case Human:
		return "human"
	case JSON:
		return "json"
	case Markdown:
		return "markdown"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// View is what every view writes with: the streams and the settings that
// do not depend on the format chosen.
type View struct {
	Stdout, Stderr io.Writer
	// Color enables ANSI colour in human output.
	Color bool
	// Terminal says stdout is a terminal: apply redraws a progress bar.
	Terminal bool
	// Indent indents JSON documents (--json-indent).
	Indent bool
	// Width word-wraps human warnings and notes at a terminal's width; 0:
	// one line each (logs, pipes).
	Width int
	// Markdown is where a plan comes from and what applies it, for the
	// markdown plan view.
	Markdown MarkdownContext
	// Policies are the results of the plan's policies, for the plan
	// views (the markdown view's too).
	Policies []plandoc.Policy
	// Now is the clock apply progress is measured by; nil is time.Now.
	Now func() time.Time
	// Service and Environment are the service a run talks to and the
	// configuration's environment: apply's JSON names them first.
	Service     *state.Service
	Environment string
}

func (v *View) now() func() time.Time {
	if v.Now == nil {
		return time.Now
	}
	return v.Now
}

// unsupported is the panic of a factory asked for a format its view does
// not have: the command's flag parsing should have refused it.
func unsupported(view string, f Format) string {
	return fmt.Sprintf("views: no %s view in the %s format", view, f)
}

// NewPlan returns the plan view of format f: human, JSON or markdown (the
// markdown view sized for a GitHub comment).
func NewPlan(f Format, v *View) Plan {
	switch f {
	case Human:
		return NewPlanHuman(v.Stdout, v.Color).WithWidth(v.Width).WithPolicies(v.Policies)
	case JSON:
		return NewPlanJSON(v.Stdout, v.Indent).WithPolicies(v.Policies)
	case Markdown:
		ctx := v.Markdown
		ctx.Policies = v.Policies
		return NewPlanMarkdown(v.Stdout, 0).WithContext(ctx)
	}
	panic(unsupported("plan", f))
}

// NewApply returns the apply view of format f: human or JSON lines.
func NewApply(f Format, v *View) Apply {
	switch f {
	case Human:
		return NewApplyHuman(v.Stdout, v.Stderr, v.Color, v.Terminal, v.now()).WithWidth(v.Width)
	case JSON:
		return NewApplyJSON(v.Stdout).WithService(v.Service, v.Environment)
	}
	panic(unsupported("apply", f))
}

// NewState returns the state view of format f: human or JSON. The human
// Show lists at most limit targets (every one when limit <= 0).
func NewState(f Format, v *View, limit int) State {
	switch f {
	case Human:
		return NewStateHuman(v.Stdout, limit)
	case JSON:
		return NewStateJSON(v.Stdout, v.Indent)
	}
	panic(unsupported("state", f))
}

// NewHistory returns the history view of format f: human or JSON.
func NewHistory(f Format, v *View) History {
	switch f {
	case Human:
		return NewHistoryHuman(v.Stdout)
	case JSON:
		return NewHistoryJSON(v.Stdout, v.Indent)
	}
	panic(unsupported("history", f))
}

// NewRender returns the render view of format f: human or JSON.
func NewRender(f Format, v *View) Render {
	switch f {
	case Human:
		return NewRenderHuman(v.Stdout)
	case JSON:
		return NewRenderJSON(v.Stdout, v.Indent)
	}
	panic(unsupported("render", f))
}

// NewRecipients returns the recipients view of format f: human or JSON.
func NewRecipients(f Format, v *View) Recipients {
	switch f {
	case Human:
		return NewRecipientsHuman(v.Stdout, v.Stderr)
	case JSON:
		return NewRecipientsJSON(v.Stdout, v.Indent)
	}
	panic(unsupported("recipients", f))
}

// NewValidate returns the validate view of format f: human or JSON.
func NewValidate(f Format, v *View) Validate {
	switch f {
	case Human:
		return NewValidateHuman(v.Stdout)
	case JSON:
		return NewValidateJSON(v.Stdout, v.Indent)
	}
	panic(unsupported("validate", f))
}

// NewVersion returns the version view of format f: human or JSON.
func NewVersion(f Format, v *View) Version {
	switch f {
	case Human:
		return NewVersionHuman(v.Stdout)
	case JSON:
		return NewVersionJSON(v.Stdout, v.Indent)
	}
	panic(unsupported("version", f))
}

// NewSandboxDevice returns the sandbox device view of format f: human or
// JSON.
func NewSandboxDevice(f Format, v *View) SandboxDevice {
	switch f {
	case Human:
		return NewSandboxDeviceHuman(v.Stdout)
	case JSON:
		return NewSandboxDeviceJSON(v.Stdout, v.Indent)
	}
	panic(unsupported("sandbox device", f))
}
