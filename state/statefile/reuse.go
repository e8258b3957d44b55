package statefile

import (
	"slices"

	"pushform/state"
)

// Two encodings are copied rather than made again, each only where the
// ids are equal, string for string, to those the copy was made from: the
// bytes are then the ones encoding them gives (FuzzIDReuse and
// FuzzSharedList hold each copy to that reference).

// IDReuse lets an outcome's journal line copy the encoded id list of its
// intent's line instead of front-coding the same ids again: an apply
// journals every request's ids twice. An intent hands its items' ids over
// under an explicit key, its request (Entry.Batch) and the item's place,
// and IDReuse keeps a copy of them of its own with their encoding; the
// outcome of that request copies the encoding when its ids are equal to
// that copy. The zero value is ready; one IDReuse is for one writer at a
// time. It keeps at most reuseMax intents not answered yet.
type IDReuse struct {
	m    map[reuseKey]*encodedIDs
	free []*encodedIDs // answered: their memory for the next intents
}

// reuseKey names an intent's item: its request and its place in it.
type reuseKey struct {
	batch int64
	item  int
}

// encodedIDs is an intent item's ids, copied (the strings, which nothing
// can change, are shared), and their encoding (encoder.ids).
type encodedIDs struct {
	ids []string
	enc []byte
}

const (
	// reuseFrom is the shortest list worth keeping: a request of a few
	// ids costs little to encode twice.
	reuseFrom = 64
	// reuseMax bounds the intents kept. Apply has at most twice its
	// parallelism and one unanswered; intents left over (a run that
	// stopped) are dropped together when more arrive.
	reuseMax = 256
)

// itemIDs writes the ids of item i of entry en (encoder.ids, the
// reference): copied from its intent's line for an outcome whose intent r
// kept with equal ids, else encoded, and kept for the outcome when en is
// an intent.
func (e *encoder) itemIDs(en *state.Entry, i int, ids []string) {
	r := e.reuse
	if r == nil || len(ids) < reuseFrom || en.Type != state.EntryIntent && en.Type != state.EntryOutcome {
		e.ids(ids)
		return
	}
	key := reuseKey{en.Batch, i}
	if en.Type == state.EntryOutcome {
		if k := r.m[key]; k != nil && slices.Equal(k.ids, ids) {
			e.b = append(e.b, k.enc...)
			delete(r.m, key)
			clear(k.ids) // holds no strings for the garbage collector
			r.free = append(r.free, k)
			return
		}
		e.ids(ids)
		return
	}
	start := len(e.b)
	e.ids(ids)
	if r.m == nil || len(r.m) >= reuseMax {
		r.m = make(map[reuseKey]*encodedIDs)
	}
	var k *encodedIDs
	if n := len(r.free); n > 0 {
		k, r.free = r.free[n-1], r.free[:n-1]
	} else {
		k = &encodedIDs{}
	}
	k.ids = append(k.ids[:0], ids...)
	k.enc = append(k.enc[:0], e.b[start:]...)
	r.m[key] = k
}

// listFrom is the shortest recipients list a snapshot encodes once for
// the messages sent to exactly its ids (sharedList): a million ids take
// 10 ms to encode.
const listFrom = 1 << 12

// encodedList is a snapshot's recipients list and its encoding (its
// count, then the ids front-coded), made once (encode) for the list and
// for each message sent to exactly those ids: the usual campaign.
type encodedList struct {
	ids []string
	enc []byte
}

// sharedList returns s's recipients list, to encode once, when it is long
// and a message seems sent to exactly its ids (as many, the same first
// and last, in runs: encoder.targets compares them all); else nil, and
// each list is encoded where it is written.
func sharedList(s *state.State) *encodedList {
	if s.Recipients == nil || len(s.Recipients.UserIDs) < listFrom {
		return nil
	}
	ids := s.Recipients.UserIDs
	for _, m := range s.Messages {
		if m == nil || m.TargetCount() != len(ids) {
			continue
		}
		runs, _, ok := m.TargetRuns()
		if !ok {
			continue
		}
		var first, last string
		for run := range runs {
			if first == "" {
				first = run[0]
			}
			last = run[len(run)-1]
		}
		if first == ids[0] && last == ids[len(ids)-1] {
			return &encodedList{ids: ids}
		}
	}
	return nil
}

// encode makes l's encoding, once.
func (l *encodedList) encode() {
	if l.enc != nil {
		return
	}
	e := encoder{}
	e.ids(l.ids)
	l.enc = e.b
}

// holds reports whether runs, n ids in order, are l's ids: a message's
// targets, run by run.
func (l *encodedList) holds(n int, runs func(yield func([]string, []uint32) bool)) bool {
	if l == nil || n != len(l.ids) {
		return false
	}
	k := 0
	for ids := range runs {
		if len(ids) > len(l.ids)-k || !slices.Equal(l.ids[k:k+len(ids)], ids) {
			return false
		}
		k += len(ids)
	}
	return k == len(l.ids)
}
