package backend

import (
	"fmt"

	"pushform/config"
	"pushform/planner"
	"pushform/state"
)

// checkService refuses a state whose deliveries went to another service
// than run's: a sandbox's deliveries reached no device, so a real service
// planned from them would never send what they stand for; a real
// service's, planned in a sandbox, would let a rehearsal pass for them. A
// state that records no service (written before format 6) is the run's to
// record (see Session.Recorder).
func checkService(name string, st *state.State, run state.Service, cfg *config.Config) error {
	if st == nil || st.Service == nil || st.Service.Same(run.Record()) {
		return nil
	}
	fresh := "start a fresh state for it: --state with a new file"
	if cfg != nil && cfg.Backend != nil {
		fresh = "start a fresh state for it: a new state_name in the backend block"
	}
	what := fmt.Sprintf("%s holds deliveries made through %s", name, st.Service)
	if st.Service.Kind == state.KindSandbox {
		what += ", which reached no real device"
	}
	keep := ""
	switch {
	case st.Service.Kind == state.KindSandbox:
		keep = "; or unset " + BaseURLVar + " to go on rehearsing in the sandbox"
	case run.Kind == state.KindSandbox:
		keep = "; or set " + BaseURLVar + " to the service's base URL to go on with the real service"
	default:
		// Two real services: a fresh state is right only for one whose
		// users never got what this state records.
		fresh = "if it is another service (other users and devices), " + fresh +
			". If it is the same service at a new address, do not: a fresh state holds no record of what was sent, and every notification would go out again to everyone it reached"
	}
	return fmt.Errorf("%s, but this run talks to %s. A state records the deliveries of one service, so nothing was sent: %s%s",
		what, run, fresh, keep)
}

// recordService makes st record run as its service, once: a new state, or
// one written before states recorded their service. It reports whether st
// had one already.
func recordService(st *state.State, run state.Service) (had bool) {
	if st.Service != nil {
		return true
	}
	st.Service = run.Record()
	return false
}

// checkPlanService refuses a saved plan made for another service than
// run's: a plan reviewed against the sandbox is not a review of what the
// real service would be sent, nor the reverse. A plan that names no
// service was made by an earlier pushform.
func checkPlanService(p *planner.Plan, run *state.Service) error {
	if p.Service == nil || run == nil || *p.Service == *run {
		return nil
	}
	return fmt.Errorf("the plan was made for %s but this run talks to %s (%s decides): make a new plan for it; nothing was sent",
		p.Service, run, BaseURLVar+" or the service block")
}

// RecordService makes a state written before states recorded their
// service record the run's, and saves it, when the run records nothing
// else (an apply with no changes): the state records the first service it
// is used with, whatever that run sends. Runs that record go through
// Recorder, which records it too.
func (s *Session) RecordService() error {
	if s.Which == nil || s.State == nil || s.State.Service != nil || s.rec != nil {
		return nil
	}
	recordService(s.State, *s.Which)
	if err := s.Persist(); err != nil {
		s.State.Service = nil
		return fmt.Errorf("recording the service in the state: %w", err)
	}
	s.RecordedService = true
	return nil
}
