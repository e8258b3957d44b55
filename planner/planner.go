package planner

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"pushform/config"
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

// Make computes the plan. It fails when the configuration and the state
// belong to different environments, or when an option names no address.
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
		if st.Environment != "" && st.Environment != cfg.Service.Environment {
			return nil, fmt.Errorf("the state belongs to environment %q but the configuration declares %q: use a separate state file per environment (--state)", st.Environment, cfg.Service.Environment)
		}
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
	reachable  map[string]struct{} // built on first need
	replace    map[string]bool
}

func (pl *planning) isRecipient(id string) bool {
	if pl.recipients == nil {
		return false
	}
	if pl.reachable == nil {
		pl.reachable = make(map[string]struct{}, len(pl.recipients.UserIDs))
		for _, u := range pl.recipients.UserIDs {
			pl.reachable[u] = struct{}{}
		}
	}
	_, ok := pl.reachable[id]
	return ok
}

func (pl *planning) change(m *config.Message, prior *state.Message) *Change {
	content := StateContent(m.Content)
	c := &Change{
		Address:     m.Address,
		Kind:        string(m.Kind),
		TargetKind:  string(m.Targets.Kind),
		Fingerprint: Fingerprint(string(m.Kind), content),
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
	if prior != nil {
		// Targets no longer configured are forgotten, even while waiting.
		inConfig := toSet(ids)
		for _, id := range sortedKeys(prior.Targets) {
			if !inConfig[id] {
				c.Forget = append(c.Forget, id)
			}
		}
		c.Targets.Forget = len(c.Forget)
	}
	if m.SendAfter != nil && pl.opts.Now.Before(*m.SendAfter) {
		c.Action = ActionWait
		c.Targets.Waiting = len(ids)
		return c
	}
	force := pl.replace[m.Address]
	tagged := content.Tag != "" || m.Kind == config.KindBadge
	var changed bool // some target holds older content
	for _, id := range ids {
		var t state.Target
		var ok bool
		if prior != nil {
			t, ok = prior.Targets[id]
		}
		switch {
		case !ok:
			c.Targets.New++
		case force:
			c.Targets.Replace++
			changed = true
		case t.Fingerprint != c.Fingerprint && (t.Outcome == state.Delivered || t.Outcome == state.Failed || t.Outcome == state.Unknown):
			c.Targets.Replace++
			changed = true
		case t.Outcome == state.Delivered:
			c.Targets.UpToDate++
			continue
		case t.Outcome == state.Failed:
			c.Targets.Retry++
		case t.Outcome == state.Unknown && (tagged || pl.opts.RetryUnknown):
			c.Targets.Unknown++
		case t.Outcome == state.Unknown:
			c.Targets.Held++
			c.Held = append(c.Held, id)
			continue
		case t.Outcome == state.Skipped && m.Targets.Kind == config.TargetUsers && pl.isRecipient(id):
			c.Targets.Reachable++
		default: // skipped: retrying does not help (spec part 3)
			c.Targets.Skipped++
			continue
		}
		c.Send = append(c.Send, id)
	}
	c.Targets.Send = len(c.Send)
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

// StateContent converts configured content to the form recorded in state.
func StateContent(c config.Content) state.Content {
	return state.Content{
		Title:              c.Title,
		Body:               c.Body,
		OpenToURL:          c.OpenToURL,
		Tag:                c.Tag,
		BadgeCount:         c.BadgeCount,
		SilentInForeground: c.SilentInForeground,
	}
}

// Fingerprint identifies a message's content: equal content, equal
// fingerprint, whatever the targets.
func Fingerprint(kind string, c state.Content) string {
	b, err := json.Marshal(struct {
		Kind string `json:"kind"`
		state.Content
	}{kind, c})
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

func toSet(xs []string) map[string]bool {
	s := make(map[string]bool, len(xs))
	for _, x := range xs {
		s[x] = true
	}
	return s
}

func sortedKeys(m map[string]state.Target) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
