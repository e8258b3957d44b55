package operation

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/hcl/v2"

	"pushform/backend"
	"pushform/config"
	"pushform/planner"
	"pushform/state"
)

// Run is an open operation: the loaded configuration and the locked
// session over its state. Close it.
type Run struct {
	// Session holds the configuration, the state as read and the lock.
	Session *backend.Session
	// Loader loaded the configuration and resolves what reads the
	// recipients list.
	Loader *config.Loader
	// Clock is the run's one time, chosen from the service it talks to.
	Clock *Clock
	// Now is the time the plan is made at: Clock.At.
	Now time.Time
	o   Options
	// unrecorded is set when the state read records no service (an
	// earlier pushform wrote it): the first apply records this run's.
	unrecorded bool
}

// Open loads and validates the configuration, names the service it talks
// to, then locks and reads the state and chooses the run's clock (and
// warns of a stale lock through Options.Warnings). Nothing
// is sent before the whole configuration validates, nor when the state or
// the time asked for belongs to another service.
func Open(ctx context.Context, o Options) (*Run, error) {
	if o.Getenv == nil {
		o.Getenv = func(string) string { return "" }
	}
	r := &Run{Loader: NewLoader(o.Backends), o: o}
	copts := o.Config
	copts.Recipients = nil // not fetched yet
	cfg, diags := LoadConfig(r.Loader, o.Dir, copts, o.backends(), o.Getenv, o.Secrets)
	if len(diags) > 0 {
		if err := o.diagnostics(r.Loader, diags); err != nil {
			o.report(err)
		}
	}
	if diags.HasErrors() {
		return nil, ErrReported
	}
	which, err := backend.Which(cfg, o.Service)
	if err != nil {
		return nil, err
	}
	be := o.StateBackend
	if be == nil {
		so := o.State
		so.ConfigDir, so.Backend, so.Types = o.Dir, cfg.Backend, o.backends()
		if be, err = backend.OpenState(ctx, so); err != nil {
			return nil, err
		}
	}
	svcOpts := o.Service
	if o.Operation != "plan" {
		// The embedded sandbox's clock moves on with the run that sends.
		svcOpts.SandboxClock = func() time.Time { return r.Clock.Now() }
	}
	r.Session, err = backend.Open(ctx, cfg, be, backend.SessionOptions{
		Operation: o.Operation, LockTimeout: o.LockTimeout, Service: svcOpts, Compact: true, Which: &which,
		ReadOnly: o.Operation == "plan", // a role that may only read plans without a lock
	})
	if err != nil {
		return nil, err
	}
	if err := r.chooseClock(which); err != nil {
		return nil, errors.Join(err, r.Close())
	}
	r.unrecorded = r.Session.State != nil && r.Session.State.Service == nil
	o.Warnings.StaleLock(r.Session.StaleLock)
	return r, nil
}

// chooseClock sets the run's clock (see Clock).
func (r *Run) chooseClock(which state.Service) error {
	in := clockInput{operation: r.o.Operation, service: which, now: r.o.Now, savedAt: r.o.SavedAt,
		lastDelivery: r.Session.State.LastDelivery, real: r.o.clock()}
	if which.Simulated() {
		t, err := r.Session.SandboxClock()
		if err != nil {
			return err
		}
		in.simulated = t
	}
	c, err := chooseClock(in)
	if err != nil {
		return err
	}
	r.Clock, r.Now = c, c.At
	return nil
}

// Close releases the state lock and the backend.
func (r *Run) Close() error {
	return r.Session.Close()
}

// Plan resolves the recipients the configuration needs and makes the
// plan.
func (r *Run) Plan(ctx context.Context) (*planner.Plan, error) {
	snap, refreshed, err := r.recipients(ctx)
	if err != nil {
		return nil, err
	}
	cfg, err := r.resolve(snap)
	if err != nil {
		return nil, err
	}
	p, err := planner.Make(planner.Input{Config: cfg, State: r.Session.State, Recipients: snap, Refreshed: refreshed}, r.planOptions())
	if err != nil {
		return nil, err
	}
	r.name(p)
	p.Summary.Reach = planner.CountReach(p, r.Session.State)
	planner.MarkTestSends(p, cfg, r.Session.State)
	return p, nil
}

// name records in p the service it was made for: views name it, and apply
// refuses the plan with another.
func (r *Run) name(p *planner.Plan) {
	p.Service = r.Session.Which
	// A state from before states recorded their service takes the
	// service of its first apply: the reviewer is told which, before.
	if r.unrecorded && p.Service != nil && !r.o.Planner.Scheduled {
		p.Warnings = append(p.Warnings, fmt.Sprintf("%s records no service (an earlier pushform wrote it): applying this plan records %s as the service "+
			"its deliveries went to, and refuses any other from then on. If they went elsewhere (a rehearsal in a sandbox, or the real service), "+
			"start a fresh state instead: they would count as deliveries through this one", backend.Name(r.Session.Backend), p.Service.Record()))
	}
}

func (r *Run) planOptions() planner.Options {
	po := r.o.Planner
	po.Now = r.Now
	return po
}

