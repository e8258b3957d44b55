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
	"pushform/policy"
	"pushform/pushapi"
	"pushform/views"
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
	// savedAt is set by apply to the time a saved plan made with --now
	// was made for (see operation.Options.SavedAt).
	savedAt time.Time
	serviceFlags
	// configErrors, when set, also shows the diagnostics of a
	// configuration that does not load (a JSON view: see showDiagnostics).
	configErrors views.ConfigErrors
	policyFlags
}

// serviceFlags bound the calls to the service: --request-timeout and
// --recipients-timeout.
type serviceFlags struct {
	requestTimeout    time.Duration
	recipientsTimeout time.Duration
	// Set by apply from its retry flags, which bound the recipients
	// list's retries too; 0 means the client's defaults.
	recipientsMaxAttempts int
	maxRetryAfter         time.Duration
	// rateLimit is the run's budget for waiting out 429s, shared by the
	// recipients list and the sends (set by apply); nil: the client's own.
	rateLimit *pushapi.RateLimit
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
	fs.StringVar(&pf.now, "now", "", "plan as if it were `TIME` (RFC 3339), to rehearse a later run; apply takes it only with the embedded sandbox, whose clock never goes back")
	pf.stateFlags.bind(fs, true)
	fs.BoolVar(&pf.retryUnknown, "retry-unknown", false, "re-send untagged notifications to targets whose outcome is unknown")
	fs.IntVar(&pf.maxUnknownResends, "max-unknown-resends", planner.DefaultMaxUnknownResends, "hold back a target once `N` requests sent it without a usable answer")
	pf.serviceFlags.bind(fs)
	pf.policyFlags.bindDirs(fs)
	pf.policyFlags.bindOverrides(fs)
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
	if err := pf.policyFlags.check(); err != nil {
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

// stateOptions are the state options the flags and the command's
// environment give; the configuration's backend block is the caller's.
func (m *Meta) stateOptions(sf stateFlags) backend.StateOptions {
	path := ""
	if sf.file != "" {
		path = m.path(sf.file)
	}
	return backend.StateOptions{ConfigDir: m.ConfigDir(), Path: path, Types: m.backends(), Getenv: m.Getenv, Secrets: m.secrets, Log: m.debugLines()}
}

// stateOperation are the options of an operation on the state (state
// list, rm, ..., history, force-unlock) named op, as the flags give them.
func (m *Meta) stateOperation(op string, sf stateFlags) operation.Options {
	return operation.Options{
		Operation: op, Dir: m.ConfigDir(), Backends: m.backends(), State: m.stateOptions(sf), LockTimeout: sf.lockTimeout,
		Getenv: m.Getenv, Secrets: m.secrets, Clock: m.clock(),
		Diagnostics: m.writeDiagnostics, Report: func(err error) { m.Errorf("%v", err) }, Warnings: m.warnings(),
	}
}

// warnings shows what operations warn about as they go, on stderr.
func (m *Meta) warnings() *views.Warnings {
	return views.NewWarnings(m.Stderr)
}

// serviceOptions says how commands reach the service.
func (m *Meta) serviceOptions(sf serviceFlags) backend.ServiceOptions {
	return backend.ServiceOptions{Getenv: m.Getenv, LookupEnv: m.lookupEnv, RequestTimeout: sf.requestTimeout, RecipientsTimeout: sf.recipientsTimeout,
		RecipientsMaxAttempts: sf.recipientsMaxAttempts, MaxRetryAfter: sf.maxRetryAfter, RateLimit: sf.rateLimit,
		UserAgent: "pushform/" + userAgentVersion(), Log: m.debugLog(), Secrets: m.secrets}
}

// openRun loads and validates the configuration, then locks and reads the
// state (see operation.Open), with the options the flags give.
func (m *Meta) openRun(ctx context.Context, pf *planFlags, op string) (*operation.Run, error) {
	now, err := pf.check()
	if err != nil {
		return nil, err
	}
	copts := m.configOptions(pf.configFlags, nil)
	copts.PolicyDirs = m.policyDirs(pf.policyFlags)
	r, err := operation.Open(ctx, operation.Options{
		Operation: op, Dir: m.ConfigDir(), Config: copts, Backends: m.backends(),
		State:       m.stateOptions(pf.stateFlags),
		LockTimeout: pf.lockTimeout, Service: m.serviceOptions(pf.serviceFlags),
		Getenv: m.Getenv, Secrets: m.secrets, Clock: m.clock(), Now: now, SavedAt: pf.savedAt, Refresh: pf.refresh,
		Planner: planner.Options{
			Targets: pf.targets, Replace: pf.replace, RetryUnknown: pf.retryUnknown,
			MaxUnknownResends: pf.maxUnknownResends, AllowResend: pf.allowResend,
			Resume: pf.resume, Scheduled: pf.scheduled,
		},
		Diagnostics: m.showDiagnostics(pf.configErrors),
		Report:      func(err error) { m.Errorf("%v", err) },
		Warnings:    m.warnings(),
	})
	if err != nil {
		return nil, err
	}
	// An override that names no deny policy is refused before planning,
	// and a reason that holds a secret the state would keep.
	if err := policy.CheckOverrides(r.Session.Config.Policies, pf.overrideList()); err != nil {
		m.closeRun(r)
		return nil, err
	}
	if pf.reason != "" && m.secrets.Contains(pf.reason) {
		m.closeRun(r)
		return nil, errors.New("--override-reason holds a secret (the API key or a database password), and the state keeps the reason in its history: write the reason without it; nothing was sent")
	}
	return r, nil
}

// closeRun closes r (unlocking the state) once a command is done with it,
// reporting a failure on stderr: the command's outcome stands.
func (m *Meta) closeRun(r *operation.Run) {
	if err := r.Close(); err != nil {
		m.Errorf("%v", err)
	}
}

// writeDiagnostics prints diags to stderr with the sources l loaded.
func (m *Meta) writeDiagnostics(l *config.Loader, diags hcl.Diagnostics) error {
	return l.WriteDiagnostics(m.Stderr, diags, uint(m.Width), m.Color())
}

// showDiagnostics returns how a run shows the configuration's
// diagnostics: on stderr with their source lines, and, when the
// configuration has errors, through ce as well (nil: none), so that
// plan --json and apply --json say on stdout why there is no plan.
func (m *Meta) showDiagnostics(ce views.ConfigErrors) func(*config.Loader, hcl.Diagnostics) error {
	if ce == nil {
		return m.writeDiagnostics
	}
	return func(l *config.Loader, diags hcl.Diagnostics) error {
		if diags.HasErrors() {
			if err := ce.ConfigErrors(diags); err != nil {
				return err
			}
		}
		return m.writeDiagnostics(l, diags)
	}
}

// errReported means the error was already printed (as diagnostics).
var errReported = operation.ErrReported
