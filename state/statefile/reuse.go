package statefile

import (
	"slices"
	"unsafe"

	"pushform/state"
)

// IDReuse lets an outcome's journal line copy the encoded id list of its
// intent's line instead of front-coding the same ids again: an apply
// journals every request's ids twice, and the outcome names the very
// slice the intent did. The zero value is ready; one IDReuse is for one
// writer at a time. It keeps the encodings of at most reuseMax intents
// not answered yet.
//
// It also keeps the encoding of the last long list a snapshot entry (the
// recipients list) journaled, for the snapshot that ends the run: see
// TakeList.
type IDReuse struct {
	m    map[*string]encodedIDs
	free [][]byte     // encodings taken, their memory for the next ones
	list *EncodedList // see TakeList
}

// EncodedList is a list of ids and its encoding as a snapshot writes it
// (its count, then the ids front-coded), kept from a journal line: a
// snapshot whose recipients list, or a message's targets, are the very
// same strings copies it rather than encoding them again (EncodeWith).
type EncodedList struct {
	ids []string
	enc []byte
	// sum is headerSum of ids when enc was made: the list changed in
	// place since (the same slice, so theseIDs cannot tell) is not it.
	sum uint64
}

// TakeList returns the last long id list a snapshot entry encoded since
// the last call, or nil, and forgets it.
func (r *IDReuse) TakeList() *EncodedList {
	l := r.list
	r.list = nil
	return l
}

// encodedIDs is an intent item's id list and its encoding (ids()).
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
	// listFrom is the shortest recipients list whose encoding is kept for
	// the snapshot: a million ids take 10 ms to encode.
	listFrom = 1 << 12
)

// itemIDs writes ids (ids()) of an item of an entry of type t.
func (e *encoder) itemIDs(t state.EntryType, ids []string) {
	r := e.reuse
	if r != nil && t == state.EntrySnapshot && len(ids) >= listFrom {
		start := len(e.b)
		e.ids(ids)
		r.list = &EncodedList{ids: ids, enc: slices.Clone(e.b[start:]), sum: headerSum(ids)}
		return
	}
	if r == nil || len(ids) < reuseFrom || t != state.EntryIntent && t != state.EntryOutcome {
		e.ids(ids)
		return
	}
	key := unsafe.SliceData(ids)
	if t == state.EntryOutcome {
		if got, ok := r.m[key]; ok && theseIDs(got.ids, ids) {
			e.b = append(e.b, got.enc...)
			delete(r.m, key)
			r.free = append(r.free, got.enc[:0])
			return
		}
		e.ids(ids)
		return
	}
	start := len(e.b)
	e.ids(ids)
	if r.m == nil || len(r.m) >= reuseMax {
		r.m = make(map[*string]encodedIDs)
	}
	var enc []byte
	if k := len(r.free); k > 0 {
		enc, r.free = r.free[k-1], r.free[:k-1]
	}
	r.m[key] = encodedIDs{ids: ids, enc: append(enc, e.b[start:]...)}
}

// theseIDs reports whether a and b hold the very same strings: the
// string headers are compared, so equal ids in other memory are not the
// same, and a list changed in place since is not either.
func theseIDs(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 || unsafe.SliceData(a) == unsafe.SliceData(b) {
		return true // the very slice: each header would be compared with itself
	}
	for i := range a {
		if unsafe.StringData(a[i]) != unsafe.StringData(b[i]) || len(a[i]) != len(b[i]) {
			return false
		}
	}
	return true
}

// holds reports whether ids are the very strings l was encoded from:
// those of l (theseIDs), unchanged since (headerSum, which alone tells
// when ids is l's own slice).
func (l *EncodedList) holds(ids []string) bool {
	return l != nil && theseIDs(l.ids, ids) && headerSum(ids) == l.sum
}

// headerSum mixes the string headers of ids (data pointer and length),
// a millisecond for a million.
func headerSum(ids []string) uint64 {
	const prime = 0x100000001b3
	h := uint64(len(ids))
	for _, id := range ids {
		h = (h ^ uint64(uintptr(unsafe.Pointer(unsafe.StringData(id))))) * prime
		h = (h ^ uint64(len(id))) * prime
	}
	return h
}

// runsHold reports whether runs, in order, are the very strings of l: a
// message's targets borrowed from the recipients list, run by run.
func (l *EncodedList) runsHold(n int, runs func(yield func([]string, []uint32) bool)) bool {
	if l == nil || n != len(l.ids) {
		return false
	}
	k := 0
	for ids := range runs {
		if len(ids) > len(l.ids)-k || !theseIDs(l.ids[k:k+len(ids)], ids) {
			return false
		}
		k += len(ids)
	}
	return k == len(l.ids)
}
