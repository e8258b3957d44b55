package views

import (
	"fmt"

	"pushform/plandoc"
	"pushform/planner"
	"pushform/state"
	"pushform/termtext"
)

// Every plan and apply names the service it is for, in every format, so
// a run against the sandbox is never taken for one against real devices
// (and the reverse). The plan carries the service (planner.Plan.Service);
// a plan made by an earlier pushform names none, and shows none.

// ServiceName names a service for people: its base URL, or "embedded
// sandbox (sandbox.hcl)", control characters shown.
func ServiceName(s *state.Service) string { return termtext.Clean(s.String()) }

// serviceLine is the first line of a human plan: "Service: NAME,
// environment ENV"; "" when the plan names no service.
func serviceLine(p *planner.Plan) string {
	if p.Service == nil {
		return ""
	}
	return fmt.Sprintf("Service: %s, environment %s", ServiceName(p.Service), termtext.Clean(p.Environment))
}

// ServiceWarning warns that a production configuration runs against the
// embedded sandbox: see plandoc.ServiceWarning.
func ServiceWarning(s *state.Service, environment string) string {
	return plandoc.ServiceWarning(s, environment)
}

// planWarnings are the plan's warnings, the service's first.
func planWarnings(p *planner.Plan) []string { return plandoc.Warnings(p) }

// mdService names a service in markdown: the base URL as code, or
// "embedded sandbox (`sandbox.hcl`)".
func mdService(s *state.Service) string {
	if s.Simulated() {
		return "embedded sandbox (" + mdCode(s.Sandbox) + ")"
	}
	return mdCode(s.URL)
}

// service says, under the apply summary, which service the run sent
// through, and warns when production ran against the sandbox.
func (v *ApplyHuman) service(p *planner.Plan) {
	if p.Service == nil {
		return
	}
	fmt.Fprintf(v.w, "  Sent through %s.\n", ServiceName(p.Service))
	if w := ServiceWarning(p.Service, p.Environment); w != "" {
		fmt.Fprintf(v.w, "Warning: %s.\n", w)
	}
}

// WithService names the service of the run: a "service" line at once,
// after the version line ({"type":"service","service":{"kind","url"},
// "environment","warnings"}), and the service in every summary. A run
// that names none (nil) writes neither.
func (v *ApplyJSON) WithService(s *state.Service, environment string) *ApplyJSON {
	if s == nil {
		return v
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.service = plandoc.ServiceOf(s)
	warnings := []string{}
	if w := ServiceWarning(s, environment); w != "" {
		warnings = append(warnings, w)
	}
	v.enc.Encode(struct {
		Type        string           `json:"type"`
		Service     *plandoc.Service `json:"service"`
		Environment string           `json:"environment"`
		Warnings    []string         `json:"warnings"`
	}{"service", v.service, environment, warnings})
	v.flushLocked()
	return v
}
