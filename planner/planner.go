package planner

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
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

// DefaultMaxUnknownResends is how many requests may send a target without a
// usable answer before the plan stops sending it again.
const DefaultMaxUnknownResends = 3

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
	// MaxUnknownResends holds back a target, tagged or not, once this many
	// requests sent it and got no usable answer (RetryUnknown sends it
	// anyway); 0 means DefaultMaxUnknownResends.
	MaxUnknownResends int
	// AllowResend sends targets content the ledger says they already
	// received, once (apply --allow-resend); the plan counts them as
	// repeats.
	AllowResend bool
	// Scheduled plans only what a reviewed apply accepted (apply
	// --scheduled): the changes of addresses whose content the state
	// records, which send to new recipients, retry, or send what
	// send_after, send_rate, a frequency_cap or a window held back. Every
	// other change is left out and listed in Plan.AwaitingReview.
	Scheduled bool
	// Resume sends the next rollout stage of these addresses (and what
	// they contain) although their failure gate halted them.
	Resume []string
	// SendAt is when apply sends the plan's requests, when that may be
	// before Now: the real clock, for a plan at a --now ahead that apply
	// sends at once. Frequency caps count from the earlier of the two, so
	// a cap holds at the time the notifications really arrive. Zero: Now.
	SendAt time.Time
}

// Make computes the plan. It fails when an option names no address. The
// caller has checked that the state belongs to the configuration's
// environment (backend.Open does).
func Make(in Input, opts Options) (*Plan, error) {
	return makePlan(in, opts.withDefaults(), nil)
}

func (opts Options) withDefaults() Options {
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	if opts.BatchLimit <= 0 {
		opts.BatchLimit = DefaultBatchLimit
	}
	if opts.MaxUnknownResends <= 0 {
		opts.MaxUnknownResends = DefaultMaxUnknownResends
	}
	return opts
}

// makePlan is Make; pre, when set, is the classification of the targets
// of one message already made while they arrived (see Stream).
func makePlan(in Input, opts Options, pre *preclassified) (*Plan, error) {
	cfg := in.Config
	p := newPlan(in, opts)
	// The state as the moved blocks rename it: a moved address is planned
	// as its new address.
	st, movedFrom, err := moveState(cfg, in.State)
	if err != nil {
		return nil, err
	}
	if err := checkAddresses(cfg, st, opts); err != nil {
		return nil, err
	}

	pl := planning{opts: opts, recipients: in.Recipients, replace: toSet(opts.Replace), pre: pre}
	var contents map[string]message.Content
	if st != nil {
		pl.ledger = newLedgerIndex(st)
		contents = pl.ledger.contents
	}
	seen := make(map[string]bool, len(cfg.Messages))
	var planned []*config.Message
	msgs := map[string]*config.Message{}    // planned messages by address
	created := map[string]*config.Message{} // those with no state
	paces := map[string]*Pace{}
	// In address order: of two addresses sending the same content to a
	// target, the first sends it.
	expanded, variants, holdouts, gone, heldKept := expandVariants(cfg.Messages, newFamilyIndex(st, cfg, contents))
	pl.gone = gone
	for addr, vi := range variants {
		if pl.replace[vi.Of] {
			pl.replace[addr] = true // --replace of a notification replaces its variants
		}
	}
	byAddr := slices.Clone(expanded)
	slices.SortStableFunc(byAddr, func(a, b *config.Message) int { return strings.Compare(a.Address, b.Address) })
	var selectedMsgs []*config.Message
	for _, m := range byAddr {
		if selected(m.Address, opts.Targets) {
			selectedMsgs = append(selectedMsgs, m)
		}
	}
	pl.prepareInPlan(selectedMsgs)
	for _, m := range byAddr {
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
		var c *Change
		if holdouts[m.Address] {
			c = holdoutChange(m, prior)
			if n := heldKept[m.Address]; n > 0 {
				c.Warnings = append(c.Warnings, keptHeldOut(n))
			}
		} else {
			c = pl.change(m, prior)
			holdForLocalTime(c, m, opts.Now) // before notePlanned: a held target does not get the content now
			if err := pl.personalise(c, m, prior); err != nil {
				return nil, err
			}
		}
		c.Variant = variants[m.Address]
		c.review = shapeReview(in.State, reviewAddress(m.Address, c.Variant), m.Shape, c)
		if from, ok := movedFrom[m.Address]; ok {
			c.MovedFrom = from
			if c.Action == ActionNoOp {
				c.Action = ActionMoved
			}
		}
		if !opts.Scheduled || c.review == "" && c.MovedFrom == "" {
			// What awaits review sends nothing now: it must not make a
			// later address's targets already delivered.
			pl.notePlanned(c)
		}
		c.Paces = paceGroups(cfg, m, paces)
		p.Changes = append(p.Changes, c)
		planned = append(planned, m)
		msgs[m.Address] = m
		if prior == nil {
			created[m.Address] = m
		}
	}
	warnSharedTags(planned, p.Changes[:len(planned)])
	if st != nil {
		for _, addr := range st.Addresses() {
			if seen[addr] || !selected(addr, opts.Targets) {
				continue
			}
			p.Changes = append(p.Changes, forgetChange(st.Messages[addr]))
		}
	}
	sort.Slice(p.Changes, func(i, j int) bool { return p.Changes[i].Address < p.Changes[j].Address })
	if opts.Scheduled {
		// Before the caps: what awaits review takes none of their room.
		for _, c := range p.Changes {
			c.Accept = accepts(c)
		}
		p.Changes, p.AwaitingReview = holdForReview(p.Changes)
		clear(created) // every created address awaits review: no renames
	} else {
		p.Shapes = shapesToAccept(cfg, in.State, opts.Targets, p.Changes)
	}
	applyCaps(cfg, st, opts.capTime(), p.Changes, msgs)
	for _, c := range p.Changes {
		c.Accept = accepts(c)
		if c.Rollout != nil {
			recountStages(c, msgs[c.Address])
		}
	}
	p.Renames = detectRenames(cfg, p.Changes, created, st, seen, opts.Now)
	p.KindChanges = detectKindChanges(pl.ledger, st, p.Changes)
	packPlan(p, paces, opts)
	return p, nil
}

