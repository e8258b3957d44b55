package statefile

// The binary snapshot body of formats 2 to 5: per message a string
// table, the distinct outcome records and runs of them over the sorted ids.

import (
	"bytes"
	"iter"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"pushform/message"
	"pushform/state"
)

// Outcome codes; outcomeOther is followed by the outcome as a string.
const (
	outcomeDelivered byte = iota
	outcomeSkipped
	outcomeFailed
	outcomeUnknown
	outcomeNone // the empty outcome
	outcomeOther
)

// recordKey identifies a distinct outcome record (Target holds a pointer).
type recordKey struct {
	t        state.Target
	hasSince bool
	since    time.Time
}

func keyOf(t state.Target) recordKey {
	k := recordKey{t: t}
	if t.UnreachableSince != nil {
		k.hasSince, k.since = true, *t.UnreachableSince
		k.t.UnreachableSince = nil
	}
	return k
}

// outcomeList encodes ts in order as a string table, the distinct
// records and runs of record indexes. It returns the distinct records.
// Targets that share one record (the same pointer: apply shares one among
// equal outcomes) are one run, found in one loop without comparing the
// records (a call per target was a third of an outcome line's encoding).
func (e *encoder) outcomeList(ts []*state.Target) []state.Target {
	return e.outcomeSeq(func(yield func(*state.Target, int) bool) {
		for i := 0; i < len(ts); {
			j := i + 1
			for j < len(ts) && ts[j] == ts[i] {
				j++
			}
			if !yield(ts[i], j-i) {
				return
			}
			i = j
		}
	})
}

// targets writes m's targets in id order: their ids (idSeq), then their
// records (outcomeSeq), from the offset it returns (of an encoder that
// does not spill), with the list of records outcomeSeq returns. A compact
// message yields its targets in order, without gathering them into one
// list.
func (e *encoder) targets(m *state.Message) (recsAt int, recs []state.Target) {
	n := m.TargetCount()
	if runs, records, ok := m.TargetRuns(); ok {
		switch {
		case !e.list.holds(n, runs):
			// The same encoding without a call per target: 40 ns a
			// target in the final snapshot of an apply became 10.
			e.uvarint(uint64(n))
			prev := ""
			for ids := range runs {
				prev = e.idRun(prev, ids)
			}
		case e.listLater:
			e.listAt = append(e.listAt, len(e.b))
		default:
			// The recipients list, as the usual campaign is sent: its
			// encoding is the same bytes.
			e.encoded(e.list.enc)
		}
		recsAt = len(e.b)
		return recsAt, e.outcomeSeq(func(yield func(*state.Target, int) bool) {
			for _, nos := range runs {
				for i := 0; i < len(nos); {
					j := i + 1
					for j < len(nos) && nos[j] == nos[i] {
						j++
					}
					if !yield(records[nos[i]], j-i) {
						return
					}
					i = j
				}
			}
		})
	}
	all := m.AllTargets()
	if !m.Compact() {
		ids, targets := m.SortedTargets()
		all = func(yield func(string, *state.Target) bool) {
			for i, id := range ids {
				if !yield(id, targets[i]) {
					return
				}
			}
		}
	}
	e.idSeq(n, func(yield func(string) bool) {
		for id := range all {
			if !yield(id) {
				return
			}
		}
	})
	recsAt = len(e.b)
	recs = e.outcomeSeq(func(yield func(*state.Target, int) bool) {
		for _, t := range all {
			if !yield(t, 1) {
				return
			}
		}
	})
	return recsAt, recs
}

