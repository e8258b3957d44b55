package planner

import (
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"pushform/config"
	"pushform/message"
	"pushform/state"
)

// Per-person text (config.Template): a personalised notification is one
// change, whose identity is its template (Change.Fingerprint is the
// template's, so a person's data changing sends nothing again, and an
// edited template is an edit like any other). Once the plan knows whom
// it sends to, each of them gets their text filled in; one whose
// template fails is held with the reason, and never sent half a text.
// Targets with the same text are next to each other in Send, so that
// apply packs them into one notification object.

// Personal is what a personalised change sends each target.
type Personal struct {
	// Texts are the distinct texts the change sends; TextOf gives,
	// parallel to Change.Send, the index in Texts of each target's.
	Texts  []message.Text `json:"texts"`
	TextOf []int32        `json:"text_of"`
	// Unfilled maps, by reason, the targets held because their text could
	// not be filled in that apply records (outcome unfilled): those the
	// state does not record held for that reason already.
	Unfilled map[string][]string `json:"unfilled,omitempty"`
	// Samples are texts filled in for the first few targets, when the
	// data block asks for them (samples = N).
	Samples []Sample `json:"samples,omitempty"`
}

// Sample is the text one person gets, for the plan to show.
type Sample struct {
	Target string       `json:"target"`
	Text   message.Text `json:"text"`
}

// TextOf returns the text the change sends target i of Send.
func (c *Change) TextOf(i int) message.Text {
	return c.Personal.Texts[c.Personal.TextOf[i]]
}

// maxHeldIDs is how many ids per reason the plan names.
const maxUnfilledIDs = 5

// rendered is what one worker filled in, for a run of Send.
type rendered struct {
	texts   []message.Text
	index   map[message.Text]int32
	of      []int32 // local text index, -1 when held
	locales map[string]int
	held    map[string][]string // reason -> ids
	samples []Sample
	err     error
}

// personalise fills in the text of every target c sends, holding those
// whose template fails (see config.Template); m is its message, prior its
// recorded state. It fails when a text holds a secret, or when the
// template says on_missing = "fail" and someone is held.
func (pl *planning) personalise(c *Change, m *config.Message, prior *state.Message) error {
	t := m.Template
	if t == nil || c.Kind != message.KindNotification {
		return nil
	}
	ids := c.Send
	workers := 1
	if len(ids) >= 2*personalParallelFrom {
		workers = min(runtime.GOMAXPROCS(0), len(ids)/personalParallelFrom)
	}
	parts := make([]rendered, workers)
	samples := t.Samples()
	var wg sync.WaitGroup
	for w := range workers {
		from, to := w*len(ids)/workers, (w+1)*len(ids)/workers
		wg.Go(func() {
			want := 0
			if w == 0 {
				want = samples
			}
			parts[w] = fill(t, ids[from:to], want)
		})
	}
	wg.Wait()
	held := map[string][]string{}
	p := &Personal{}
	c.Locales = map[string]int{}
	index := map[message.Text]int32{}
	of := make([]int32, 0, len(ids))
	for _, r := range parts {
		if r.err != nil {
			return fmt.Errorf("%s: %w", c.Address, r.err)
		}
		remap := make([]int32, len(r.texts))
		for i, tx := range r.texts {
			g, ok := index[tx]
			if !ok {
				g = int32(len(p.Texts))
				index[tx] = g
				p.Texts = append(p.Texts, tx)
			}
			remap[i] = g
		}
		for _, l := range r.of {
			if l >= 0 {
				of = append(of, remap[l])
			} else {
				of = append(of, -1)
			}
		}
		for k, n := range r.locales {
			c.Locales[k] += n
		}
		for why, list := range r.held {
			held[why] = append(held[why], list...)
		}
		p.Samples = append(p.Samples, r.samples...)
	}
	if len(held) > 0 {
		if t.OnMissing == "fail" {
			return fmt.Errorf("%s: the text of %s could not be filled in, and on_missing = \"fail\": %s. Nothing is sent; fix the data or the template, or set on_missing = \"skip\" to hold those people and send the others",
				c.Address, targets(countHeld(held), "person", "people"), heldSummary(held))
		}
		p.Unfilled = pl.hold(c, held, prior)
		kept := make([]string, 0, len(ids))
		keptOf := make([]int32, 0, len(ids))
		for i, id := range ids {
			if of[i] >= 0 {
				kept, keptOf = append(kept, id), append(keptOf, of[i])
			}
		}
		ids, of = kept, keptOf
	}
	c.Send, p.TextOf = groupByText(ids, of, len(p.Texts))
	c.Targets.Send = len(c.Send)
	if len(c.Locales) == 0 {
		c.Locales = nil
	}
	c.Personal = p
	if len(held) > 0 && len(c.Send) == 0 && c.Action.Sends() {
		// Nothing left to send: say what the plan does instead.
		switch {
		case len(p.Unfilled) > 0:
			c.Action = ActionUnfilled
		case c.Targets.Staged > 0:
			c.Action = ActionStage
		case len(c.AlreadyDelivered) > 0:
			c.Action = ActionAlreadyDelivered
		default:
			c.Action = ActionNoOp
		}
	}
	return nil
}

// personalParallelFrom is how many targets each worker fills in at least.
const personalParallelFrom = 4096

