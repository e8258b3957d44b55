package state

import (
	"cmp"
	"iter"
	"maps"
	"slices"
	"sync"

	"pushform/message"
)

// The texts of personalised notifications: a record's fingerprint is its
// template's (the content's identity), and what each person was actually
// sent, filled in for them, is kept here, by fingerprint, target kind and
// target, apart from the records. Plans never read them; history does.
// The last text sent to a target under one template is kept (a repeat
// after the person's data changed keeps the later text). A state read
// from a file decodes them only when asked (SetLazyTexts).

// testTextKey is what the texts of a test send are kept under: the
// template's fingerprint and the request id.
func testTextKey(fp, requestID string) string { return fp + "@" + requestID }

// TextGroup is the texts of one template for one kind of target: IDs
// sorted and distinct, and Of[i] the index in Texts of IDs[i]'s.
type TextGroup struct {
	Fingerprint string
	TargetKind  message.TargetKind
	Texts       []message.Text
	IDs         []string
	Of          []int32
}

type textKey struct {
	fp   string
	kind message.TargetKind
}

// textLog is one group: the targets read from a file (base: ids sorted,
// of their texts in texts), then runs of targets as intents record them,
// each with its item's texts, in the order recorded (a later one wins).
// Nothing is hashed or copied as they are recorded: a million people's
// texts take a run per request.
type textLog struct {
	texts []message.Text
	base  []string
	of    []int32
	runs  []textRun
	// byID indexes the runs once something looks a target up.
	byID map[string]runAt
}

// textRun is an intent item's targets and texts (shared with the item:
// never written).
type textRun struct {
	ids   []string
	texts []message.Text
	of    []int32 // nil: every target has texts[0]
}

func (r *textRun) at(i int) int32 {
	if r.of == nil {
		return 0
	}
	return r.of[i]
}

// runAt is a target's place in the runs.
type runAt struct{ run, pos int32 }

// stateTexts is a state's texts: decoded (logs), or still encoded (raw).
type stateTexts struct {
	mu   sync.Mutex
	logs map[textKey]*textLog
	// raw and load: the texts of a state read from a file, decoded the
	// first time something reads or records them.
	raw  []byte
	load func() ([]TextGroup, error)
	err  error
	// shared: logs may be shared with another state (Fork); each is
	// copied before this state first writes to it (owned).
	shared bool
	owned  map[textKey]bool
}

// textsOf returns s's texts, made on first need.
func (s *State) textsOf() *stateTexts {
	if s.texts == nil {
		s.texts = &stateTexts{}
	}
	return s.texts
}

// ready decodes raw texts on first use; the caller holds mu.
func (st *stateTexts) ready() {
	if st.load == nil {
		return
	}
	load := st.load
	st.load, st.raw = nil, nil
	groups, err := load()
	if err != nil {
		st.err = err
		return
	}
	for _, g := range groups {
		st.setGroup(g)
	}
}

func (st *stateTexts) setGroup(g TextGroup) {
	if len(g.IDs) == 0 {
		return
	}
	l := &textLog{texts: g.Texts, base: g.IDs, of: g.Of}
	if st.logs == nil {
		st.logs = map[textKey]*textLog{}
	}
	st.logs[textKey{g.Fingerprint, g.TargetKind}] = l
}

// writable returns the log of k, copied first when it may be shared.
func (st *stateTexts) writable(k textKey) *textLog {
	if st.logs == nil {
		st.logs = map[textKey]*textLog{}
	}
	l := st.logs[k]
	if l == nil {
		l = &textLog{}
		st.logs[k] = l
		if st.shared {
			st.owned[k] = true
		}
		return l
	}
	if st.shared && !st.owned[k] {
		l = &textLog{texts: l.texts, base: l.base, of: l.of, runs: slices.Clip(l.runs)}
		st.logs[k] = l
		st.owned[k] = true
	}
	return l
}

// recordText records that the targets ids of content fp (kind k) are sent
// texts (of: by target, nil for texts[0] to all).
func (s *State) recordText(fp string, k message.TargetKind, ids []string, texts []message.Text, of []int32) {
	if len(ids) == 0 {
		return
	}
	st := s.textsOf()
	st.mu.Lock()
	defer st.mu.Unlock()
	st.ready()
	l := st.writable(textKey{fp, k})
	l.runs = append(l.runs, textRun{ids: ids, texts: texts, of: of})
	l.byID = nil
}

// TextOf returns the text the target id (of kind k) was last sent of the
// personalised content fp, if the state knows it.
func (s *State) TextOf(fp string, k message.TargetKind, id string) (message.Text, bool) {
	if s.texts == nil {
		return message.Text{}, false
	}
	st := s.texts
	st.mu.Lock()
	defer st.mu.Unlock()
	st.ready()
	l := st.logs[textKey{fp, k}]
	if l == nil {
		return message.Text{}, false
	}
	if l.byID == nil && len(l.runs) > 0 {
		l.byID = map[string]runAt{}
		for r, run := range l.runs {
			for i, id := range run.ids {
				l.byID[id] = runAt{int32(r), int32(i)}
			}
		}
	}
	if at, ok := l.byID[id]; ok {
		run := &l.runs[at.run]
		return run.texts[run.at(int(at.pos))], true
	}
	if i, ok := slices.BinarySearch(l.base, id); ok {
		return l.texts[l.of[i]], true
	}
	return message.Text{}, false
}

// TextsErr returns why the state's texts could not be decoded.
func (s *State) TextsErr() error {
	if s.texts == nil {
		return nil
	}
	st := s.texts
	st.mu.Lock()
	defer st.mu.Unlock()
	st.ready()
	return st.err
}

