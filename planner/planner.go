package planner

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"pushform/config"
	"pushform/message"
	"pushform/state"
)

// DefaultBatchLimit is the most targets one request carries: the spec's
// limit of 500 userIds, applied to device ids and topics too.
const DefaultBatchLimit = 500

// Input is what a plan is made from.
type Input struct {
	// Config must be fully resolved: no message with Targets.Unknown.
	Config *config.Config
	// State is the recorded state; nil when there is none yet.
	State *state.State
	// Recipients is the snapshot the config's recipients data sources were
	// resolved with; it also tells skipped users who are reachable again.
	Recipients *state.Snapshot
	// Refreshed says whether Recipients was fetched for this plan.
	Refreshed bool
}

// Options tune a plan; the zero value is a full plan at time.Now.
type Options struct {
	Now time.Time
	// Targets limits the plan to these addresses and what they contain
	// (campaign.x covers every message of campaign x).
	Targets []string
	// Replace forces a re-send of these addresses to every target.
	Replace []string
	// RetryUnknown re-sends untagged notifications to targets whose outcome
	// is unknown, accepting that some may show twice.
	RetryUnknown bool
	// BatchLimit caps the targets of one request; 0 means DefaultBatchLimit.
	BatchLimit int
}

// Make computes the plan. It fails when an option names no address. The
// caller has checked that the state belongs to the configuration's
// environment (backend.Open does).
func Make(in Input, opts Options) (*Plan, error) {
	cfg := in.Config
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	if opts.BatchLimit <= 0 {
		opts.BatchLimit = DefaultBatchLimit
	}
	p := &Plan{
		FormatVersion: FormatVersion,
		CreatedAt:     opts.Now.UTC(),
		Environment:   cfg.Service.Environment,
		Recipients:    in.Recipients,
		Refreshed:     in.Refreshed,
	}
	st := in.State
	if st != nil {
		p.StateLineage = st.Lineage
		p.StateSerial = st.Serial
	}
	if err := checkAddresses(cfg, st, opts); err != nil {
		return nil, err
	}

	pl := planning{opts: opts, recipients: in.Recipients, replace: toSet(opts.Replace)}
	seen := make(map[string]bool, len(cfg.Messages))
	for _, m := range cfg.Messages {
		seen[m.Address] = true
		if !selected(m.Address, opts.Targets) {
			continue
		}
		if m.Targets.Unknown {
			return nil, fmt.Errorf("%s: targets are not resolved (recipients not fetched)", m.Address)
		}
		var prior *state.Message
		if st != nil {
			prior = st.Messages[m.Address]
		}
		p.Changes = append(p.Changes, pl.change(m, prior))
	}
	if st != nil {
		for _, addr := range st.Addresses() {
			if seen[addr] || !selected(addr, opts.Targets) {
				continue
			}
			p.Changes = append(p.Changes, forgetChange(st.Messages[addr]))
		}
	}
	sort.Slice(p.Changes, func(i, j int) bool { return p.Changes[i].Address < p.Changes[j].Address })
	p.Batches = batches(p.Changes, opts.BatchLimit)
	p.Summary = summarize(p)
	for _, c := range p.Changes {
		for _, w := range c.Warnings {
			p.Warnings = append(p.Warnings, c.Address+": "+w)
		}
	}
	return p, nil
}

type planning struct {
	opts       Options
	recipients *state.Snapshot
	reachOnce  sync.Once
	reachable  map[string]struct{} // built on first need
	replace    map[string]bool
	// parallelFrom overrides the package constant, for tests.
	parallelFrom int
}

// isRecipient is safe for concurrent use: classify calls it from several
// goroutines.
func (pl *planning) isRecipient(id string) bool {
	if pl.recipients == nil {
		return false
	}
	pl.reachOnce.Do(func() {
		pl.reachable = make(map[string]struct{}, len(pl.recipients.UserIDs))
		for _, u := range pl.recipients.UserIDs {
			pl.reachable[u] = struct{}{}
		}
	})
	_, ok := pl.reachable[id]
	return ok
}

