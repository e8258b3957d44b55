package state

import (
	"cmp"
	"iter"
	"maps"
	"slices"
	"sync"
	"time"

	"pushform/message"
)

// The ledger: what content reached which target, when, under which
// address, with which request id, kept until pruned explicitly. It is
// the addresses' view (State.Messages: each target's last record under a
// current address) plus State.Ledger, entries shaped like messages that
// hold the records the view no longer does:
//   - an address forgotten (EntryForget, state rm) moves whole into the
//     ledger, marked with the time it was forgotten (Message.ForgottenAt);
//   - targets forgotten from an address go with their records into an
//     entry of their own, marked the same way;
//   - a record an intent replaces with other content goes into an entry
//     of the address and that content (ForgottenAt zero): an edit never
//     erases the record that the earlier content reached the target.
//
// A record belongs to one place only, so every delivery is counted once.
// Entries keep the compact target tables of messages (sorted ids sharing
// lists, 4-byte record numbers) and, read from a file, decode their
// targets only when something asks for them (see SetLazyTargets): the
// plan consults only entries holding the content it is about to send.

// supersedeKey names the ledger entry of an address and a content.
type supersedeKey struct{ addr, fp string }

// supersede records in the ledger that target id had rec under m, before
// an intent of other content replaced it. The content of rec is m's
// previous content when the fingerprints match (oldFP, oldContent);
// otherwise it is found by fingerprint in other entries (or unknown).
func (s *State) supersede(m *Message, oldFP string, oldContent message.Content, id string, rec *Target) {
	k := supersedeKey{m.Address, rec.Fingerprint}
	e := s.lastSuperseded
	if e == nil || e.Address != k.addr || s.lastFP != k.fp {
		e = s.superseding[k]
	}
	if e == nil {
		e = &Message{Address: m.Address, Kind: m.Kind, TargetKind: m.TargetKind}
		if rec.Fingerprint == oldFP {
			e.Fingerprint, e.Content = oldFP, oldContent
			if tag, ok := m.EarlierTags[oldFP]; ok {
				e.Content.Tag = tag
			}
		} else if tag, ok := m.TagOf(rec.Fingerprint); ok {
			e.EarlierTags = map[string]string{rec.Fingerprint: tag}
		}
		if m.Compact() || s.Compact {
			e.makeCompact()
		} else {
			e.Targets = map[string]*Target{}
		}
		if s.superseding == nil {
			s.superseding = map[supersedeKey]*Message{}
		}
		s.superseding[k] = e
		s.Ledger = append(s.Ledger, e)
	}
	s.lastSuperseded, s.lastFP = e, k.fp // the targets of a request usually share one
	e.updateTargets([]string{id}, func(int, *Target) *Target { return rec })
}

// forgetAddress moves the message at addr, if any, into the ledger.
func (s *State) forgetAddress(addr string, at time.Time) {
	m := s.Messages[addr]
	if m == nil {
		return
	}
	delete(s.Messages, addr)
	owned := s.owned == nil || s.owned[addr]
	delete(s.owned, addr)
	if m.TargetCount() == 0 {
		return
	}
	if !owned {
		// A fork shares m with the state it was made from: the ledger
		// entry is never written, but the original may be, later.
		m = m.clone()
	} else {
		c := *m
		m = &c
	}
	m.ForgottenAt = at
	s.Ledger = append(s.Ledger, m)
}

// forgetTargets records in the ledger the records of ids that m holds,
// before they are removed from m.
func (s *State) forgetTargets(m *Message, ids []string, at time.Time) {
	e := &Message{Address: m.Address, Kind: m.Kind, TargetKind: m.TargetKind, Fingerprint: m.Fingerprint,
		Content: m.Content, EarlierTags: maps.Clone(m.EarlierTags), ForgottenAt: at}
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	var keep []string
	var recs []*Target
	for _, id := range sorted {
		if t := m.Target(id); t != nil {
			keep, recs = append(keep, id), append(recs, t)
		}
	}
	if len(keep) == 0 {
		return
	}
	e.setTargets(m.Compact() || s.Compact, keep, recs)
	s.Ledger = append(s.Ledger, e)
}

