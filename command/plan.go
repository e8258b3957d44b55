package command

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/spf13/pflag"

	"pushform/atomicfile"
	"pushform/config"
	"pushform/planner"
	"pushform/pushapi"
	"pushform/render"
	"pushform/state"
)

// planFlags are the flags shared by plan and apply.
type planFlags struct {
	configFlags
	targets      []string
	replace      []string
	refresh      bool
	now          string
	state        string
	lockTimeout  time.Duration
	retryUnknown bool
	// requestTimeout bounds each call to the service.
	requestTimeout time.Duration
}

func (pf *planFlags) bind(fs *pflag.FlagSet) {
	pf.configFlags.bind(fs)
	fs.StringArrayVar(&pf.targets, "target", nil, "limit the plan to `ADDR` and what it contains (repeatable)")
	fs.StringArrayVar(&pf.replace, "replace", nil, "send `ADDR` again to every target (repeatable)")
	fs.BoolVar(&pf.refresh, "refresh", true, "fetch the recipients list (false: use the one recorded in state)")
	fs.StringVar(&pf.now, "now", "", "plan as if it were `TIME` (RFC 3339), for send_after")
	bindStateFlags(fs, &pf.state, &pf.lockTimeout)
	fs.BoolVar(&pf.retryUnknown, "retry-unknown", false, "re-send untagged notifications to targets whose outcome is unknown")
	fs.DurationVar(&pf.requestTimeout, "request-timeout", pushapi.DefaultTimeout, "give up on a call to the service that has not fully answered after `D`")
}

// bindStateFlags adds --state and --lock-timeout.
func bindStateFlags(fs *pflag.FlagSet, path *string, timeout *time.Duration) {
	bindStateFlag(fs, path)
	fs.DurationVar(timeout, "lock-timeout", 0, "wait up to `DURATION` for the state lock")
}

// session is one locked run over a configuration and its state: what plan
// and apply share.
type session struct {
	m      *Meta
	loader *config.Loader
	cfg    *config.Config
	mgr    *state.File
	lockID string
	st     *state.State // nil when nothing is recorded yet
	svc    *service     // opened on first need
	now    time.Time
}

// open loads and validates the configuration, then locks and reads the
// state. Nothing is sent before the whole configuration validates.
func (m *Meta) open(ctx context.Context, pf *planFlags, operation string) (*session, error) {
	s := &session{m: m, loader: config.NewLoader(), now: time.Now()}
	if pf.requestTimeout <= 0 {
		return nil, fmt.Errorf("--request-timeout must be positive, not %s", pf.requestTimeout)
	}
	m.requestTimeout = pf.requestTimeout
	if pf.now != "" {
		t, err := time.Parse(time.RFC3339, pf.now)
		if err != nil {
			return nil, fmt.Errorf("--now: %w", err)
		}
		s.now = t
	}
	cfg, diags := m.loadConfig(s.loader, pf.configFlags, nil)
	if diags.HasErrors() {
		return nil, errReported
	}
	s.cfg = cfg
	s.mgr = state.NewFile(m.statePath(pf.state))
	id, err := lockState(ctx, s.mgr, operation, pf.lockTimeout)
	if err != nil {
		return nil, err
	}
	s.lockID = id
	m.warnStaleLock(s.mgr)
	st, err := s.mgr.Read()
	if err != nil {
		s.close()
		return nil, err
	}
	s.st = st
	// Refuse a mix of environments before anything talks to the service.
	if st != nil && st.Environment != "" && st.Environment != cfg.Service.Environment {
		s.close()
		return nil, fmt.Errorf("the state %s belongs to environment %q but the configuration declares %q: use one state file per environment (--state)",
			s.mgr.Path(), st.Environment, cfg.Service.Environment)
	}
	return s, nil
}

// errReported means the error was already printed (as diagnostics).
var errReported = errors.New("reported")

// close releases the service and the lock.
func (s *session) close() error {
	var errs []error
	if s.svc != nil {
		errs = append(errs, s.svc.close())
		s.svc = nil
	}
	if s.lockID != "" {
		errs = append(errs, s.mgr.Unlock(s.lockID))
		s.lockID = ""
	}
	return errors.Join(errs...)
}

// service connects on first use.
func (s *session) service() (*service, error) {
	if s.svc == nil {
		svc, err := s.m.connect(s.cfg, s.mgr.Path())
		if err != nil {
			return nil, err
		}
		s.svc = svc
	}
	return s.svc, nil
}

// plan resolves the recipients the configuration needs and makes the plan.
func (s *session) plan(ctx context.Context, pf *planFlags) (*planner.Plan, error) {
	snap, refreshed, err := s.recipients(ctx, pf.refresh)
	if err != nil {
		return nil, err
	}
	cfg := s.cfg
	if snap != nil && len(cfg.DataSources) > 0 {
		byName := make(map[string][]string, len(cfg.DataSources))
		for _, name := range cfg.DataSources {
			byName[name] = snap.UserIDs // the endpoint takes no parameters
		}
		// Resolve evaluates only what reads the recipients and returns only
		// new diagnostics; as before, print the errors among them.
		resolved, diags := s.loader.Resolve(cfg, byName)
		if diags.HasErrors() {
			var errs hcl.Diagnostics
			for _, d := range diags {
				if d.Severity == hcl.DiagError {
					errs = append(errs, d)
				}
			}
			if err := s.loader.WriteDiagnostics(s.m.Stderr, errs, 0, s.m.Color()); err != nil {
				return nil, err
			}
			return nil, errReported
		}
		cfg = resolved
	}
	return planner.Make(planner.Input{Config: cfg, State: s.st, Recipients: snap, Refreshed: refreshed}, planner.Options{
		Now: s.now, Targets: pf.targets, Replace: pf.replace, RetryUnknown: pf.retryUnknown,
	})
}

