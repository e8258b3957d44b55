package planner

import (
	"fmt"
	"hash/maphash"
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

// Sample is the text one person gets, for the plan to show, and the
// locale the plan counts them under (Change.Locales).
type Sample struct {
	Target string       `json:"target"`
	Locale string       `json:"locale"`
	Text   message.Text `json:"text"`
}

// TextOf returns the text the change sends target i of Send.
func (c *Change) TextOf(i int) message.Text {
	return c.Personal.Texts[c.Personal.TextOf[i]]
}

// maxHeldIDs is how many ids per reason the plan names.
const maxUnfilledIDs = 5

// rendered is what one worker filled in, for a run of Send: each
// target's text and its hash (held targets have a zero text), in its part
// of arrays all workers share, the locales counted, and the targets held,
// by reason.
type rendered struct {
	texts   []message.Text
	sums    []uint64
	isHeld  []bool
	locales map[string]int
	held    map[string][]string // reason -> ids
	samples []Sample
	err     error
}

// personalise fills in the text of every target c sends, holding those
// whose template fails (see config.Template); m is its message, prior its
// recorded state. It fails when a text holds a secret or the people's
// data cannot be read, or when the template says on_missing = "fail" and
// someone is held.
func (pl *planning) personalise(c *Change, m *config.Message, prior *state.Message) error {
	t := m.Template
	if t == nil || c.Kind != message.KindNotification {
		return nil
	}
	ids := c.Send
	parts := fillAll(t, ids)
	p := &Personal{}
	held := map[string][]string{}
	c.Locales = map[string]int{}
	for _, r := range parts {
		if r.err != nil {
			return fmt.Errorf("%s: %w", c.Address, r.err)
		}
		for k, n := range r.locales {
			c.Locales[k] += n
		}
		for why, list := range r.held {
			held[why] = append(held[why], list...)
		}
		p.Samples = append(p.Samples, r.samples...)
	}
	of := p.intern(parts, len(ids))
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
		c.Action = nothingSent(c)
	}
	return nil
}

// nothingSent is the action of a change whose targets were all held:
// what the plan does instead of sending.
func nothingSent(c *Change) Action {
	switch {
	case c.Personal != nil && len(c.Personal.Unfilled) > 0:
		return ActionUnfilled
	case c.Targets.Staged > 0:
		return ActionStage
	case len(c.AlreadyDelivered) > 0:
		return ActionAlreadyDelivered
	}
	return ActionNoOp
}

// fillAll fills t in for ids on every core when they are many: a part
// per worker, in order; the first worker's first few are the samples.
func fillAll(t *config.Template, ids []string) []rendered {
	workers := 1
	if len(ids) >= 2*personalParallelFrom {
		workers = min(runtime.GOMAXPROCS(0), len(ids)/personalParallelFrom)
	}
	parts := make([]rendered, workers)
	texts, sums, held := make([]message.Text, len(ids)), make([]uint64, len(ids)), make([]bool, len(ids))
	var wg sync.WaitGroup
	for w := range workers {
		from, to := w*len(ids)/workers, (w+1)*len(ids)/workers
		wg.Go(func() {
			want := 0
			if w == 0 {
				want = t.Samples()
			}
			parts[w] = rendered{texts: texts[from:to], sums: sums[from:to], isHeld: held[from:to]}
			parts[w].fill(t, ids[from:to], want)
		})
	}
	wg.Wait()
	return parts
}

// intern numbers the distinct texts of parts in the order they first
// appear, into p.Texts, and returns each target's (-1 for one held). The
// parts' texts are one array, which becomes p.Texts, the distinct moved
// to its front (each moves to where none is left to read). A million
// distinct texts take an open-addressed table of their hashes: a Go map
// of the texts themselves hashes five strings a lookup and holds twice
// the memory. Texts of equal hash are compared; two distinct texts of one
// hash (a 64-bit collision) are told apart by a map of their own.
func (p *Personal) intern(parts []rendered, n int) []int32 {
	size := 1
	for size < 2*n {
		size <<= 1
	}
	keys := make([]uint64, size) // 0: empty (hashes are made odd)
	vals := make([]int32, size)
	var collided map[message.Text]int32
	of := make([]int32, 0, n)
	var all []message.Text
	if len(parts) > 0 {
		all = parts[0].texts[:0:n] // the one array the parts are of
	}
	for _, r := range parts {
		for i, tx := range r.texts {
			if r.isHeld[i] {
				of = append(of, -1)
				continue
			}
			h := r.sums[i] | 1
			slot := h & uint64(size-1)
			for keys[slot] != 0 && keys[slot] != h {
				slot = (slot + 1) & uint64(size-1)
			}
			g := vals[slot]
			switch {
			case keys[slot] == 0:
				g = int32(len(all))
				keys[slot], vals[slot] = h, g
				all = append(all, tx)
			case all[g] != tx:
				if collided == nil {
					collided = map[message.Text]int32{}
				}
				var ok bool
				if g, ok = collided[tx]; !ok {
					g = int32(len(all))
					collided[tx] = g
					all = append(all, tx)
				}
			}
			of = append(of, g)
		}
	}
	p.Texts = all
	if len(all) < cap(all)/2 {
		p.Texts = slices.Clone(all) // not the whole array for a few texts
	}
	return of
}

// personalParallelFrom is how many targets each worker fills in at least.
const personalParallelFrom = 4096

// textSeed hashes texts for intern.
var textSeed = maphash.MakeSeed()

// fill fills in t for ids, in order, into r's arrays; the first want are
// samples.
func (r *rendered) fill(t *config.Template, ids []string, want int) {
	r.locales, r.held = map[string]int{}, map[string][]string{}
	for i, id := range ids {
		out, err := t.Render(id)
		if err != nil {
			r.err = err
			return
		}
		if out.Held != "" {
			r.isHeld[i] = true
			r.held[out.Held] = append(r.held[out.Held], id)
			continue
		}
		tx := message.Text{Title: out.Content.Title, Body: out.Content.Body, OpenToURL: out.Content.OpenToURL, Tag: out.Content.Tag, Locale: out.Translation}
		r.texts[i], r.sums[i] = tx, maphash.Comparable(textSeed, tx)
		key := out.LocaleKey(t)
		r.locales[key]++
		if len(r.samples) < want {
			r.samples = append(r.samples, Sample{Target: id, Locale: key, Text: tx})
		}
	}
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