// lazyTargets are the targets of a ledger entry read from a file, decoded
// the first time something reads them.
type lazyTargets struct {
	mu   sync.Mutex
	done bool
	n    int
	fps  []string
	ids  []byte // the encoding of the ids, and of their records
	recs []byte
	load func(m *Message) error
	err  error
}

// SetLazyTargets makes m's n targets, whose records hold the fingerprints
// fps, come from load, called once when something first reads them; ids
// and recs are the encodings of their ids and of their records, which
// RawTargets hands back while m has not been read, so m can be written
// back without decoding it. load must set m's targets with
// SetSortedTargets or SetSortedTargetsFunc; an error it returns leaves m
// without targets (see LoadErr).
func (m *Message) SetLazyTargets(n int, fps []string, ids, recs []byte, load func(m *Message) error) {
	m.Targets, m.table = nil, nil
	m.lazy = &lazyTargets{n: n, fps: fps, ids: ids, recs: recs, load: load}
}

// RawTargets returns the encodings of m's target ids and records that
// SetLazyTargets was given, when they have not been decoded since.
func (m *Message) RawTargets() (ids, recs []byte, ok bool) {
	l := m.lazy
	if l == nil {
		return nil, nil, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return nil, nil, false
	}
	return l.ids, l.recs, true
}

// LoadErr returns why m's lazily decoded targets could not be decoded.
func (m *Message) LoadErr() error {
	m.ready()
	if m.lazy == nil {
		return nil
	}
	return m.lazy.err
}

// ready decodes lazy targets on first use. Safe for concurrent use.
func (m *Message) ready() {
	l := m.lazy
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return
	}
	l.done = true
	if l.err = l.load(m); l.err != nil {
		m.Targets, m.table = nil, &targetTable{}
	}
	l.ids, l.recs, l.load = nil, nil, nil
}

// Fingerprints returns the distinct content fingerprints m's records
// hold, sorted, without decoding lazy targets.
func (m *Message) Fingerprints() []string {
	if l := m.lazy; l != nil {
		l.mu.Lock()
		done := l.done
		l.mu.Unlock()
		if !done {
			return l.fps
		}
	}
	m.ready()
	var out []string
	var last *Target
	add := func(t *Target) {
		if t != nil && t != last && !slices.Contains(out, t.Fingerprint) {
			out = append(out, t.Fingerprint)
		}
		last = t // records are shared between the targets of a request
	}
	if m.table != nil {
		for _, t := range m.table.records {
			add(t)
		}
		for _, t := range m.table.more {
			add(t)
		}
	} else {
		for _, t := range m.Targets {
			add(t)
		}
	}
	slices.Sort(out)
	return out
}

// Delivery is one record of the ledger: what one target was sent under
// one address, and with what outcome.
type Delivery struct {
	TargetKind message.TargetKind `json:"target_kind"`
	Target     string             `json:"target"`
	Address    string             `json:"address"`
	// Current says the record is in the addresses' view: the target's
	// last record under an address the state holds.
	Current bool `json:"current"`
	// Forgotten says the address is no longer in the state (or the target
	// was dropped from it); ForgottenAt is when.
	Forgotten   bool         `json:"forgotten"`
	ForgottenAt time.Time    `json:"forgotten_at,omitzero"`
	Kind        message.Kind `json:"kind"`
	// Fingerprint identifies the content sent (tag included); Content is
	// that content when the ledger knows it (ContentKnown).
	Fingerprint  string          `json:"fingerprint"`
	Content      message.Content `json:"content"`
	ContentKnown bool            `json:"content_known"`
	// Text is, for a personalised notification (Content is its template),
	// the text this target was sent, when the state knows it.
	Text        *message.Text `json:"text,omitempty"`
	Outcome     Outcome       `json:"outcome"`
	RequestID   string        `json:"request_id,omitempty"`
	Time        time.Time     `json:"time"`
	DeviceCount int           `json:"device_count,omitempty"`
	Reason      string        `json:"reason,omitempty"`
	Message     string        `json:"message,omitempty"`
	// Unreadable: the optional fields of the answer that could not be
	// read, as served (Target.Unreadable).
	Unreadable string `json:"unreadable,omitempty"`
}