// fill fills in t for ids, in order; the first want are samples.
func fill(t *config.Template, ids []string, want int) rendered {
	r := rendered{index: map[message.Text]int32{}, of: make([]int32, len(ids)), locales: map[string]int{}, held: map[string][]string{}}
	for i, id := range ids {
		out, err := t.Render(id)
		if err != nil {
			r.err = err
			return r
		}
		if out.Held != "" {
			r.of[i] = -1
			r.held[out.Held] = append(r.held[out.Held], id)
			continue
		}
		tx := message.Text{Title: out.Content.Title, Body: out.Content.Body, OpenToURL: out.Content.OpenToURL, Tag: out.Content.Tag, Locale: out.Translation}
		k, ok := r.index[tx]
		if !ok {
			k = int32(len(r.texts))
			r.index[tx] = k
			r.texts = append(r.texts, tx)
		}
		r.of[i] = k
		r.locales[out.LocaleKey(t)]++
		if len(r.samples) < want {
			r.samples = append(r.samples, Sample{Target: id, Text: tx})
		}
	}
	return r
}

// hold takes the held targets out of the counts they were classified in
// and counts them by reason. It returns those apply records (outcome
// unfilled): every one but those recorded held for the same reason.
func (pl *planning) hold(c *Change, held map[string][]string, prior *state.Message) map[string][]string {
	var find *state.TargetFinder
	if prior != nil {
		find = prior.Finder()
	}
	c.HeldByReason = map[string]int{}
	c.HeldIDs = map[string][]string{}
	record := map[string][]string{}
	for why, ids := range held {
		c.HeldByReason[why] = len(ids)
		c.Targets.Unfilled += len(ids)
		c.HeldIDs[why] = slices.Clone(ids[:min(len(ids), maxUnfilledIDs)])
		for _, id := range ids {
			pl.unclassify(&c.Targets, id, find, c.Fingerprint)
			if find != nil {
				if rec := find.Find(id); rec != nil && rec.Outcome == state.Unfilled && rec.Fingerprint == c.Fingerprint && rec.Reason == why {
					continue
				}
			}
			record[why] = append(record[why], id)
		}
	}
	if len(record) == 0 {
		return nil
	}
	return record
}

// groupByText orders ids so that targets of one text are next to each
// other, the texts in the order they first appear (a stable counting
// sort); of gives each id's text.
func groupByText(ids []string, of []int32, texts int) ([]string, []int32) {
	if texts <= 1 {
		return ids, of
	}
	start := make([]int, texts+1)
	for _, k := range of {
		start[k+1]++
	}
	for i := 1; i <= texts; i++ {
		start[i] += start[i-1]
	}
	outIDs, outOf := make([]string, len(ids)), make([]int32, len(ids))
	for i, k := range of {
		j := start[k]
		start[k]++
		outIDs[j], outOf[j] = ids[i], k
	}
	return outIDs, outOf
}

// countHeld counts the targets of held.
func countHeld(held map[string][]string) int {
	n := 0
	for _, ids := range held {
		n += len(ids)
	}
	return n
}

// heldSummary says, by reason, how many are held and names a few.
func heldSummary(held map[string][]string) string {
	var parts []string
	for _, why := range sortedTagKeys(held) {
		ids := held[why]
		s := fmt.Sprintf("%s: %d (%s", why, len(ids), strings.Join(ids[:min(len(ids), maxUnfilledIDs)], ", "))
		if len(ids) > maxUnfilledIDs {
			s += ", ..."
		}
		parts = append(parts, s+")")
	}
	return strings.Join(parts, "; ")
}

// unfilledEntries are the journal entries recording c's held targets.
func (c *Change) unfilledEntries(at time.Time) []state.Entry {
	if c.Personal == nil || len(c.Personal.Unfilled) == 0 {
		return nil
	}
	var out []state.Entry
	content := c.Content
	for _, why := range sortedTagKeys(c.Personal.Unfilled) {
		ids := c.Personal.Unfilled[why]
		rec := &state.Target{Outcome: state.Unfilled, Fingerprint: c.Fingerprint, Time: at, Reason: why}
		it := state.Item{Address: c.Address, Kind: c.Kind, TargetKind: c.TargetKind, Fingerprint: c.Fingerprint, Content: &content,
			Targets: ids, Outcomes: make([]*state.Target, len(ids))}
		for i := range it.Outcomes {
			it.Outcomes[i] = rec // equal outcomes share one record
		}
		out = append(out, state.Entry{Type: state.EntryRecord, Time: at, Items: []state.Item{it}})
	}
	return out
}

// keepSend keeps the targets of Send that keep says to, and their texts.
func (c *Change) keepSend(keep func(id string) bool) {
	send := make([]string, 0, len(c.Send))
	var of []int32
	if c.Personal != nil {
		of = make([]int32, 0, len(c.Send))
	}
	for i, id := range c.Send {
		if keep(id) {
			send = append(send, id)
			if of != nil {
				of = append(of, c.Personal.TextOf[i])
			}
		}
	}
	c.Send = send
	if of != nil {
		c.Personal.TextOf = of
	}
}

// HeldReasons returns the reasons c's targets are held for (their text
// could not be filled in), the most frequent first.
func (c *Change) HeldReasons() []string {
	out := slices.Collect(maps.Keys(c.HeldByReason))
	sort.Slice(out, func(i, j int) bool {
		a, b := c.HeldByReason[out[i]], c.HeldByReason[out[j]]
		return a > b || a == b && out[i] < out[j]
	})
	return out
}