// outcomeSeq is outcomeList for the targets of seq, in order: each record
// with how many targets in a row have it.
func (e *encoder) outcomeSeq(seq iter.Seq2[*state.Target, int]) []state.Target {
	strs := map[string]uint64{"": 0}
	var strList []string
	idx := func(s string) uint64 {
		i, ok := strs[s]
		if !ok {
			i = uint64(len(strs))
			strs[s] = i
			strList = append(strList, s)
		}
		return i
	}
	recs := map[recordKey]uint64{}
	var recList []state.Target
	type run struct{ rec, n uint64 }
	var runs []run
	var prev state.Target
	var prevPtr *state.Target
	var prevRec uint64
	i := -1
	for p, n := range seq {
		i++
		if i > 0 && p == prevPtr {
			runs[len(runs)-1].n += uint64(n)
			continue
		}
		prevPtr = p
		t := *p
		rec := prevRec
		if i == 0 || t != prev {
			k := keyOf(t)
			var ok bool
			if rec, ok = recs[k]; !ok {
				rec = uint64(len(recList))
				recs[k] = rec
				recList = append(recList, t)
				idx(t.Fingerprint)
				idx(t.RequestID)
				idx(t.Reason)
				idx(storedMessage(t))
				if outcomeCode(t.Outcome) == outcomeOther {
					idx(string(t.Outcome))
				}
			}
			prev, prevRec = t, rec
		}
		if len(runs) > 0 && runs[len(runs)-1].rec == rec {
			runs[len(runs)-1].n += uint64(n)
		} else {
			runs = append(runs, run{rec, uint64(n)})
		}
	}
	e.uvarint(uint64(len(strList)))
	for _, s := range strList {
		e.str(s)
	}
	e.uvarint(uint64(len(recList)))
	for _, t := range recList {
		c := outcomeCode(t.Outcome)
		e.b = append(e.b, c)
		if c == outcomeOther {
			e.uvarint(strs[string(t.Outcome)])
		}
		e.uvarint(strs[t.Fingerprint])
		e.uvarint(strs[t.RequestID])
		e.time(t.Time)
		e.varint(int64(t.DeviceCount))
		e.uvarint(strs[t.Reason])
		e.uvarint(strs[storedMessage(t)])
		e.boolean(t.UnreachableSince != nil)
		if t.UnreachableSince != nil {
			e.time(*t.UnreachableSince)
		}
		if e.snapshot >= 3 {
			e.uvarint(uint64(max(t.Unanswered, 0)))
		}
	}
	e.uvarint(uint64(len(runs)))
	for _, r := range runs {
		e.uvarint(r.rec)
		e.uvarint(r.n)
	}
	return recList
}

// A record's message string may hold, after the message, the unreadable
// fields of its answer (state.Target.Unreadable): message, unreadableSep,
// the fields, unreadableSep and the message's length in decimal. 0xFF is
// never in UTF-8 text, so no format change was needed (a reader of before
// sees it all as the message), and the length makes the split exact
// whatever either string holds.
const unreadableSep = "\xff"

// storedMessage is the message string stored for t: its message alone
// when it has no unreadable fields and holds no unreadableSep itself.
func storedMessage(t state.Target) string {
	if t.Unreadable == "" && !strings.Contains(t.Message, unreadableSep) {
		return t.Message
	}
	return t.Message + unreadableSep + t.Unreadable + unreadableSep + strconv.Itoa(len(t.Message))
}

// splitMessage undoes storedMessage.
func splitMessage(s string) (message, unreadable string) {
	end := strings.LastIndex(s, unreadableSep)
	if end < 0 {
		return s, ""
	}
	n, err := strconv.Atoi(s[end+1:])
	if err != nil || n < 0 || n >= end || s[n:n+1] != unreadableSep || strconv.Itoa(n) != s[end+1:] {
		return s, ""
	}
	message, unreadable = s[:n], s[n+1:end]
	if unreadable == "" && !strings.Contains(message, unreadableSep) {
		return s, "" // not what storedMessage writes: a message of before
	}
	return message, unreadable
}

func outcomeCode(o state.Outcome) byte {
	switch o {
	case state.Delivered:
		return outcomeDelivered
	case state.Skipped:
		return outcomeSkipped
	case state.Failed:
		return outcomeFailed
	case state.Unknown:
		return outcomeUnknown
	case "":
		return outcomeNone
	}
	return outcomeOther
}

// stateBody writes a state body: the recipients snapshot, the messages
// and the ledger.
func (e *encoder) stateBody(s *state.State) {
	e.recipientsBody(s)
	e.messagesBody(s)
}