// LedgerMessages yields every message of the ledger: the addresses' view
// in address order, then the ledger entries in the order recorded.
func (s *State) LedgerMessages() iter.Seq[*Message] {
	return func(yield func(*Message) bool) {
		for _, a := range s.Addresses() {
			if !yield(s.Messages[a]) {
				return
			}
		}
		for _, m := range s.Ledger {
			if !yield(m) {
				return
			}
		}
	}
}

// Contents returns the content of every fingerprint the ledger knows.
func (s *State) Contents() map[string]message.Content {
	out := map[string]message.Content{}
	for m := range s.LedgerMessages() {
		if m.Fingerprint != "" {
			if _, ok := out[m.Fingerprint]; !ok {
				out[m.Fingerprint] = m.Content
			}
		}
	}
	return out
}

// forgottenTimes returns, for each address of the ledger not in the
// addresses' view, when it was last forgotten.
func (s *State) forgottenTimes() map[string]time.Time {
	out := map[string]time.Time{}
	for _, m := range s.Ledger {
		if _, live := s.Messages[m.Address]; live || m.ForgottenAt.IsZero() {
			continue
		}
		if m.ForgottenAt.After(out[m.Address]) {
			out[m.Address] = m.ForgottenAt
		}
	}
	return out
}

// TargetHistory returns every record the ledger holds for the target of
// kind and id, oldest first (ties by address).
func (s *State) TargetHistory(kind message.TargetKind, id string) []Delivery {
	contents := s.Contents()
	forgot := s.forgottenTimes()
	var out []Delivery
	for m := range s.LedgerMessages() {
		if m.TargetKind != kind {
			continue
		}
		t := m.Target(id)
		if t == nil {
			continue
		}
		out = append(out, s.delivery(m, id, t, contents, forgot))
	}
	slices.SortStableFunc(out, func(a, b Delivery) int {
		return cmp.Or(a.Time.Compare(b.Time), cmp.Compare(a.Address, b.Address))
	})
	return out
}

func (s *State) delivery(m *Message, id string, t *Target, contents map[string]message.Content, forgot map[string]time.Time) Delivery {
	d := Delivery{TargetKind: m.TargetKind, Target: id, Address: m.Address, Kind: m.Kind,
		Fingerprint: t.Fingerprint, Outcome: t.Outcome, RequestID: t.RequestID, Time: t.Time,
		DeviceCount: t.DeviceCount, Reason: t.Reason, Message: t.Message, Unreadable: t.Unreadable}
	d.Current = s.Messages[m.Address] == m
	switch {
	case !m.ForgottenAt.IsZero():
		d.Forgotten, d.ForgottenAt = true, m.ForgottenAt
	case !d.Current:
		if at, ok := forgot[m.Address]; ok {
			d.Forgotten, d.ForgottenAt = true, at
		}
	}
	if c, ok := contents[t.Fingerprint]; ok {
		d.Content, d.ContentKnown = c, true
	} else if tag, ok := m.TagOf(t.Fingerprint); ok {
		d.Content.Tag = tag
	}
	fp := t.Fingerprint
	if t.Outcome == TestSend {
		fp = testTextKey(fp, t.RequestID)
	}
	if tx, ok := s.TextOf(fp, m.TargetKind, id); ok {
		d.Text = &tx
	}
	return d
}

// AddressEvent is one thing that happened to an address: a request's
// records of one content (Forgot false), or the address, or some of its
// targets, being forgotten.
type AddressEvent struct {
	Time         time.Time          `json:"time"`
	Forgot       bool               `json:"forgot,omitempty"`
	RequestID    string             `json:"request_id,omitempty"`
	Kind         message.Kind       `json:"kind"`
	TargetKind   message.TargetKind `json:"target_kind"`
	Fingerprint  string             `json:"fingerprint,omitempty"`
	Content      message.Content    `json:"content"`
	ContentKnown bool               `json:"content_known"`
	// Targets counts the targets; Outcomes breaks a request's down.
	Targets  int             `json:"targets"`
	Outcomes map[Outcome]int `json:"outcomes,omitempty"`
}