func (pl *planning) change(m *config.Message, prior *state.Message) *Change {
	content := m.Content
	c := &Change{
		Address:     m.Address,
		Kind:        m.Kind,
		TargetKind:  m.Targets.Kind,
		Fingerprint: Fingerprint(m.Kind, content),
		Content:     content,
		SendAfter:   m.SendAfter,
	}
	ids := m.Targets.IDs
	c.Targets.Total = len(ids)
	if prior != nil && prior.TargetKind != c.TargetKind {
		// Ids of another kind name other things: start afresh.
		c.Forget = sortedKeys(prior.Targets)
		c.Targets.Forget = len(c.Forget)
		prior = nil
	}
	if prior != nil && prior.Fingerprint != c.Fingerprint {
		pc := prior.Content
		c.Prior = &pc
	}
	if m.SendAfter != nil && pl.opts.Now.Before(*m.SendAfter) {
		// Targets no longer configured are forgotten, even while waiting.
		if prior != nil {
			c.Forget = forgotten(ids, prior, -1)
			c.Targets.Forget = len(c.Forget)
		}
		c.Action = ActionWait
		c.Targets.Waiting = len(ids)
		return c
	}
	force := pl.replace[m.Address]
	tagged := content.Idempotent(m.Kind)
	cl := pl.classifyAll(ids, prior, c.Fingerprint, force, tagged, m.Targets.Kind == config.TargetUsers)
	changed, found := cl.changed, cl.found
	c.Send, c.Held = cl.send, cl.held
	n := cl.counts
	c.Targets.New, c.Targets.Replace, c.Targets.UpToDate, c.Targets.Retry = n.New, n.Replace, n.UpToDate, n.Retry
	c.Targets.Unknown, c.Targets.Held, c.Targets.Reachable, c.Targets.Skipped = n.Unknown, n.Held, n.Reachable, n.Skipped
	c.Targets.Send = len(c.Send)
	if prior != nil {
		c.Forget = forgotten(ids, prior, found)
		c.Targets.Forget = len(c.Forget)
	}
	switch {
	case prior == nil:
		c.Action = ActionCreate
	case changed && m.Kind == config.KindBadge:
		c.Action = ActionUpdate
	case changed && content.Tag != "":
		c.Action = ActionReplace
	case changed:
		c.Action = ActionResend
		c.Warnings = append(c.Warnings, fmt.Sprintf("content changed and no tag is set: %d targets already have the earlier notification and will show both; set a tag to replace it instead", c.Targets.Replace))
	case c.Targets.New > 0:
		c.Action = ActionSendNew
	case c.Targets.Send > 0:
		c.Action = ActionRetry
	default:
		c.Action = ActionNoOp
	}
	if c.Targets.Held > 0 {
		c.Warnings = append(c.Warnings, fmt.Sprintf("%d targets have an unknown outcome (a request whose answer was lost) and are not re-sent: without a tag a second copy would show twice; use --retry-unknown to send anyway", c.Targets.Held))
	}
	return c
}

// classified is what the plan does with a run of one message's ids.
type classified struct {
	counts     TargetCounts
	send, held []string
	changed    bool // some target holds older content
	found      int  // ids recorded in prior
}

// parallelFrom is the number of ids from which classifyAll splits the work
// between goroutines: a million map lookups are cache misses, and a second
// core halves their wall time.
const parallelFrom = 1 << 16

// classifyAll classifies ids, in chunks on all cores when they are many;
// the result is the same as one sequential pass.
func (pl *planning) classifyAll(ids []string, prior *state.Message, fp string, force, tagged, users bool) classified {
	chunk := parallelFrom
	if pl.parallelFrom > 0 {
		chunk = pl.parallelFrom
	}
	workers := min(runtime.GOMAXPROCS(0), len(ids)/chunk)
	if workers < 2 {
		return pl.classify(ids, prior, fp, force, tagged, users)
	}
	parts := make([]classified, workers)
	var wg sync.WaitGroup
	for w := range workers {
		from, to := len(ids)*w/workers, len(ids)*(w+1)/workers
		wg.Go(func() { parts[w] = pl.classify(ids[from:to], prior, fp, force, tagged, users) })
	}
	wg.Wait()
	out := parts[0]
	for _, p := range parts[1:] {
		n := &out.counts
		n.New += p.counts.New
		n.Replace += p.counts.Replace
		n.UpToDate += p.counts.UpToDate
		n.Retry += p.counts.Retry
		n.Unknown += p.counts.Unknown
		n.Held += p.counts.Held
		n.Reachable += p.counts.Reachable
		n.Skipped += p.counts.Skipped
		out.send = append(out.send, p.send...)
		out.held = append(out.held, p.held...)
		out.changed = out.changed || p.changed
		out.found += p.found
	}
	return out
}

// classify decides, target by target, what the plan does with ids.
func (pl *planning) classify(ids []string, prior *state.Message, fp string, force, tagged, users bool) classified {
	var cl classified
	n := &cl.counts
	for _, id := range ids {
		var t *state.Target // nil unless ok: the !ok case comes first below
		var ok bool
		if prior != nil {
			if pt, found := prior.Targets[id]; found && pt != nil {
				t, ok = pt, true
			}
		}
		if ok {
			cl.found++
		}
		switch {
		case !ok:
			n.New++
		case force:
			n.Replace++
			cl.changed = true
		case t.Fingerprint != fp && (t.Outcome == state.Delivered || t.Outcome == state.Failed || t.Outcome == state.Unknown):
			n.Replace++
			cl.changed = true
		case t.Outcome == state.Delivered:
			n.UpToDate++
			continue
		case t.Outcome == state.Failed:
			n.Retry++
		case t.Outcome == state.Unknown && (tagged || pl.opts.RetryUnknown):
			n.Unknown++
		case t.Outcome == state.Unknown:
			n.Held++
			cl.held = append(cl.held, id)
			continue
		case t.Outcome == state.Skipped && users && pl.isRecipient(id):
			n.Reachable++
		default: // skipped: retrying does not help (spec part 3)
			n.Skipped++
			continue
		}
		cl.send = append(cl.send, id)
	}
	return cl
}

