package statefile

import (
	"unsafe"

	"pushform/state"
)

// IDReuse lets an outcome's journal line copy the encoded id list of its
// intent's line instead of front-coding the same ids again: an apply
// journals every request's ids twice, and the outcome names the very
// slice the intent did. The zero value is ready; one IDReuse is for one
// writer at a time. It keeps the encodings of at most reuseMax intents
// not answered yet.
type IDReuse struct {
	m    map[*string]encodedIDs
	free [][]byte // encodings taken, their memory for the next ones
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
)

// itemIDs writes ids (ids()) of an item of an entry of type t.
func (e *encoder) itemIDs(t state.EntryType, ids []string) {
	r := e.reuse
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
	for i := range a {
		if unsafe.StringData(a[i]) != unsafe.StringData(b[i]) || len(a[i]) != len(b[i]) {
			return false
		}
	}
	return true
}