// AddressHistory returns what the ledger holds for addr, oldest first:
// one event per request and content (its records' earliest time), and
// one per forgetting. current says addr is in the addresses' view.
func (s *State) AddressHistory(addr string) (events []AddressEvent, current bool) {
	contents := s.Contents()
	type key struct{ req, fp string }
	byReq := map[key]*AddressEvent{}
	forgets := map[time.Time]*AddressEvent{}
	for m := range s.LedgerMessages() {
		if m.Address != addr {
			continue
		}
		if s.Messages[addr] == m {
			current = true
		}
		if !m.ForgottenAt.IsZero() {
			f := forgets[m.ForgottenAt]
			if f == nil {
				f = &AddressEvent{Time: m.ForgottenAt, Forgot: true, Kind: m.Kind, TargetKind: m.TargetKind}
				forgets[m.ForgottenAt] = f
			}
			f.Targets += m.TargetCount()
		}
		for _, t := range m.AllTargets() {
			k := key{t.RequestID, t.Fingerprint}
			ev := byReq[k]
			if ev == nil {
				ev = &AddressEvent{Time: t.Time, RequestID: t.RequestID, Kind: m.Kind, TargetKind: m.TargetKind,
					Fingerprint: t.Fingerprint, Outcomes: map[Outcome]int{}}
				if c, ok := contents[t.Fingerprint]; ok {
					ev.Content, ev.ContentKnown = c, true
				}
				byReq[k] = ev
			}
			if t.Time.Before(ev.Time) {
				ev.Time = t.Time
			}
			ev.Targets++
			ev.Outcomes[t.Outcome]++
		}
	}
	for _, ev := range byReq {
		events = append(events, *ev)
	}
	for _, ev := range forgets {
		events = append(events, *ev)
	}
	slices.SortFunc(events, func(a, b AddressEvent) int {
		return cmp.Or(a.Time.Compare(b.Time), cmpBool(a.Forgot, b.Forgot), cmp.Compare(a.RequestID, b.RequestID), cmp.Compare(a.Fingerprint, b.Fingerprint))
	})
	return events, current
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// LedgerCount counts the records of the ledger entries (State.Ledger)
// recorded at or after from and before before: what a Prune(before)
// would drop, from a given time on.
func (s *State) LedgerCount(from, before time.Time) int {
	n := 0
	for _, m := range s.Ledger {
		for _, t := range m.AllTargets() {
			if !t.Time.Before(from) && t.Time.Before(before) {
				n++
			}
		}
	}
	return n
}

// Prune drops the records of the ledger entries recorded before before,
// and the entries left empty; it returns how many records it dropped.
// The addresses' view is kept whole: it is what plans compare with.
func (s *State) Prune(before time.Time) (dropped int) {
	out := s.Ledger[:0:0]
	for _, m := range s.Ledger {
		var ids []string
		var recs []*Target
		n := 0
		for id, t := range m.AllTargets() {
			n++
			if t.Time.Before(before) {
				continue
			}
			ids, recs = append(ids, id), append(recs, t)
		}
		dropped += n - len(ids)
		switch {
		case len(ids) == 0:
			continue
		case len(ids) == n:
			out = append(out, m)
			continue
		}
		// A new entry: the old one may be shared (a fork, a reader).
		c := &Message{Address: m.Address, Kind: m.Kind, TargetKind: m.TargetKind, Fingerprint: m.Fingerprint,
			Content: m.Content, EarlierTags: maps.Clone(m.EarlierTags), ForgottenAt: m.ForgottenAt}
		c.setTargets(m.Compact(), ids, recs)
		out = append(out, c)
	}
	s.Ledger = out
	s.superseding, s.lastSuperseded = nil, nil
	s.pruneTexts()
	return dropped
}

// setTargets gives the new message m the targets ids (distinct) with the
// records recs (parallel): a compact table when compact, which sorts both
// by id and keeps them, a map otherwise.
func (m *Message) setTargets(compact bool, ids []string, recs []*Target) {
	if compact {
		sortByID(ids, recs)
		m.SetSortedTargets(ids, recs)
		return
	}
	m.Targets = make(map[string]*Target, len(ids))
	for i, id := range ids {
		m.Targets[id] = recs[i]
	}
}

// sortByID sorts ids (distinct) and recs, parallel, by id; a compact
// message yields them sorted already.
func sortByID(ids []string, recs []*Target) {
	if slices.IsSorted(ids) {
		return
	}
	idx := make([]int, len(ids))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(ids[a], ids[b]) })
	sids, srecs := make([]string, len(ids)), make([]*Target, len(ids))
	for i, j := range idx {
		sids[i], srecs[i] = ids[j], recs[j]
	}
	copy(ids, sids)
	copy(recs, srecs)
}