func forgetChange(m *state.Message) *Change {
	return &Change{
		Address:     m.Address,
		Action:      ActionForget,
		Kind:        m.Kind,
		TargetKind:  m.TargetKind,
		Fingerprint: m.Fingerprint,
		Content:     m.Content,
		Forget:      sortedKeys(m.Targets),
		Targets:     TargetCounts{Forget: len(m.Targets)},
	}
}

// batches packs the changes' Send lists into requests of at most limit
// targets; small notifications share a request (spec 4.1).
func batches(changes []*Change, limit int) []Batch {
	var out []Batch
	var cur Batch
	n := 0
	for i, c := range changes {
		for from := 0; from < len(c.Send); {
			if n == limit {
				out = append(out, cur)
				cur, n = Batch{}, 0
			}
			to := min(len(c.Send), from+limit-n)
			cur.Parts = append(cur.Parts, Part{Change: i, From: from, To: to})
			n += to - from
			from = to
		}
	}
	if n > 0 {
		out = append(out, cur)
	}
	return out
}

func summarize(p *Plan) Summary {
	var s Summary
	for _, c := range p.Changes {
		switch c.Action {
		case ActionCreate:
			s.Create++
		case ActionSendNew:
			s.SendNew++
		case ActionRetry:
			s.Retry++
		case ActionReplace:
			s.Replace++
		case ActionResend:
			s.Resend++
		case ActionUpdate:
			s.Update++
		case ActionForget:
			s.Forget++
		case ActionWait:
			s.Wait++
		case ActionNoOp:
			s.NoOp++
		}
		s.Targets += len(c.Send)
	}
	s.Requests = len(p.Batches)
	return s
}

// Fingerprint identifies a message's content: equal content, equal
// fingerprint, whatever the targets.
func Fingerprint(kind message.Kind, c message.Content) string {
	b, err := json.Marshal(struct {
		Kind string `json:"kind"`
		message.Content
	}{string(kind), c})
	if err != nil { // a struct of strings and ints always marshals
		panic(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}

// selected reports whether addr is covered by one of the --target
// addresses; no targets select everything.
func selected(addr string, targets []string) bool {
	if len(targets) == 0 {
		return true
	}
	for _, t := range targets {
		if covers(t, addr) {
			return true
		}
	}
	return false
}

// covers reports whether target names addr or an address inside it:
// campaign.x covers campaign.x.notification.y, notification.o covers
// notification.o["k"].
func covers(target, addr string) bool {
	return addr == target || strings.HasPrefix(addr, target+".") || strings.HasPrefix(addr, target+"[")
}

// checkAddresses refuses --target and --replace values that name nothing,
// so a typo cannot silently plan nothing (or everything).
func checkAddresses(cfg *config.Config, st *state.State, opts Options) error {
	known := func(t string) bool {
		for _, m := range cfg.Messages {
			if covers(t, m.Address) {
				return true
			}
		}
		if st != nil {
			for a := range st.Messages {
				if covers(t, a) {
					return true
				}
			}
		}
		return false
	}
	for _, t := range opts.Targets {
		if !known(t) {
			return fmt.Errorf("--target %s matches no address in the configuration or the state", t)
		}
	}
	for _, r := range opts.Replace {
		found := false
		for _, m := range cfg.Messages {
			if m.Address == r {
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("--replace %s matches no address in the configuration (give the full address, e.g. campaign.NAME.notification.NAME)", r)
		}
	}
	return nil
}

// forgotten returns the targets of prior that ids no longer lists, sorted.
// found is how many of ids prior records (-1: not counted); when distinct
// ids found every recorded target, nothing is forgotten, and a set of a
// million ids need not be built to learn that.
func forgotten(ids []string, prior *state.Message, found int) []string {
	if found == len(prior.Targets) && distinct(ids) {
		return nil
	}
	inConfig := toSet(ids)
	var out []string
	for _, id := range sortedKeys(prior.Targets) {
		if !inConfig[id] {
			out = append(out, id)
		}
	}
	return out
}

// distinct reports, cheaply, that xs holds no id twice: true when xs is
// strictly increasing (recipients lists usually are); false means unknown.
func distinct(xs []string) bool {
	for i := 1; i < len(xs); i++ {
		if xs[i] <= xs[i-1] {
			return false
		}
	}
	return true
}

func toSet(xs []string) map[string]bool {
	s := make(map[string]bool, len(xs))
	for _, x := range xs {
		s[x] = true
	}
	return s
}

func sortedKeys(m map[string]*state.Target) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
