package command

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/spf13/pflag"

	"pushform/backend"
	"pushform/config"
	"pushform/operation"
	"pushform/planner"
	"pushform/pushapi"
	"pushform/state"
	"pushform/termtext"
)

// planFlags are the flags shared by plan and apply.
type planFlags struct {
	configFlags
	stateFlags
	targets      []string
	replace      []string
	refresh      bool
	now          string
	retryUnknown bool
	// maxUnknownResends: see planner.Options.MaxUnknownResends.
	maxUnknownResends int
	// allowResend is apply's --allow-resend: see planner.Options.AllowResend.
	allowResend bool
	// scheduled is apply's --scheduled: see planner.Options.Scheduled.
	scheduled bool
	// resume: see planner.Options.Resume.
	resume []string
	serviceFlags
}

// serviceFlags bound the calls to the service: --request-timeout and
// --recipients-timeout.
type serviceFlags struct {
	requestTimeout    time.Duration
	recipientsTimeout time.Duration
}

func (sf *serviceFlags) bind(fs *pflag.FlagSet) {
	fs.DurationVar(&sf.requestTimeout, "request-timeout", pushapi.DefaultTimeout, "give up on a call to the service that has not fully answered after `D`")
	fs.DurationVar(&sf.recipientsTimeout, "recipients-timeout", pushapi.DefaultRecipientsTimeout, "give up on the recipients list when all its pages have not arrived after `D`")
}

func (sf *serviceFlags) check() error {
	if sf.requestTimeout <= 0 {
		return fmt.Errorf("--request-timeout must be positive, not %s", sf.requestTimeout)
	}
	if sf.recipientsTimeout <= 0 {
		return fmt.Errorf("--recipients-timeout must be positive, not %s", sf.recipientsTimeout)
	}
	return nil
}

func (pf *planFlags) bind(fs *pflag.FlagSet) {
	pf.configFlags.bind(fs)
	fs.StringArrayVar(&pf.targets, "target", nil, "limit the plan to `ADDR` and what it contains (repeatable)")
	fs.StringArrayVar(&pf.replace, "replace", nil, "send `ADDR` again to every target (repeatable)")
	fs.StringArrayVar(&pf.resume, "resume", nil, "send the next rollout stage of `ADDR` although its failure gate halted it (repeatable)")
	fs.BoolVar(&pf.refresh, "refresh", true, "fetch the recipients list (false: use the one recorded in state)")
	fs.StringVar(&pf.now, "now", "", "plan as if it were `TIME` (RFC 3339), for send_after, send_before and frequency_cap: to rehearse the future (apply refuses a TIME in the past)")
	pf.stateFlags.bind(fs, true)
	fs.BoolVar(&pf.retryUnknown, "retry-unknown", false, "re-send untagged notifications to targets whose outcome is unknown")
	fs.IntVar(&pf.maxUnknownResends, "max-unknown-resends", planner.DefaultMaxUnknownResends, "hold back a target once `N` requests sent it without a usable answer")
	pf.serviceFlags.bind(fs)
}

// check validates the flag values that pflag cannot, and returns the time
// --now gives, or the zero time without it.
func (pf *planFlags) check() (time.Time, error) {
	if pf.maxUnknownResends < 1 {
		return time.Time{}, fmt.Errorf("--max-unknown-resends must be at least 1, not %d", pf.maxUnknownResends)
	}
	if err := pf.serviceFlags.check(); err != nil {
		return time.Time{}, err
	}
	if pf.now == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, pf.now)
	if err != nil {
		return time.Time{}, fmt.Errorf("--now must be an RFC 3339 time such as 2026-12-01T09:00:00Z, not %q", pf.now)
	}
	return t, nil
}

// stateFlags choose and lock the state: --state and --lock-timeout.
type stateFlags struct {
	file        string
	lockTimeout time.Duration
}

// bind adds --state, and --lock-timeout for commands that lock.
func (sf *stateFlags) bind(fs *pflag.FlagSet, locks bool) {
	fs.StringVar(&sf.file, "state", "", "state `FILE`, relative to the configuration directory (default pushform.state)")
	if locks {
		fs.DurationVar(&sf.lockTimeout, "lock-timeout", 0, "wait up to `DURATION` for the state lock")
	}
}