// newPlan is the plan of in before its changes.
func newPlan(in Input, opts Options) *Plan {
	p := &Plan{
		FormatVersion: FormatVersion,
		CreatedAt:     opts.Now.UTC(),
		Environment:   in.Config.Service.Environment,
		Recipients:    in.Recipients,
		Refreshed:     in.Refreshed,
	}
	if in.State != nil {
		p.StateLineage = in.State.Lineage
		p.StateSerial = in.State.Serial
	}
	return p
}

// packPlan packs p's changes, once decided, into requests paced by their
// groups, and sums them up.
func packPlan(p *Plan, paces map[string]*Pace, opts Options) {
	for _, c := range p.Changes {
		if len(c.Send) == 0 {
			c.Paces = nil // nothing to pace; Plan.Pacing lists only groups that send
		}
	}
	p.Batches = batches(p.Changes, opts.BatchLimit, paces)
	p.Pacing = pacing(p, paces, opts.Now)
	p.Summary = summarize(p)
	for _, c := range p.Changes {
		for _, w := range c.Warnings {
			p.Warnings = append(p.Warnings, c.Address+": "+w)
		}
	}
}

type planning struct {
	opts       Options
	recipients *state.Snapshot
	reachOnce  sync.Once
	reachable  map[string]struct{} // built on first need
	replace    map[string]bool
	// pre is one message's targets classified as they arrived; nil for none.
	pre *preclassified
	// parallelFrom overrides the package constant, for tests.
	parallelFrom int
	// ledger indexes the state's ledger (nil without a state); inPlan
	// maps, for each content several planned messages send, the targets
	// those planned so far send it to (see prepareInPlan).
	ledger *ledgerIndex
	inPlan map[vkey]map[string]string
	// gone maps a variant's address to its targets that received a
	// variant no longer declared (see splitVariants).
	gone map[string]map[string]already
}

// preclassified is what classifyAll would return for the targets of the
// message at addr, made chunk by chunk while they arrived.
type preclassified struct {
	addr       string
	changeCtx  *changeContext
	classified classified
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

func forgetChange(m *state.Message) *Change {
	return &Change{
		Address:     m.Address,
		Action:      ActionForget,
		Kind:        m.Kind,
		TargetKind:  m.TargetKind,
		Fingerprint: m.Fingerprint,
		Content:     m.Content,
		Forget:      sortedIDs(m),
		Targets:     TargetCounts{Forget: m.TargetCount()},
	}
}

func summarize(p *Plan) Summary {
	var s Summary
	for _, c := range p.Changes {
		// Moved counts every address a move renames, whatever else its
		// change does: below, not by its action.
		if r, _ := Info(c.Action); r.summary != nil && c.Action != ActionMoved {
			*r.summary(&s)++
		}
		if c.Local != nil {
			if c.Action == ActionWait {
				s.LocalWait++
			}
			s.WaitingTargets += c.Targets.Waiting
			s.QuietTargets += c.Targets.Quiet
		}
		s.StagedTargets += c.Targets.Staged
		s.UnfilledTargets += c.Targets.Unfilled
		s.HoldoutTargets += c.Targets.Holdout
		if c.Rollout != nil && c.Rollout.State == RolloutHalted {
			s.Halted++
		}
		s.AlreadyDeliveredTargets += c.Targets.AlreadyDelivered
		if c.MovedFrom != "" {
			s.Moved++
		}
		s.ExpiredTargets += c.Targets.Expired
		s.CappedTargets += c.Targets.Capped
		s.Targets += len(c.Send)
	}
	s.Requests = len(p.Batches)
	for _, pc := range p.Pacing {
		s.PacedSeconds = max(s.PacedSeconds, pc.Duration.Seconds())
	}
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
			if covers(t, m.Address) || variantOf(t, m) {
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
	for _, r := range opts.Resume {
		found := false
		for _, m := range cfg.Messages {
			if covers(r, m.Address) && m.Rollout != nil {
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("--resume %s matches no address with a rollout in the configuration", r)
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