// recipientsBody writes the first part of a state body: the recipients
// snapshot.
func (e *encoder) recipientsBody(s *state.State) {
	if s.Recipients == nil {
		e.b = append(e.b, 0)
		return
	}
	e.b = append(e.b, 1)
	e.time(s.Recipients.FetchedAt)
	e.boolean(s.Recipients.UserIDs != nil)
	if e.list != nil {
		e.encoded(e.list.enc) // made from these very ids
		return
	}
	e.ids(s.Recipients.UserIDs)
}

// messagesBody writes the rest of a state body: the messages and the
// ledger. It reads nothing recipientsBody does.
func (e *encoder) messagesBody(s *state.State) {
	addrs := s.Addresses()
	e.uvarint(uint64(len(addrs)))
	for _, a := range addrs {
		m := s.Messages[a]
		e.str(a)
		if m == nil {
			m = &state.Message{}
		}
		e.str(string(m.Kind))
		e.str(string(m.TargetKind))
		e.str(m.Fingerprint)
		e.content(m.Content)
		_, recs := e.targets(m)
		if e.snapshot >= 3 {
			e.earlierTags(m, recs)
		}
	}
	if e.snapshot >= 5 {
		e.ledger(s)
	}
	if e.snapshot >= 6 {
		e.accepted(s)
	}
	if e.snapshot >= 7 {
		e.overrides(s)
	}
	if e.snapshot >= 8 {
		e.texts(s)
	}
}

// earlierTags writes the tags of the earlier fingerprints some record still
// holds, sorted; the others no target needs.
func (e *encoder) earlierTags(m *state.Message, recs []state.Target) {
	tags := m.EarlierTags
	var fps []string
	for _, r := range recs {
		if _, ok := tags[r.Fingerprint]; ok && r.Fingerprint != m.Fingerprint && !slices.Contains(fps, r.Fingerprint) {
			fps = append(fps, r.Fingerprint)
		}
	}
	slices.Sort(fps)
	e.uvarint(uint64(len(fps)))
	for _, fp := range fps {
		e.str(fp)
		e.str(tags[fp])
	}
}

// outcomes decodes what encoder.outcomes wrote for n targets, calling set
// for each target in order.
func (d *decoder) outcomes(n int, set func(i int, t *state.Target)) {
	strs := []string{""}
	for range d.count(1) {
		strs = append(strs, d.str())
	}
	str := func() string {
		i := d.uvarint()
		if i >= uint64(len(strs)) {
			d.fail("string index out of range")
			return ""
		}
		return strs[i]
	}
	recs := make([]state.Target, d.count(8))
	for i := range recs {
		var t state.Target
		switch c := d.byte(); c {
		case outcomeDelivered:
			t.Outcome = state.Delivered
		case outcomeSkipped:
			t.Outcome = state.Skipped
		case outcomeFailed:
			t.Outcome = state.Failed
		case outcomeUnknown:
			t.Outcome = state.Unknown
		case outcomeNone:
		case outcomeOther:
			t.Outcome = state.Outcome(str())
		default:
			d.fail("bad outcome code")
		}
		t.Fingerprint = str()
		t.RequestID = str()
		t.Time = d.time()
		t.DeviceCount = d.int()
		t.Reason = str()
		t.Message, t.Unreadable = splitMessage(str())
		if d.boolean() {
			u := d.time()
			t.UnreachableSince = &u
		}
		if d.snapshot >= 3 {
			n := d.uvarint()
			if n > math.MaxInt32 {
				d.fail("unanswered count out of range")
			}
			t.Unanswered = int(n)
		}
		recs[i] = t
	}
	i := 0
	for range d.count(2) {
		rec, k := d.uvarint(), d.uvarint()
		if d.err != nil {
			return
		}
		if rec >= uint64(len(recs)) || k == 0 || k > uint64(n-i) {
			d.fail("bad outcome run")
			return
		}
		t := &recs[rec]
		for range int(k) {
			set(i, t)
			i++
		}
	}
	if d.err == nil && i != n {
		d.fail("outcome runs do not cover every target")
	}
}