// openState opens the state backend that the configuration's backend
// block (nil: a local file) and the flags choose.
func (m *Meta) openState(ctx context.Context, sf stateFlags, be *config.Backend) (backend.State, error) {
	path := ""
	if sf.file != "" {
		path = m.path(sf.file)
	}
	return backend.OpenState(ctx, backend.StateOptions{ConfigDir: m.ConfigDir(), Path: path, Backend: be, Types: m.backends(), Getenv: m.Getenv, Secrets: m.secrets, Log: m.debugLines()})
}

// stateBackend opens the state backend for commands that do not load the
// whole configuration: only its backend block is read, so they work on a
// configuration that does not validate yet (or a directory without one).
func (m *Meta) stateBackend(ctx context.Context, sf stateFlags) (backend.State, error) {
	l := m.newLoader()
	be, diags := l.LoadBackend(m.ConfigDir())
	if diags.HasErrors() {
		if err := l.WriteDiagnostics(m.Stderr, diags, uint(m.Width), m.Color()); err != nil {
			return nil, err
		}
		return nil, errReported
	}
	return m.openState(ctx, sf, be)
}

// serviceOptions says how commands reach the service.
func (m *Meta) serviceOptions(sf serviceFlags) backend.ServiceOptions {
	return backend.ServiceOptions{Getenv: m.Getenv, RequestTimeout: sf.requestTimeout, RecipientsTimeout: sf.recipientsTimeout,
		UserAgent: "pushform/" + userAgentVersion(), Log: m.debugLog(), Secrets: m.secrets}
}

// run is what plan and apply share: the loaded configuration, the locked
// session over its state, and the time to plan at.
type run struct {
	m      *Meta
	pf     *planFlags
	loader *config.Loader
	sess   *backend.Session
	now    time.Time
	// sendAt is set when the plan may be sent at once (apply, plan
	// --out): the real clock, from which frequency caps count when --now
	// is ahead of it (see planner.Options.SendAt).
	sendAt time.Time
}

// openRun loads and validates the configuration, then locks and reads the
// state. Nothing is sent before the whole configuration validates.
func (m *Meta) openRun(ctx context.Context, pf *planFlags, operation string) (*run, error) {
	now, err := pf.check()
	if err != nil {
		return nil, err
	}
	if now.IsZero() {
		now = m.clock()()
	}
	r := &run{m: m, pf: pf, loader: m.newLoader(), now: now}
	if operation == "apply" {
		r.sendAt = m.clock()()
	}
	cfg, diags := m.loadConfig(r.loader, pf.configFlags, nil)
	if diags.HasErrors() {
		return nil, errReported
	}
	be, err := m.openState(ctx, pf.stateFlags, cfg.Backend)
	if err != nil {
		return nil, err
	}
	r.sess, err = backend.Open(ctx, cfg, be, backend.SessionOptions{
		Operation: operation, LockTimeout: pf.lockTimeout, Service: m.serviceOptions(pf.serviceFlags), Compact: true,
		ReadOnly: operation == "plan", // a role that may only read plans without a lock
	})
	if err != nil {
		return nil, err
	}
	m.warnStaleLock(r.sess.StaleLock)
	return r, nil
}

// plan resolves the recipients the configuration needs and makes the plan.
func (r *run) plan(ctx context.Context) (*planner.Plan, error) {
	snap, refreshed, err := r.recipients(ctx)
	if err != nil {
		return nil, err
	}
	cfg, err := r.resolve(snap)
	if err != nil {
		return nil, err
	}
	return planner.Make(planner.Input{Config: cfg, State: r.sess.State, Recipients: snap, Refreshed: refreshed}, r.planOptions())
}

func (r *run) planOptions() planner.Options {
	return planner.Options{
		Now: r.now, Targets: r.pf.targets, Replace: r.pf.replace, RetryUnknown: r.pf.retryUnknown,
		MaxUnknownResends: r.pf.maxUnknownResends, AllowResend: r.pf.allowResend, SendAt: r.sendAt,
		Resume: r.pf.resume, Scheduled: r.pf.scheduled,
	}
}