// SetLazyTexts makes the state's texts come from load, called the first
// time something reads or records one; raw is their encoding, which
// RawTexts hands back while they have not been decoded, so the state can
// be written back without decoding them.
func (s *State) SetLazyTexts(raw []byte, load func() ([]TextGroup, error)) {
	s.texts = &stateTexts{raw: raw, load: load}
}

// RawTexts returns the encoding SetLazyTexts was given, when the texts
// have not been decoded since.
func (s *State) RawTexts() ([]byte, bool) {
	if s.texts == nil {
		return nil, false
	}
	st := s.texts
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.raw, st.load != nil
}

// TextGroups returns the state's texts, group by group in fingerprint
// and kind order, each target once with the last text recorded for it.
func (s *State) TextGroups() iter.Seq[TextGroup] {
	if s.texts == nil {
		return func(func(TextGroup) bool) {}
	}
	st := s.texts
	st.mu.Lock()
	st.ready()
	keys := slices.SortedFunc(maps.Keys(st.logs), func(a, b textKey) int {
		return cmp.Or(cmp.Compare(a.fp, b.fp), cmp.Compare(a.kind, b.kind))
	})
	logs := make([]*textLog, len(keys))
	for i, k := range keys {
		logs[i] = st.logs[k]
	}
	st.mu.Unlock()
	return func(yield func(TextGroup) bool) {
		for i, k := range keys {
			if g := logs[i].group(k); len(g.IDs) > 0 && !yield(g) {
				return
			}
		}
	}
}

// group flattens the log: each target once, its last text, and the
// texts some target has, in the order of the base and the runs (a text
// two runs share is there twice: finding them would hash every text).
func (l *textLog) group(k textKey) TextGroup {
	if len(l.runs) == 0 {
		return TextGroup{Fingerprint: k.fp, TargetKind: k.kind, Texts: l.texts, IDs: l.base, Of: l.of}
	}
	type entry struct {
		id   string
		seq  int
		text int32 // in the base's texts, then each run's
	}
	n := len(l.base)
	offs := make([]int32, len(l.runs)) // where each run's texts start
	total := int32(len(l.texts))
	for i, r := range l.runs {
		n += len(r.ids)
		offs[i] = total
		total += int32(len(r.texts))
	}
	all := make([]entry, 0, n)
	for i, id := range l.base {
		all = append(all, entry{id, len(all), l.of[i]})
	}
	for i, r := range l.runs {
		for j, id := range r.ids {
			all = append(all, entry{id, len(all), offs[i] + r.at(j)})
		}
	}
	byID := func(a, b entry) int { return cmp.Or(cmp.Compare(a.id, b.id), cmp.Compare(a.seq, b.seq)) }
	if !slices.IsSortedFunc(all, byID) { // runs of one apply usually come in id order
		slices.SortFunc(all, byID)
	}
	g := TextGroup{Fingerprint: k.fp, TargetKind: k.kind, IDs: make([]string, 0, len(all)), Of: make([]int32, 0, len(all))}
	renum := make([]int32, total) // 0: unused, else 1 + its index in g.Texts
	for i, e := range all {
		if i+1 < len(all) && all[i+1].id == e.id {
			continue // a later text for the same target
		}
		g.IDs = append(g.IDs, e.id)
		g.Of = append(g.Of, e.text)
		renum[e.text] = 1
	}
	next := int32(0)
	for i := range renum {
		if renum[i] != 0 {
			next++
			renum[i] = next
		}
	}
	g.Texts = make([]message.Text, 0, next)
	add := func(texts []message.Text, off int32) {
		for j, t := range texts {
			if renum[off+int32(j)] != 0 {
				g.Texts = append(g.Texts, t)
			}
		}
	}
	add(l.texts, 0)
	for i, r := range l.runs {
		add(r.texts, offs[i])
	}
	for i, o := range g.Of {
		g.Of[i] = renum[o] - 1
	}
	return g
}

// forkTexts makes f's texts share s's until either writes.
func (s *State) forkTexts(f *State) {
	if s.texts == nil {
		return
	}
	st := s.texts
	st.mu.Lock()
	defer st.mu.Unlock()
	st.ready()
	f.texts = &stateTexts{logs: maps.Clone(st.logs), shared: true, owned: map[textKey]bool{}, err: st.err}
	if len(st.logs) > 0 {
		st.shared, st.owned = true, map[textKey]bool{}
	}
}

// pruneTexts drops the texts of contents no record of the ledger holds
// any more.
func (s *State) pruneTexts() {
	if s.texts == nil {
		return
	}
	st := s.texts
	st.mu.Lock()
	st.ready()
	n := len(st.logs)
	st.mu.Unlock()
	if n == 0 {
		return
	}
	held := map[string]bool{}
	for m := range s.LedgerMessages() {
		for _, fp := range m.Fingerprints() {
			held[fp] = true
		}
		for _, t := range m.AllTargets() {
			if t.Outcome == TestSend {
				held[testTextKey(t.Fingerprint, t.RequestID)] = true
			}
		}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	maps.DeleteFunc(st.logs, func(k textKey, _ *textLog) bool { return !held[k.fp] })
}

// mergeTexts adds the texts of other that s does not hold.
func (s *State) mergeTexts(other *State) {
	for g := range other.TextGroups() {
		var ids []string
		var of []int32
		for i, id := range g.IDs {
			if _, ok := s.TextOf(g.Fingerprint, g.TargetKind, id); !ok {
				ids, of = append(ids, id), append(of, g.Of[i])
			}
		}
		s.recordText(g.Fingerprint, g.TargetKind, ids, g.Texts, of)
	}
}
