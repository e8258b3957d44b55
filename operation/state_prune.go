package operation

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"pushform/backend"
	"pushform/config"
	"pushform/termtext"
	"pushform/views"
)

// PruneOptions are the inputs of StatePrune beyond Options (whose Config
// are the variables the configuration is loaded with).
type PruneOptions struct {
	// Before drops the ledger records older than it; BeforeText is how it
	// was given (--before), for messages.
	Before     time.Time
	BeforeText string
	// Force drops them even when they are younger than a day, a
	// repeat_after or frequency_cap of the configuration still needs them,
	// or Before is in the future.
	Force bool
}

// PruneResult is what StatePrune dropped.
type PruneResult struct {
	// Dropped counts the ledger records dropped (0: none was older).
	Dropped int
	Before  time.Time
	// Serial is the state's serial after.
	Serial uint64
}

// StatePrune drops the ledger records older than po.Before, under the
// state lock, after checking that the configuration needs none of them:
// it loads the whole configuration (showing its diagnostics) for its
// repeat_after and frequency_cap settings. The result is set once the
// state is saved, even when releasing the lock then failed.
func StatePrune(ctx context.Context, o Options, po PruneOptions) (*PruneResult, error) {
	now := o.clock()().UTC()
	l := config.NewLoader()
	cfg, diags := LoadConfig(l, o.Dir, o.Config, o.backends(), o.getenv(), o.Secrets)
	if len(diags) > 0 {
		if err := o.diagnostics(l, diags); err != nil {
			o.report(err)
		}
	}
	if diags.HasErrors() && !po.Force {
		return nil, fmt.Errorf("state prune reads the configuration's repeat_after and frequency_cap settings to keep the records they still need: fix the configuration, or pass --force to prune without it")
	}
	var be backend.State
	var err error
	if cfg != nil {
		be, err = o.openBackend(ctx, cfg.Backend)
	} else {
		be, err = o.openState(ctx)
	}
	if err != nil {
		return nil, err
	}
	var res *PruneResult
	err = o.locked(ctx, cfg, be, true, func(sess *backend.Session) error {
		var err error
		res, err = o.prune(sess, po, now)
		return err
	})
	return res, err
}

func (o *Options) prune(sess *backend.Session, po PruneOptions, now time.Time) (*PruneResult, error) {
	s := sess.State
	if s == nil {
		return nil, fmt.Errorf("no state at %s", sess.Backend)
	}
	before := po.Before
	at := before.Format(time.RFC3339)
	if before.After(now) {
		// Everything recorded until then would go, today's sends too.
		if !po.Force {
			return nil, fmt.Errorf("state prune --before %s is in the future (it is %s now): it would drop every ledger record, however young, and a notification "+
				"put back in the configuration would be sent again to everyone it reached. Give a past time, or pass --force to drop them anyway",
				po.BeforeText, now.Format(time.RFC3339))
		}
		o.Warnings.Warn(fmt.Sprintf("pruning up to %s, a time in the future (--force).", at))
	}
	window, what := minPruneAge, ""
	if sess.Config != nil {
		if w, setting := lookBack(sess.Config); w > window {
			window, what = w, setting
		}
	}
	from := now.Add(-window)
	if n := s.LedgerCount(from, before); n > 0 {
		if !po.Force {
			if what == "" {
				return nil, fmt.Errorf("state prune --before %s would drop %s younger than a day (recorded after %s): a notification put back "+
					"in the configuration would be sent again to those targets. Prune before %s, or pass --force to drop them anyway",
					po.BeforeText, views.LedgerRecords(n), from.Format(time.RFC3339), from.Format(time.RFC3339))
			}
			return nil, fmt.Errorf("state prune --before %s would drop %s that the configuration still needs: %s looks back %s, to %s, "+
				"and a record from then on decides what may be sent again. Prune before %s, or pass --force to drop them anyway",
				po.BeforeText, views.LedgerRecords(n), what, formatWindow(window), from.Format(time.RFC3339), from.Format(time.RFC3339))
		}
		if what == "" {
			o.Warnings.Warn(fmt.Sprintf("dropping %s younger than a day (--force).", views.LedgerRecords(n)))
		} else {
			o.Warnings.Warn(fmt.Sprintf("dropping %s that %s still needs (--force).", views.LedgerRecords(n), what))
		}
	}
	res := &PruneResult{Dropped: s.Prune(before), Before: before, Serial: s.Serial}
	if res.Dropped == 0 {
		return res, nil
	}
	if err := sess.Persist(); err != nil {
		return nil, err
	}
	res.Serial = s.Serial
	return res, nil
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

// formatWindow writes a duration in days when it is whole days: 7d.
func formatWindow(d time.Duration) string {
	const day = 24 * time.Hour
	if d%day == 0 {
		return fmt.Sprintf("%dd", d/day)
	}
	return d.String()
}