// resolve completes the configuration with the recipients list snap (nil:
// none fetched), printing the errors that only the list reveals.
func (r *run) resolve(snap *state.Snapshot) (*config.Config, error) {
	cfg := r.sess.Config
	if snap == nil || len(cfg.DataSources) == 0 {
		return cfg, nil
	}
	byName := make(map[string][]string, len(cfg.DataSources))
	for _, name := range cfg.DataSources {
		byName[name] = snap.UserIDs // the endpoint takes no parameters
	}
	// Resolve evaluates only what reads the recipients and returns only
	// new diagnostics; as before, print the errors among them.
	resolved, diags := r.loader.Resolve(cfg, byName)
	if diags.HasErrors() {
		var errs hcl.Diagnostics
		for _, d := range diags {
			if d.Severity == hcl.DiagError {
				errs = append(errs, d)
			}
		}
		if err := r.loader.WriteDiagnostics(r.m.Stderr, errs, uint(r.m.Width), r.m.Color()); err != nil {
			return nil, err
		}
		return nil, errReported
	}
	return resolved, nil
}

// stream returns a planner.Stream when the plan can be made while the
// recipients list arrives (see planner.NewStream), nil when the list must
// be whole first: also with --refresh=false (there is nothing to fetch),
// and when a block reads the list other than as a bare reference.
func (r *run) stream() *planner.Stream {
	// A scheduled plan leaves out what awaits review: it needs the whole
	// plan before sending.
	if !r.pf.refresh || r.pf.scheduled || !r.loader.ResolvesByReference(r.sess.Config) {
		return nil
	}
	return planner.NewStream(r.sess.Config, r.sess.State, r.planOptions())
}

// fetchInto streams the recipients list into s and finishes its plan: the
// list is also gathered whole (the plan and the state record it). A
// failure stops the stream.
func (r *run) fetchInto(ctx context.Context, s *planner.Stream) {
	svc, err := r.sess.Service()
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
	ids := make([]string, 0, total)
	for _, c := range chunks {
		ids = append(ids, c...)
	}
	snap := &state.Snapshot{FetchedAt: r.m.clock()().UTC(), UserIDs: ids} // fetched at the real time, whatever --now says
	cfg, err := r.resolve(snap)
	if err != nil {
		s.Fail(err)
		return
	}
	s.Finish(cfg, snap)
}

// recipients returns the snapshot to plan with: fetched when the
// configuration uses a recipients data source or a recorded skip might be
// reachable again, or the state's last one with --refresh=false.
func (r *run) recipients(ctx context.Context) (*state.Snapshot, bool, error) {
	usesData := false
	for _, m := range r.sess.Config.Messages {
		if m.Targets.Unknown || m.Targets.Recipients != "" {
			usesData = true
			break
		}
	}
	st := r.sess.State
	if !usesData && !hasSkippedUsers(st) {
		return nil, false, nil
	}
	if !r.pf.refresh {
		if st == nil || st.Recipients == nil {
			if usesData {
				return nil, false, errors.New("--refresh=false: the state holds no recipients list yet; run once with --refresh")
			}
			return nil, false, nil
		}
		return st.Recipients, false, nil
	}
	svc, err := r.sess.Service()
	if err != nil {
		if mk := (*backend.MissingKeyError)(nil); errors.As(err, &mk) && st != nil && st.Recipients != nil {
			err = fmt.Errorf("%w (the recipients list is fetched with it; --refresh=false plans from the list the state recorded at %s, with no key)",
				err, st.Recipients.FetchedAt.UTC().Format(time.RFC3339))
		}
		return nil, false, err
	}
	ids, err := svc.Recipients(ctx)
	if err != nil {
		return nil, false, err
	}
	return &state.Snapshot{FetchedAt: r.m.clock()().UTC(), UserIDs: ids}, true, nil
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

// errReported means the error was already printed (as diagnostics).
var errReported = operation.ErrReported

// warnStaleLock reports the lock info a holder that ended without unlocking
// left behind, once this run holds the lock. The lock died with that
// holder, so the run goes on: the warning says who it was, and that its
// journal is read back.
func (m *Meta) warnStaleLock(info *state.LockInfo) {
	if info == nil {
		return
	}
	fmt.Fprint(m.Stderr, termtext.Lines(fmt.Sprintf("Warning: the last holder of the state lock ended without releasing it: %s (pid %d) running %s since %s, lock id %s.\n"+
		"  It was killed or crashed; its lock died with it, so this run goes on, and what it\n"+
		"  recorded in the journal is read back. (pushform force-unlock %s clears such a record without running anything.)\n",
		info.Who, info.Pid, info.Operation, info.Created.UTC().Format(time.RFC3339), info.ID, info.ID)))
}