func (d *decoder) stateBody(s *state.State) {
	// The recipients list as encoded: a message sent to exactly that list
	// (the usual campaign) shares its decoded ids.
	var recipients []byte
	switch d.byte() {
	case 0:
	case 1:
		snap := &state.Snapshot{FetchedAt: d.time()}
		isSet := d.boolean()
		start := d.off
		snap.UserIDs = d.ids()
		recipients = d.b[start:d.off]
		if isSet && snap.UserIDs == nil {
			snap.UserIDs = []string{}
		}
		s.Recipients = snap
	default:
		d.fail("bad recipients flag")
	}
	n := d.count(1)
	s.Messages = make(map[string]*state.Message, n)
	for range n {
		m := &state.Message{Address: d.str(), Kind: message.Kind(d.str()), TargetKind: message.TargetKind(d.str()), Fingerprint: d.str(), Content: d.content()}
		var ids []string
		if d.compact && len(recipients) > 1 && bytes.HasPrefix(d.b[d.off:], recipients) {
			ids = s.Recipients.UserIDs
			d.off += len(recipients)
		} else {
			ids = d.ids()
		}
		if d.err != nil {
			return
		}
		if _, dup := s.Messages[m.Address]; dup {
			d.fail("address " + strconv.Quote(m.Address) + " repeated")
			return
		}
		if d.compact {
			d.compactTargets(m, ids)
		} else {
			m.Targets = make(map[string]*state.Target, len(ids))
			// Targets with equal records share one: a million delivered
			// targets of a few requests cost a pointer each.
			d.outcomes(len(ids), func(i int, t *state.Target) { m.Targets[ids[i]] = t })
			if d.err == nil && len(m.Targets) != len(ids) {
				d.fail("target ids of " + strconv.Quote(m.Address) + " repeated")
			}
		}
		if d.snapshot >= 3 {
			d.earlierTags(m)
		}
		s.Messages[m.Address] = m
	}
	if d.snapshot >= 5 {
		d.ledger(s, recipients)
	}
	if d.snapshot >= 6 {
		d.accepted(s)
	}
	if d.snapshot >= 7 {
		d.overrides(s)
	}
	if d.snapshot >= 8 {
		d.texts(s)
	}
}

// idList is one list of the ledger's table of target ids, decoded once
// however many entries hold it.
type idList struct {
	once sync.Once
	raw  []byte
	ids  []string
	err  error
}

// get decodes the list: the recipients' ids when it is their very
// encoding (recipients), else a list of its own.
func (l *idList) get(recipients []byte, recipientIDs []string) ([]string, error) {
	l.once.Do(func() {
		if len(recipients) > 1 && bytes.Equal(l.raw, recipients) {
			l.ids = recipientIDs
			return
		}
		d := decoder{b: l.raw}
		l.ids = d.ids()
		if d.err == nil && d.off != len(d.b) {
			d.fail("unexpected data after the ids")
		}
		l.err = d.err
	})
	return l.ids, l.err
}

// compactTargets reads the records of ids into a sorted table. Encode
// writes ids sorted; a file that does not is sorted here.
func (d *decoder) compactTargets(m *state.Message, ids []string) {
	sorted := true
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			sorted = false
			break
		}
	}
	if sorted {
		m.SetSortedTargetsFunc(ids, func(set func(int, *state.Target)) { d.outcomes(len(ids), set) })
		return
	}
	recs := make([]*state.Target, len(ids))
	d.outcomes(len(ids), func(i int, t *state.Target) { recs[i] = t })
	if d.err != nil {
		return
	}
	order := make([]int, len(ids))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(ids[a], ids[b]) })
	sids, srecs := make([]string, len(ids)), make([]*state.Target, len(ids))
	for i, o := range order {
		sids[i], srecs[i] = ids[o], recs[o]
		if i > 0 && sids[i] == sids[i-1] {
			d.fail("target ids of " + strconv.Quote(m.Address) + " repeated")
			return
		}
	}
	m.SetSortedTargets(sids, srecs)
}

func (d *decoder) earlierTags(m *state.Message) {
	n := d.count(2)
	for range n {
		fp, tag := d.str(), d.str()
		if d.err != nil {
			return
		}
		if m.EarlierTags == nil {
			m.EarlierTags = make(map[string]string, n)
		}
		if _, dup := m.EarlierTags[fp]; dup || fp == m.Fingerprint {
			d.fail("earlier tag of " + strconv.Quote(m.Address) + " repeated")
			return
		}
		m.EarlierTags[fp] = tag
	}
}
