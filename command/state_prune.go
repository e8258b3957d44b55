package command

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"pushform/backend"
	"pushform/config"
	"pushform/termtext"
	"pushform/views"
)

// statePruneOptions are the inputs of state prune.
type statePruneOptions struct {
	stateFlags
	configFlags
	before string
	force  bool
	// now is when records count as young enough to be needed; the clock.
	now time.Time
}

func (m *Meta) statePrune(ctx context.Context, args []string) int {
	fs := m.FlagSet("state prune")
	o := statePruneOptions{now: time.Now().UTC()}
	fs.StringVar(&o.before, "before", "", "drop the ledger records older than `TIME`: RFC 3339, or a date (2026-01-01: the start of that day, UTC)")
	fs.BoolVar(&o.force, "force", false, "drop them even when they are younger than a day, a repeat_after or frequency_cap of the configuration still needs them, or TIME is in the future")
	o.configFlags.bind(fs)
	o.stateFlags.bind(fs, true)
	if err := m.parse(fs, args); err != nil {
		return m.usageError("state prune", err)
	}
	if fs.NArg() > 0 {
		return m.usageError("state prune", errors.New("state prune takes no arguments; give the date with --before"))
	}
	if o.before == "" {
		return m.usageError("state prune", errors.New("state prune needs --before TIME: the ledger is kept whole unless you say up to when to drop it"))
	}
	before, err := parseHistoryTime("--before", o.before, false)
	if err != nil {
		return m.usageError("state prune", err)
	}
	return m.runStatePrune(ctx, o, before)
}

// runStatePrune drops the ledger records older than before, under the
// state lock, after checking that the configuration needs none of them.
func (m *Meta) runStatePrune(ctx context.Context, o statePruneOptions, before time.Time) int {
	cfg, diags := m.loadConfig(config.NewLoader(), o.configFlags, nil)
	if diags.HasErrors() && !o.force {
		return m.Errorf("state prune reads the configuration's repeat_after and frequency_cap settings to keep the records they still need: fix the configuration, or pass --force to prune without it")
	}
	var be backend.State
	var err error
	if cfg != nil {
		be, err = m.openState(ctx, o.stateFlags, cfg.Backend)
	} else {
		be, err = m.stateBackend(ctx, o.stateFlags)
	}
	if err != nil {
		return m.fail(err)
	}
	sess, err := backend.Open(ctx, cfg, be, backend.SessionOptions{Operation: "state prune", LockTimeout: o.lockTimeout, Compact: true})
	if err != nil {
		return m.fail(err)
	}
	m.warnStaleLock(sess.StaleLock)
	code := m.prune(sess, o, before)
	if err := sess.Close(); err != nil {
		return m.fail(err)
	}
	return code
}

func (m *Meta) prune(sess *backend.Session, o statePruneOptions, before time.Time) int {
	s := sess.State
	if s == nil {
		return m.Errorf("no state at %s", sess.Backend)
	}
	at := before.Format(time.RFC3339)
	if before.After(o.now) {
		// Everything recorded until then would go, today's sends too.
		if !o.force {
			return m.Errorf("state prune --before %s is in the future (it is %s now): it would drop every ledger record, however young, and a notification "+
				"put back in the configuration would be sent again to everyone it reached. Give a past time, or pass --force to drop them anyway",
				o.before, o.now.Format(time.RFC3339))
		}
		fmt.Fprintf(m.Stderr, "Warning: pruning up to %s, a time in the future (--force).\n", at)
	}
	window, what := minPruneAge, ""
	if sess.Config != nil {
		if w, setting := lookBack(sess.Config); w > window {
			window, what = w, setting
		}
	}
	from := o.now.Add(-window)
	if n := s.LedgerCount(from, before); n > 0 {
		if !o.force {
			if what == "" {
				return m.Errorf("state prune --before %s would drop %s younger than a day (recorded after %s): a notification put back "+
					"in the configuration would be sent again to those targets. Prune before %s, or pass --force to drop them anyway",
					o.before, records(n), from.Format(time.RFC3339), from.Format(time.RFC3339))
			}
			return m.Errorf("state prune --before %s would drop %s that the configuration still needs: %s looks back %s, to %s, "+
				"and a record from then on decides what may be sent again. Prune before %s, or pass --force to drop them anyway",
				o.before, records(n), what, formatWindow(window), from.Format(time.RFC3339), from.Format(time.RFC3339))
		}
		if what == "" {
			fmt.Fprintf(m.Stderr, "Warning: dropping %s younger than a day (--force).\n", records(n))
		} else {
			fmt.Fprintf(m.Stderr, "Warning: dropping %s that %s still needs (--force).\n", records(n), what)
		}
	}
	dropped := s.Prune(before)
	if dropped == 0 {
		fmt.Fprintf(m.Stdout, "The ledger holds no record older than %s: nothing was dropped.\n", at)
		return ExitOK
	}
	if err := sess.Persist(); err != nil {
		return m.Errorf("%v", err)
	}
	fmt.Fprintf(m.Stdout, "Dropped %s older than %s from the ledger (serial %d). The addresses' last outcomes are kept.\n",
		records(dropped), at, s.Serial)
	return ExitOK
}

// minPruneAge is how old a ledger record must be for state prune to drop
// it without --force, whatever the configuration looks back over.
const minPruneAge = 24 * time.Hour

// lookBack returns the longest window the configuration looks back over
// the ledger (repeat_after, frequency_cap per) and which setting it is.
func lookBack(cfg *config.Config) (time.Duration, string) {
	var longest time.Duration
	var what string
	consider := func(d time.Duration, name string) {
		if d > longest {
			longest, what = d, name
		}
	}
	if fc := cfg.FrequencyCap; fc != nil {
		consider(fc.Per, "the frequency_cap ("+fc.Pos.String()+")")
	}
	for _, name := range sortedCampaigns(cfg) {
		c := cfg.Campaigns[name]
		if fc := c.FrequencyCap; fc != nil {
			consider(fc.Per, "the frequency_cap of campaign "+termtext.Quote(name)+" ("+fc.Pos.String()+")")
		}
	}
	for _, msg := range cfg.Messages {
		consider(msg.RepeatAfter, "the repeat_after of "+termtext.Clean(msg.Address))
	}
	return longest, what
}

func sortedCampaigns(cfg *config.Config) []string {
	return slices.Sorted(maps.Keys(cfg.Campaigns))
}

// records says "1 ledger record" or "1,234 ledger records".
func records(n int) string {
	if n == 1 {
		return "1 ledger record"
	}
	return fmt.Sprintf("%s ledger records", views.Count(n))
}

// formatWindow writes a duration in days when it is whole days: 7d.
func formatWindow(d time.Duration) string {
	const day = 24 * time.Hour
	if d%day == 0 {
		return fmt.Sprintf("%dd", d/day)
	}
	return d.String()
}
