package plandoc

import (
	"fmt"

	"pushform/planner"
	"pushform/state"
	"pushform/termtext"
)

// Service is the service a plan was made for, in every JSON output that
// names one: {"kind": "sandbox" | "base_url", "url": the base URL, or
// null}.
type Service struct {
	Kind string  `json:"kind"`
	URL  *string `json:"url"`
}

// ServiceOf is s in its document shape; nil for none (a plan made by an
// earlier pushform).
func ServiceOf(s *state.Service) *Service {
	if s == nil {
		return nil
	}
	out := &Service{Kind: string(s.Kind)}
	if s.Kind == state.KindBaseURL {
		u := s.URL
		out.URL = &u
	}
	return out
}

// ServiceWarning warns that a production configuration runs against the
// embedded sandbox (a rehearsal of production): nothing it sends reaches
// a device. "" otherwise. It is the first of a plan's warnings.
func ServiceWarning(s *state.Service, environment string) string {
	if s == nil || !s.Simulated() || environment != "production" {
		return ""
	}
	return fmt.Sprintf(`environment "production" runs against the %s: nothing reaches a device; `+
		`its deliveries go to simulated devices only. Set %s (or base_url) to reach the real service`, termtext.Clean(s.String()), "PUSHFORM_BASE_URL")
}

// Warnings are p's warnings as every view shows them: the service's
// first.
func Warnings(p *planner.Plan) []string {
	w := ServiceWarning(p.Service, p.Environment)
	if w == "" {
		return list(p.Warnings)
	}
	return append([]string{w}, p.Warnings...)
}