// resolve completes the configuration with the recipients list snap (nil:
// none fetched), showing the errors that only the list reveals.
func (r *Run) resolve(snap *state.Snapshot) (*config.Config, error) {
	cfg := r.Session.Config
	if snap == nil || len(cfg.DataSources) == 0 {
		return cfg, nil
	}
	byName := recipientsByName(cfg, snap)
	// Resolve evaluates only what reads the recipients and returns only
	// new diagnostics; as before, show the errors among them.
	resolved, diags := r.Loader.Resolve(cfg, byName)
	if diags.HasErrors() {
		var errs hcl.Diagnostics
		for _, d := range diags {
			if d.Severity == hcl.DiagError {
				errs = append(errs, d)
			}
		}
		if err := r.o.diagnostics(r.Loader, errs); err != nil {
			return nil, err
		}
		return nil, ErrReported
	}
	return resolved, nil
}

// recipientsByName gives each data source of cfg the list of snap: the
// endpoint takes no parameters. Nil without a snapshot.
func recipientsByName(cfg *config.Config, snap *state.Snapshot) map[string][]string {
	if snap == nil {
		return nil
	}
	byName := make(map[string][]string, len(cfg.DataSources))
	for _, name := range cfg.DataSources {
		byName[name] = snap.UserIDs
	}
	return byName
}

// Stream returns a planner.Stream when the plan can be made while the
// recipients list arrives (see planner.NewStream), nil when the list must
// be whole first: also with Refresh false (there is nothing to fetch),
// and when a block reads the list other than as a bare reference.
func (r *Run) Stream() *planner.Stream {
	// A scheduled plan leaves out what awaits review, policies check the
	// plan, and require_test_send its changes: all need the whole plan
	// before sending.
	cfg := r.Session.Config
	if !r.o.Refresh || r.o.Planner.Scheduled || len(cfg.Policies) > 0 || cfg.RequiresAnyTestSend() || !r.Loader.ResolvesByReference(cfg) {
		return nil
	}
	return planner.NewStream(r.Session.Config, r.Session.State, r.planOptions())
}

// fetchInto streams the recipients list into s and finishes its plan: the
// list is also gathered whole (the plan and the state record it). A
// failure stops the stream.
func (r *Run) fetchInto(ctx context.Context, s *planner.Stream) {
	svc, err := r.Session.Service()
	if err != nil {
		s.Fail(err)
		return
	}
	var chunks [][]string
	total := 0
	err = svc.RecipientsFunc(ctx, func(ids []string) error {
		s.Add(ids)
		chunks = append(chunks, ids)
		total += len(ids)
		return nil
	})
	if err != nil {
		s.Fail(err)
		return
	}
	snap := &state.Snapshot{FetchedAt: r.Clock.Now().UTC(), UserIDs: backend.JoinIDs(chunks, total)}
	cfg, err := r.resolve(snap)
	if err != nil {
		s.Fail(err)
		return
	}
	s.Finish(cfg, snap)
}

// recipients returns the snapshot to plan with: fetched when the
// configuration uses a recipients data source or a recorded skip might be
// reachable again, or the state's last one without Refresh.
func (r *Run) recipients(ctx context.Context) (*state.Snapshot, bool, error) {
	usesData := false
	for _, m := range r.Session.Config.Messages {
		if m.Targets.Unknown || m.Targets.Recipients != "" {
			usesData = true
			break
		}
	}
	st := r.Session.State
	if !usesData && !hasSkippedUsers(st) {
		return nil, false, nil
	}
	if !r.o.Refresh {
		if st == nil || st.Recipients == nil {
			if usesData {
				return nil, false, errors.New("--refresh=false: the state holds no recipients list yet; run once with --refresh")
			}
			return nil, false, nil
		}
		return st.Recipients, false, nil
	}
	svc, err := r.Session.Service()
	if err != nil {
		if mk := (*backend.MissingKeyError)(nil); errors.As(err, &mk) && st != nil && st.Recipients != nil {
			err = fmt.Errorf("%w (the recipients list is fetched with it; --refresh=false plans from the list the state recorded at %s, with no key)",
				err, st.Recipients.FetchedAt.UTC().Format(time.RFC3339))
		}
		return nil, false, err
	}
	r.Session.Config.ReadDataAhead() // the people's data, while the list arrives
	ids, err := svc.Recipients(ctx)
	if err != nil {
		return nil, false, err
	}
	return &state.Snapshot{FetchedAt: r.Clock.Now().UTC(), UserIDs: ids}, true, nil
}

// hasSkippedUsers reports whether st records a user skipped as
// no_active_device, who may be reachable again.
func hasSkippedUsers(st *state.State) bool {
	if st == nil {
		return false
	}
	for _, m := range st.Messages {
		if m.TargetKind != config.TargetUsers {
			continue
		}
		var last *state.Target
		for _, t := range m.AllTargets() {
			if t != last && t.Outcome == state.Skipped { // records are shared: check each once
				return true
			}
			last = t
		}
	}
	return false
}
