package statefile

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"pushform/message"
	"pushform/state"
)

// Round trips compare what is decoded with the original value, field by
// field, so an encoder that consistently drops or bends a field fails.
// Only what the formats do not promise is normalized: a nil list reads
// back as an empty one and the reverse, and a time keeps its instant and
// zone offset but not its zone name.

func sameTime(a, b time.Time) bool {
	_, ao := a.Zone()
	_, bo := b.Zone()
	return a.Equal(b) && ao == bo
}

func sameTimePtr(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return sameTime(*a, *b)
}

func sameIDs(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func sameContent(a, b message.Content) bool {
	if (a.BadgeCount == nil) != (b.BadgeCount == nil) || a.BadgeCount != nil && *a.BadgeCount != *b.BadgeCount {
		return false
	}
	a.BadgeCount, b.BadgeCount = nil, nil
	return a == b
}

// diffTarget describes how got differs from want; "" when it does not.
func diffTarget(want, got state.Target) string {
	if !sameTime(want.Time, got.Time) || !sameTimePtr(want.UnreachableSince, got.UnreachableSince) {
		return fmt.Sprintf("times %v / %v, want %v / %v", got.Time, got.UnreachableSince, want.Time, want.UnreachableSince)
	}
	want.Time, got.Time = time.Time{}, time.Time{}
	want.UnreachableSince, got.UnreachableSince = nil, nil
	if want != got {
		return fmt.Sprintf("%+v, want %+v", got, want)
	}
	return ""
}

// diffState describes how got differs from want, the version aside (a
// state of any version is written in the current one); "" when equal.
func diffState(want, got *state.State) string {
	if got.Lineage != want.Lineage || got.Serial != want.Serial || got.Environment != want.Environment {
		return fmt.Sprintf("header %q %d %q, want %q %d %q", got.Lineage, got.Serial, got.Environment, want.Lineage, want.Serial, want.Environment)
	}
	if (want.Recipients == nil) != (got.Recipients == nil) {
		return fmt.Sprintf("recipients %+v, want %+v", got.Recipients, want.Recipients)
	}
	if r := want.Recipients; r != nil {
		if !sameTime(r.FetchedAt, got.Recipients.FetchedAt) || !sameIDs(r.UserIDs, got.Recipients.UserIDs) {
			return fmt.Sprintf("recipients %+v, want %+v", got.Recipients, r)
		}
	}
	if len(got.Messages) != len(want.Messages) {
		return fmt.Sprintf("%d messages, want %d", len(got.Messages), len(want.Messages))
	}
	if len(got.Ledger) != len(want.Ledger) {
		return fmt.Sprintf("%d ledger entries, want %d", len(got.Ledger), len(want.Ledger))
	}
	for i, wm := range want.Ledger {
		gm := got.Ledger[i]
		if !sameTime(gm.ForgottenAt, wm.ForgottenAt) || len(gm.EarlierTags) != len(wm.EarlierTags) {
			return fmt.Sprintf("ledger entry %d: %+v, want %+v", i, gm, wm)
		}
		for fp, tag := range wm.EarlierTags {
			if gt, ok := gm.EarlierTags[fp]; !ok || gt != tag {
				return fmt.Sprintf("ledger entry %d: earlier tags %v, want %v", i, gm.EarlierTags, wm.EarlierTags)
			}
		}
	}
	ledger := func(s *state.State) map[string]*state.Message {
		out := map[string]*state.Message{}
		for i, m := range s.Ledger {
			c := *m
			c.Targets = map[string]*state.Target{}
			for id, t := range m.AllTargets() {
				c.Targets[id] = t
			}
			out[fmt.Sprintf("ledger entry %d", i)] = &c
		}
		return out
	}
	for addr, wm := range maps.All(mapsJoin(want.Messages, ledger(want))) {
		gm := mapsJoin(got.Messages, ledger(got))[addr]
		if gm == nil {
			return "message " + addr + " lost"
		}
		if gm.Address != wm.Address || gm.Kind != wm.Kind || gm.TargetKind != wm.TargetKind || gm.Fingerprint != wm.Fingerprint || !sameContent(gm.Content, wm.Content) {
			return fmt.Sprintf("message %s: %+v, want %+v", addr, gm, wm)
		}
		if len(gm.Targets) != len(wm.Targets) {
			return fmt.Sprintf("message %s: %d targets, want %d", addr, len(gm.Targets), len(wm.Targets))
		}
		for id, wt := range wm.Targets {
			gt := gm.Targets[id]
			if gt == nil {
				return fmt.Sprintf("message %s: target %q lost", addr, id)
			}
			if d := diffTarget(*wt, *gt); d != "" {
				return fmt.Sprintf("message %s, target %q: %s", addr, id, d)
			}
		}
	}
	return ""
}

func mapsJoin(a, b map[string]*state.Message) map[string]*state.Message {
	out := maps.Clone(a)
	maps.Copy(out, b)
	return out
}

// diffEntry describes how got differs from want; "" when equal.
func diffEntry(want, got state.Entry) string {
	if got.Type != want.Type || got.Batch != want.Batch || !sameTime(got.Time, want.Time) || got.RequestID != want.RequestID || got.Status != want.Status {
		return fmt.Sprintf("entry %s %d %v %q %d, want %s %d %v %q %d", got.Type, got.Batch, got.Time, got.RequestID, got.Status,
			want.Type, want.Batch, want.Time, want.RequestID, want.Status)
	}
	if len(got.Items) != len(want.Items) {
		return fmt.Sprintf("%d items, want %d", len(got.Items), len(want.Items))
	}
	for i, wi := range want.Items {
		gi := got.Items[i]
		if gi.Address != wi.Address || gi.Kind != wi.Kind || gi.TargetKind != wi.TargetKind || gi.Fingerprint != wi.Fingerprint {
			return fmt.Sprintf("item %d: %+v, want %+v", i, gi, wi)
		}
		if (gi.Content == nil) != (wi.Content == nil) || wi.Content != nil && !sameContent(*gi.Content, *wi.Content) {
			return fmt.Sprintf("item %d: content %+v, want %+v", i, gi.Content, wi.Content)
		}
		if !slices.Equal(gi.Texts, wi.Texts) || !slices.Equal(gi.TextOf, wi.TextOf) || (gi.TextOf == nil) != (wi.TextOf == nil) {
			return fmt.Sprintf("item %d: texts %+v %v, want %+v %v", i, gi.Texts, gi.TextOf, wi.Texts, wi.TextOf)
		}
		if !sameIDs(gi.Targets, wi.Targets) {
			return fmt.Sprintf("item %d: targets %q, want %q", i, gi.Targets, wi.Targets)
		}
		if len(gi.Outcomes) != len(wi.Outcomes) {
			return fmt.Sprintf("item %d: %d outcomes, want %d", i, len(gi.Outcomes), len(wi.Outcomes))
		}
		for j := range wi.Outcomes {
			if d := diffTarget(*wi.Outcomes[j], *gi.Outcomes[j]); d != "" {
				return fmt.Sprintf("item %d, outcome %d: %s", i, j, d)
			}
		}
	}
	return ""
}

// gen builds values from a fuzzer's seed and strings. Strings are taken
// from the fuzzer's text, cut at random places, so they hold whatever it
// tries: newlines, backslashes, invalid UTF-8, long shared prefixes.
type gen struct {
	r    *rand.Rand
	text string
	json bool // the value goes through JSON: valid UTF-8, years 1..9999
}

func (g *gen) str() string {
	if g.text == "" || g.r.IntN(4) == 0 {
		return []string{"", "a", "u1", "delivered"}[g.r.IntN(4)]
	}
	i := g.r.IntN(len(g.text))
	s := g.text[i:min(len(g.text), i+g.r.IntN(40))]
	if g.json {
		s = strings.ToValidUTF8(s, "?")
	}
	return s
}

func (g *gen) time() time.Time {
	switch g.r.IntN(4) {
	case 0:
		return time.Time{}
	case 1:
		return time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	}
	year := 1 + g.r.IntN(9999)
	if !g.json && g.r.IntN(4) == 0 {
		year = -5000 + g.r.IntN(20000)
	}
	t := time.Date(year, time.Month(1+g.r.IntN(12)), 1+g.r.IntN(28), g.r.IntN(24), g.r.IntN(60), g.r.IntN(60), g.r.IntN(1e9), time.UTC)
	if g.r.IntN(2) == 0 {
		t = t.In(time.FixedZone("", (g.r.IntN(28*60)-14*60)*60))
	}
	return t
}

func (g *gen) content() message.Content {
	c := message.Content{Title: g.str(), Body: g.str(), OpenToURL: g.str(), Tag: g.str(), SilentInForeground: g.r.IntN(2) == 0}
	if g.r.IntN(2) == 0 {
		n := g.r.IntN(1000) - 10
		c.BadgeCount = &n
	}
	if g.r.IntN(3) == 0 {
		c.Template = "user" + g.str()
	}
	return c
}

func (g *gen) target() state.Target {
	outcomes := []state.Outcome{state.Delivered, state.Skipped, state.Failed, state.Unknown, "", state.Outcome(g.str())}
	t := state.Target{Outcome: outcomes[g.r.IntN(len(outcomes))], Fingerprint: g.str(), RequestID: g.str(), Time: g.time(),
		DeviceCount: g.r.IntN(5) - 1, Reason: g.str(), Message: g.str()}
	if g.r.IntN(3) == 0 {
		since := g.time()
		t.UnreachableSince = &since
	}
	if g.r.IntN(4) == 0 {
		t.Unreadable = g.str()
	}
	return t
}

// ids returns n distinct ids (a set is what the state keeps), some
// sharing long prefixes.
func (g *gen) ids(n int) []string {
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		id := g.str()
		if g.r.IntN(3) == 0 {
			id = fmt.Sprintf("user-with-a-long-shared-prefix-%06d", g.r.IntN(1e6))
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

func (g *gen) state() *state.State {
	s := &state.State{Version: state.FormatVersion, Lineage: state.NewLineage(), Serial: g.r.Uint64(), Environment: []string{"test", "production"}[g.r.IntN(2)],
		Messages: map[string]*state.Message{}}
	if g.r.IntN(2) == 0 {
		s.Recipients = &state.Snapshot{FetchedAt: g.time(), UserIDs: g.ids(g.r.IntN(20))}
		sort.Strings(s.Recipients.UserIDs)
	}
	for range g.r.IntN(5) {
		m := &state.Message{Address: g.str(), Kind: message.Kind(g.str()), TargetKind: message.TargetKind(g.str()), Fingerprint: g.str(),
			Content: g.content(), Targets: map[string]*state.Target{}}
		// Some records shared, as apply stores them.
		shared := g.target()
		for _, id := range g.ids(g.r.IntN(50)) {
			if g.r.IntN(2) == 0 {
				m.Targets[id] = &shared
			} else {
				t := g.target()
				m.Targets[id] = &t
			}
		}
		s.Messages[m.Address] = m
	}
	// Ledger entries: forgotten or replaced, some holding the very
	// recipients list (its ids are shared when decoded compact).
	for range g.r.IntN(4) {
		m := &state.Message{Address: g.str(), Kind: message.Kind(g.str()), TargetKind: message.TargetKind(g.str()), Fingerprint: g.str(),
			Content: g.content(), Targets: map[string]*state.Target{}}
		if g.r.IntN(2) == 0 {
			m.ForgottenAt = g.time()
		}
		if g.r.IntN(2) == 0 {
			m.EarlierTags = map[string]string{g.str(): g.str()}
		}
		ids := g.ids(g.r.IntN(30))
		if s.Recipients != nil && g.r.IntN(2) == 0 {
			ids = s.Recipients.UserIDs
		}
		shared := g.target()
		for _, id := range ids {
			m.Targets[id] = &shared
		}
		s.Ledger = append(s.Ledger, m)
	}
	return s
}

func (g *gen) entry() state.Entry {
	types := []state.EntryType{state.EntryIntent, state.EntryOutcome, state.EntryForget, state.EntrySnapshot, state.EntryRecord, state.EntryType(g.str())}
	e := state.Entry{Type: types[g.r.IntN(len(types))], Batch: g.r.Int64N(1<<40) - 10, Time: g.time(), RequestID: g.str(), Status: g.r.IntN(600)}
	for range g.r.IntN(4) {
		it := state.Item{Address: g.str(), Kind: message.Kind(g.str()), TargetKind: message.TargetKind(g.str()), Fingerprint: g.str(),
			Targets: g.ids(g.r.IntN(30))}
		if g.r.IntN(2) == 0 {
			c := g.content()
			it.Content = &c
		}
		if g.r.IntN(3) == 0 {
			for range 1 + g.r.IntN(3) {
				it.Texts = append(it.Texts, message.Text{Title: g.str(), Body: g.str(), OpenToURL: g.str(), Tag: g.str(), Locale: g.str()})
			}
			if g.r.IntN(2) == 0 {
				it.TextOf = make([]int32, len(it.Targets))
				for j := range it.TextOf {
					it.TextOf[j] = int32(g.r.IntN(len(it.Texts)))
				}
			}
		}
		if len(it.Targets) > 0 && g.r.IntN(2) == 0 {
			it.Outcomes = make([]*state.Target, len(it.Targets))
			for j := range it.Outcomes {
				t := g.target()
				it.Outcomes[j] = &t
			}
		}
		e.Items = append(e.Items, it)
	}
	return e
}

func FuzzStateRoundTrip(f *testing.F) {
	f.Add(uint64(1), "u1 u2 u10 \n\\ \xff\xfe user-0001 user-0002")
	f.Add(uint64(2), "")
	f.Add(uint64(3), strings.Repeat("abc\x00", 30))
	f.Fuzz(func(t *testing.T, seed uint64, text string) {
		g := &gen{r: rand.New(rand.NewPCG(seed, 1)), text: text}
		want := g.state()
		var buf bytes.Buffer
		if err := Encode(&buf, want); err != nil {
			t.Fatal(err)
		}
		got, err := Decode(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatalf("a state as encoded does not decode: %v", err)
		}
		if d := diffState(want, got); d != "" {
			t.Fatalf("decoded state differs from the original: %s", d)
		}
		// A compact read keeps the ledger's targets undecoded: written
		// back untouched it is the same bytes, and read it is the same.
		for _, touch := range []bool{false, true} {
			c, err := DecodeCompact(bytes.NewReader(buf.Bytes()))
			if err != nil {
				t.Fatalf("a state as encoded does not decode compact: %v", err)
			}
			if touch {
				for _, m := range c.Ledger {
					m.Target("x")
				}
			}
			var again bytes.Buffer
			if err := Encode(&again, c); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again.Bytes(), buf.Bytes()) {
				t.Fatalf("compact state (ledger decoded: %v) written back differs", touch)
			}
		}
		h, err := DecodeHeader(bytes.NewReader(buf.Bytes()))
		if err != nil || h.Lineage != want.Lineage || h.Serial != want.Serial || h.Environment != want.Environment {
			t.Fatalf("header %+v, %v; want the state's", h, err)
		}
	})
}

func FuzzJournalRoundTrip(f *testing.F) {
	f.Add(uint64(1), "u1 u2 \n\\ \xff\xfe user-0001 user-0002", false)
	f.Add(uint64(2), "", true)
	f.Add(uint64(3), "a\\nb\nc\\", true)
	f.Fuzz(func(t *testing.T, seed uint64, text string, format1 bool) {
		g := &gen{r: rand.New(rand.NewPCG(seed, 2)), text: text, json: format1}
		format := JournalFormat
		if format1 {
			format = 1
		}
		want := make([]state.Entry, 1+g.r.IntN(4))
		jh := JournalHeader{Journal: format, Lineage: state.NewLineage(), Serial: g.r.Uint64(), Environment: "test"}
		b, err := AppendJournalLine(nil, jh)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			want[i] = g.entry()
			if b, err = AppendEntryLine(b, want[i], format); err != nil {
				t.Fatal(err)
			}
		}
		var got []state.Entry
		h, valid, err := ReadJournal(bytes.NewReader(b), func(e state.Entry) error { got = append(got, e); return nil })
		if err != nil || valid != int64(len(b)) || h != jh {
			t.Fatalf("ReadJournal = %+v, %d, %v; want %+v, %d", h, valid, err, jh, len(b))
		}
		if len(got) != len(want) {
			t.Fatalf("%d entries read, want %d", len(got), len(want))
		}
		for i := range want {
			if d := diffEntry(want[i], got[i]); d != "" {
				t.Fatalf("entry %d differs from the original: %s", i, d)
			}
		}
		if n := bytes.Count(b, []byte("\n")); n != 1+len(want) {
			t.Fatalf("%d lines for %d entries: an entry's encoding holds a raw newline", n, len(want))
		}
		if !utf8.Valid(b) && format1 {
			t.Fatal("a format-1 journal is not valid UTF-8")
		}
	})
}