// RecordCount returns how many delivery records the ledger holds: every
// target of the addresses' view and of the ledger entries.
func (s *State) RecordCount() int {
	n := 0
	for m := range s.LedgerMessages() {
		n += m.TargetCount()
	}
	return n
}

// MergeLedger adds to s's ledger every record of other's ledger (its view
// and its entries) that s does not hold under the same address, so that
// replacing one copy of a state with another never loses what reached
// whom; it returns how many records it added. Records of an address that
// s's view does not hold are marked forgotten at at (or when other
// forgot them).
func (s *State) MergeLedger(other *State, at time.Time) (added int) {
	byAddr := map[string][]*Message{}
	for m := range s.LedgerMessages() {
		byAddr[m.Address] = append(byAddr[m.Address], m)
	}
	same := func(a, b *Target) bool {
		return a.Fingerprint == b.Fingerprint && a.RequestID == b.RequestID && a.Time.Equal(b.Time) && a.Outcome == b.Outcome
	}
	var entries []*Message
	for m := range other.LedgerMessages() {
		mine := byAddr[m.Address]
		var ids []string
		var recs []*Target
		for id, t := range m.AllTargets() {
			held := false
			for _, x := range mine {
				if r := x.Target(id); r != nil && same(r, t) {
					held = true
					break
				}
			}
			if !held {
				ids, recs = append(ids, id), append(recs, t)
			}
		}
		if len(ids) == 0 {
			continue
		}
		e := &Message{Address: m.Address, Kind: m.Kind, TargetKind: m.TargetKind, Fingerprint: m.Fingerprint,
			Content: m.Content, EarlierTags: maps.Clone(m.EarlierTags), ForgottenAt: m.ForgottenAt}
		if _, live := s.Messages[m.Address]; !live && e.ForgottenAt.IsZero() {
			e.ForgottenAt = at
		}
		e.setTargets(s.Compact, ids, recs)
		entries = append(entries, e)
		added += len(ids)
	}
	s.Ledger = append(slices.Clip(s.Ledger), entries...)
	s.mergeTexts(other)
	return added
}

// recordTestSend adds the records of a test send entry to the ledger, one
// entry per item. Every record has Outcome TestSend whatever the entry
// says, so a test send can never count as a delivery.
func (s *State) recordTestSend(e Entry) error {
	for _, it := range e.Items {
		if err := checkOutcomes("test send", &it); err != nil {
			return err
		}
		if len(it.Targets) == 0 {
			continue
		}
		m := &Message{Address: it.Address, Kind: it.Kind, TargetKind: it.TargetKind, Fingerprint: it.Fingerprint}
		if it.Content != nil {
			m.Content = *it.Content
		}
		ids := make([]string, 0, len(it.Targets))
		recs := make([]*Target, 0, len(it.Targets))
		seen := make(map[string]bool, len(it.Targets))
		for i, id := range it.Targets {
			if seen[id] {
				continue
			}
			seen[id] = true
			t := outcomeRecord(&e, &it, i)
			t.Outcome = TestSend
			ids, recs = append(ids, id), append(recs, &t)
		}
		m.setTargets(s.Compact, ids, recs)
		s.Ledger = append(s.Ledger, m)
		if len(it.Texts) > 0 && (it.TextOf == nil || len(ids) == len(it.Targets)) {
			// Kept apart from what deliveries sent, by request: a device
			// may be sent several people's texts as tests.
			s.recordText(testTextKey(it.Fingerprint, e.RequestID), it.TargetKind, ids, it.Texts, it.TextOf)
		}
	}
	return nil
}