// recipients returns the snapshot to plan with: fetched when the
// configuration uses a recipients data source or a recorded skip might be
// reachable again, or the state's last one with --refresh=false.
func (s *session) recipients(ctx context.Context, refresh bool) (*state.Snapshot, bool, error) {
	usesData := false
	for _, m := range s.cfg.Messages {
		if m.Targets.Unknown || m.Targets.Recipients != "" {
			usesData = true
			break
		}
	}
	if !usesData && !s.hasSkippedUsers() {
		return nil, false, nil
	}
	if !refresh {
		if s.st == nil || s.st.Recipients == nil {
			if usesData {
				return nil, false, errors.New("--refresh=false: the state holds no recipients list yet; run once with --refresh")
			}
			return nil, false, nil
		}
		return s.st.Recipients, false, nil
	}
	svc, err := s.service()
	if err != nil {
		return nil, false, err
	}
	ids, err := fetchRecipients(ctx, svc)
	if err != nil {
		return nil, false, err
	}
	return &state.Snapshot{FetchedAt: s.now.UTC(), UserIDs: ids}, true, nil
}

func (s *session) hasSkippedUsers() bool {
	if s.st == nil {
		return false
	}
	for _, m := range s.st.Messages {
		if m.TargetKind != string(config.TargetUsers) {
			continue
		}
		for _, t := range m.Targets {
			if t.Outcome == state.Skipped {
				return true
			}
		}
	}
	return false
}

func runPlan(ctx context.Context, m *Meta, args []string) int {
	var pf planFlags
	var out string
	var asJSON, asMarkdown, detailed bool
	fs := m.FlagSet("plan")
	pf.bind(fs)
	fs.StringVar(&out, "out", "", "save the plan to `FILE` for apply")
	fs.BoolVar(&asJSON, "json", false, "print the plan as JSON")
	fs.BoolVar(&asMarkdown, "markdown", false, "print the plan as markdown for a pull-request comment")
	fs.BoolVar(&detailed, "detailed-exitcode", false, "exit 0 with no changes, 2 with changes, 1 on error")
	if ok, code := m.Parse(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return m.Errorf("plan takes no arguments, got %q", fs.Args())
	}
	if asJSON && asMarkdown {
		return m.Errorf("--json and --markdown cannot be combined")
	}
	s, err := m.open(ctx, &pf, "plan")
	if err != nil {
		return m.fail(err)
	}
	p, err := s.plan(ctx, &pf)
	if cerr := s.close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return m.fail(err)
	}
	if out != "" {
		if err := writePlanFile(m.path(out), p); err != nil {
			return m.fail(err)
		}
	}
	if err := m.writePlan(p, asJSON, asMarkdown); err != nil {
		return m.fail(err)
	}
	if out != "" && !asJSON && !asMarkdown {
		fmt.Fprintf(m.Stdout, "\nSaved the plan to %s. To send exactly these notifications, run:\n  pushform apply %s\n", out, out)
	}
	if detailed && p.HasChanges() {
		return ExitChanges
	}
	return ExitOK
}

// writePlan renders p to stdout in the chosen format.
func (m *Meta) writePlan(p *planner.Plan, asJSON, asMarkdown bool) error {
	switch {
	case asJSON:
		return render.PlanJSON(m.Stdout, p)
	case asMarkdown:
		return render.PlanMarkdown(m.Stdout, p, 0)
	}
	return render.PlanHuman(m.Stdout, p, m.Color())
}

// fail prints err (unless already reported) and returns ExitError.
func (m *Meta) fail(err error) int {
	if errors.Is(err, errReported) {
		return ExitError
	}
	return m.Errorf("%v", err)
}

// writePlanFile saves a plan for apply, readable by its owner only: it
// names every target.
func writePlanFile(path string, p *planner.Plan) error {
	return atomicfile.Write(path, 0o600, func(w io.Writer) error {
		return json.NewEncoder(w).Encode(p)
	})
}

// readPlanFile loads a saved plan.
func readPlanFile(path string) (*planner.Plan, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading plan: %w", err)
	}
	defer f.Close()
	var p planner.Plan
	if err := json.NewDecoder(f).Decode(&p); err != nil {
		return nil, fmt.Errorf("%s is not a pushform plan: %w", path, err)
	}
	if p.FormatVersion != planner.FormatVersion {
		return nil, fmt.Errorf("%s has plan format %q; this pushform reads %q", path, p.FormatVersion, planner.FormatVersion)
	}
	if err := p.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &p, nil
}
