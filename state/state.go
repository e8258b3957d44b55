// Package state holds what pushform knows it has sent: per address the
// content last applied and per target the last outcome with its request id.
// The model here is pure data; backends (state/local, state/pg) load and
// persist it through the interfaces of manager.go.
package state

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"pushform/message"
	"slices"
	"sort"
	"time"
)

// FormatVersion is the version of the state file format written. Format 7
// added the policy overrides (State.Overrides); format 8 what
// personalised notifications sent each target (texts.go) and the
// templates of their content; format 6 the service its
// deliveries went to (State.Service) and the accepted shapes
// (State.Accepted); format 5 the ledger (State.Ledger,
// Message.ForgottenAt); format 4 put the header (serial, lineage,
// environment) under the checksum; format 3 added
// Message.EarlierTags and Target.Unanswered; 1 to 7 are still read.
const FormatVersion = 8

// State is the whole recorded state of one configuration and environment.
type State struct {
	Version int `json:"version"`
	// Lineage is fixed when the state is created; a saved plan is refused by
	// a state of another lineage.
	Lineage string `json:"lineage"`
	// Serial grows by one with every persisted write.
	Serial      uint64 `json:"serial"`
	Environment string `json:"environment"`
	// Service is the service the state's deliveries went to (the embedded
	// sandbox or a base URL's host); nil in a state written before format
	// 6, until a run records the service it is used with.
	Service *ServiceRecord `json:"service,omitempty"`
	// Recipients is the last recipients list fetched, used by plan
	// --refresh=false.
	Recipients *Snapshot           `json:"recipients,omitempty"`
	Messages   map[string]*Message `json:"messages"`
	// Ledger holds the delivery records that are no longer in the
	// addresses' view (Messages): those of forgotten addresses and
	// targets, and those an address's later content replaced. Together
	// with Messages it is the ledger of what reached whom (see ledger.go);
	// its entries are never written once recorded, only replaced.
	Ledger []*Message `json:"ledger,omitempty"`
	// Accepted maps each address a reviewed apply accepted to the
	// fingerprint of its evaluated shape (see accepted.go). Nil in a state
	// written before pushform recorded them (format 5 and older).
	Accepted map[string]string `json:"accepted,omitempty"`
	// Overrides are the deny policies applies overrode, oldest first (see
	// override.go).
	Overrides []Override `json:"overrides,omitempty"`
	// Compact makes the messages ApplyEntry creates hold their targets in
	// a compact table rather than in Message.Targets (see targets.go):
	// plan and apply read states this way, so ten million targets need no
	// map. Code that may meet such a state uses the accessor methods.
	Compact bool `json:"-"`

	// owned is set on a fork (see Fork): the addresses whose messages
	// the fork has copied, and may write to.
	owned map[string]bool
	// superseding holds the ledger entries this state value created for
	// records an intent replaced, by address and fingerprint, so one run
	// extends one entry per content rather than one per request.
	superseding map[supersedeKey]*Message
	// lastSuperseded is the entry superseding used last, for fingerprint
	// lastFP.
	lastSuperseded *Message
	lastFP         string
	// texts are what personalised notifications sent each target (see
	// texts.go); nil until one is recorded or read.
	texts *stateTexts
}

// Fork returns a state equal to s that ApplyEntry may change while s is
// read, unchanged, by others: it shares s's messages, and copies one the
// first time an entry writes to it. apply uses one when it sends while the
// plan is still being made from s. s must not change while the fork lives.
func (s *State) Fork() *State {
	f := *s
	f.Messages = maps.Clone(s.Messages)
	f.Ledger = slices.Clip(s.Ledger)
	f.Accepted = maps.Clone(s.Accepted)
	f.owned = map[string]bool{}
	f.superseding, f.lastSuperseded = nil, nil
	s.forkTexts(&f)
	return &f
}

// writable returns the message at addr, copied first on a fork that does
// not own it yet; nil when there is none.
func (s *State) writable(addr string) *Message {
	m := s.Messages[addr]
	if m == nil || s.owned == nil || s.owned[addr] {
		return m
	}
	m = m.clone()
	s.Messages[addr] = m
	s.owned[addr] = true
	return m
}

// Snapshot is a recipients list as fetched at one moment.
type Snapshot struct {
	FetchedAt time.Time `json:"fetched_at"`
	UserIDs   []string  `json:"user_ids"`
}

// Message is the recorded state of one notification or badge address.
type Message struct {
	Address    string             `json:"address"`
	Kind       message.Kind       `json:"kind"`
	TargetKind message.TargetKind `json:"target_kind"`
	// Fingerprint identifies the content last sent (or being sent) to this
	// address; Content is that content, kept for plan diffs.
	Fingerprint string          `json:"fingerprint"`
	Content     message.Content `json:"content"`
	// Targets by target id (a user id, device id, or a topic name). Equal
	// records are shared between targets to keep millions of them small:
	// never modify a *Target in place, store a new one. Nil when the
	// message is compact (see State.Compact): the accessor methods
	// (Target, SortedTargets, AllTargets, ...) work either way.
	Targets map[string]*Target `json:"targets"`
	// EarlierTags maps the fingerprint of content sent to this address
	// before Content to that content's tag ("" for none), so the planner
	// knows what tag a target that still holds it has: a device replaces a
	// notification only with one of the same tag (spec 2.1 rule 5). A
	// fingerprint missing here, and not Fingerprint, has an unknown tag.
	EarlierTags map[string]string `json:"earlier_tags,omitempty"`

	// ForgottenAt is set on a ledger entry (State.Ledger) of a forgotten
	// address or of forgotten targets: when they were forgotten. It is
	// zero on the entries of content an address's later content replaced.
	ForgottenAt time.Time `json:"forgotten_at,omitzero"`

	// table holds the targets of a compact message (see targets.go).
	table *targetTable
	// lazy, when set, decodes the targets on first use (see ledger.go).
	lazy *lazyTargets
}

// TagOf returns the tag of the content with fingerprint fp sent to this
// address, and whether it is known.
func (m *Message) TagOf(fp string) (string, bool) {
	if fp == m.Fingerprint {
		return m.Content.Tag, true
	}
	tag, ok := m.EarlierTags[fp]
	return tag, ok
}

// Outcome is the last known outcome of one target.
type Outcome string

// Outcomes. Unknown means a request was sent but its answer never recorded
// (a crash, a dropped connection): it may or may not have been delivered.
const (
	Delivered Outcome = "delivered"
	Skipped   Outcome = "skipped"
	Failed    Outcome = "failed"
	Unknown   Outcome = "unknown"
	// AlreadyDelivered: not sent, because the ledger showed the target
	// had received this content (or may have: an unknown outcome) under
	// another address or earlier. RequestID and Time are that delivery's,
	// and Reason names the address it was recorded under. It is not a
	// delivery of its own: frequency caps do not count it.
	AlreadyDelivered Outcome = "already-delivered"
	// TestSend records a test send (pushform test-send): the content was
	// sent to the target as a test, which is not a delivery of the
	// address. Reason holds the service's outcome (delivered, skipped,
	// failed or unknown), Message a failure's message. The plan, caps and
	// the ledger's delivery checks ignore it: the real send still goes.
	TestSend Outcome = "test-send"
	// Holdout records a target of a notification's holdout: it was kept
	// from the notification on purpose (Reason names the address), so
	// the brand can compare. Not a delivery.
	Holdout Outcome = "holdout"
	// Unfilled records a person of a personalised notification whose text
	// could not be filled in (an attribute missing from their data):
	// nothing was sent, and Reason says why. Not a delivery: once their
	// data allows, the next plan sends them their text.
	Unfilled Outcome = "unfilled"
)

// Target is the last outcome recorded for one target of a message.
type Target struct {
	Outcome Outcome `json:"outcome"`
	// Fingerprint is the content fingerprint of the send this outcome is for.
	Fingerprint string    `json:"fingerprint"`
	RequestID   string    `json:"request_id,omitempty"`
	Time        time.Time `json:"time"`
	// DeviceCount is set when delivered; -1 when the service did not say.
	DeviceCount int `json:"device_count,omitempty"`
	// Reason (skipped) or Message (failed) from the service.
	Reason           string     `json:"reason,omitempty"`
	Message          string     `json:"message,omitempty"`
	UnreachableSince *time.Time `json:"unreachable_since,omitempty"`
	// Unreadable holds the optional fields of the service's result that
	// could not be read, as served (`unreachableSince: "last Tuesday"`):
	// the outcome stands without them (pushapi.Result.Unreadable).
	Unreadable string `json:"unreadable,omitempty"`
	// Unanswered counts the requests that sent to this target and got no
	// usable answer (an ambiguous failure, an unreadable 2xx, an unknown
	// result) since its last known outcome; the planner stops re-sending a
	// target after a few. ApplyEntry keeps it: entries need not set it. A
	// crash is not counted (the intents journaled ahead of it may never
	// have left).
	Unanswered int `json:"unanswered,omitempty"`
}

// New returns an empty state with a fresh lineage.
func New(environment string) *State {
	return &State{
		Version:     FormatVersion,
		Lineage:     NewLineage(),
		Environment: environment,
		Messages:    map[string]*Message{},
	}
}

func NewLineage() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("state: reading random bytes: %v", err))
	}
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// Addresses returns the recorded addresses, sorted.
func (s *State) Addresses() []string {
	out := make([]string, 0, len(s.Messages))
	for a := range s.Messages {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// Entry is one journal record. Apply writes an Intent entry before each
// request and an Outcome entry after its answer, so a run killed at any
// instant leaves enough to know every target's state (see ApplyEntry).
type Entry struct {
	Type EntryType `json:"type"`
	// Batch identifies the request within one apply run; Intent and Outcome
	// of the same request share it.
	Batch     int64     `json:"batch"`
	Time      time.Time `json:"time"`
	RequestID string    `json:"request_id,omitempty"`
	Status    int       `json:"status,omitempty"`
	Items     []Item    `json:"items"`
}

// EntryType says what an Entry records.
type EntryType string

// Entry types.
const (
	// Intent: the batch is about to be sent. Its targets become Unknown
	// until an Outcome arrives.
	EntryIntent EntryType = "intent"
	// Outcome: the answer to a batch, with each target's outcome.
	EntryOutcome EntryType = "outcome"
	// Forget removes addresses (Items[].Address) or targets from state.
	EntryForget EntryType = "forget"
	// Snapshot records a recipients list (Items[0].Targets) fetched for the
	// run; without items, that the list recorded last no longer holds.
	EntrySnapshot EntryType = "snapshot"
	// Move renames addresses: the state recorded under Items[].Address
	// now belongs to Items[].To (a moved block, or state mv). Nothing is
	// sent. A move onto an address that has state is refused.
	EntryMove EntryType = "move"
	// Record: the targets already received this content (under another
	// address, or earlier under this one), so nothing is sent: like an
	// intent it sets the address's content, and each target's record is
	// its Items[].Outcomes entry (Outcome AlreadyDelivered, pointing at
	// the earlier delivery).
	EntryRecord EntryType = "record"
	// EntryTestSend: a test send's answer. Its items go to the ledger as
	// records of their own (Outcome TestSend), never to the addresses'
	// view: a test send does not count as a delivery.
	EntryTestSend EntryType = "test-send"
)

// Item is one message's part of an Entry.
type Item struct {
	Address     string             `json:"address"`
	Kind        message.Kind       `json:"kind,omitempty"`
	TargetKind  message.TargetKind `json:"target_kind,omitempty"`
	Fingerprint string             `json:"fingerprint,omitempty"`
	// Content is set on intents, so replay can create the address.
	Content *message.Content `json:"content,omitempty"`
	Targets []string         `json:"targets,omitempty"`
	// Outcomes parallels Targets on outcome entries. Targets with equal
	// outcomes may share one (a request's usually do); nothing may write
	// through these pointers.
	Outcomes []*Target `json:"outcomes,omitempty"`
	// To is the new address of a move entry.
	To string `json:"to,omitempty"`
	// Texts are, on an intent of a personalised notification (Content is
	// its template), the texts its targets are sent, and TextOf gives,
	// parallel to Targets, the index in Texts of each one's (nil: every
	// target is sent Texts[0]). The state keeps them (see texts.go).
	Texts  []message.Text `json:"texts,omitempty"`
	TextOf []int32        `json:"text_of,omitempty"`
}

// TextAt is the text of target i of a personalised item.
func (it *Item) TextAt(i int) message.Text {
	if it.TextOf == nil {
		return it.Texts[0]
	}
	return it.Texts[it.TextOf[i]]
}

// ApplyEntry folds one journal entry into the state. Replaying a journal
// over the snapshot it was started from gives the same state as the run
// that wrote it had in memory.
func (s *State) ApplyEntry(e Entry) error {
	if s.Messages == nil {
		s.Messages = map[string]*Message{}
	}
	switch e.Type {
	case EntryIntent, EntryRecord:
		return s.applySend(e)
	case EntryOutcome:
		return s.applyOutcome(e)
	case EntryForget:
		for _, it := range e.Items {
			if len(it.Targets) == 0 {
				s.forgetAddress(it.Address, e.Time)
				continue
			}
			if m := s.writable(it.Address); m != nil {
				s.forgetTargets(m, it.Targets, e.Time)
				for _, id := range it.Targets {
					m.DeleteTarget(id)
				}
			}
		}
	case EntryMove:
		if err := s.move(e.Items); err != nil {
			return err
		}
		s.moveAccepted(e.Items)
	case EntryAccept:
		return s.accept(e.Items)
	case EntryTestSend:
		return s.recordTestSend(e)
	case EntryOverride:
		return s.recordOverrides(e)
	case EntrySnapshot:
		switch len(e.Items) {
		case 0:
			// The list is being fetched again while requests go out
			// (apply streams it): the last one no longer describes what
			// was sent, and none stands until the new one is recorded.
			s.Recipients = nil
		case 1:
			s.Recipients = &Snapshot{FetchedAt: e.Time, UserIDs: e.Items[0].Targets}
		}
	default:
		return fmt.Errorf("journal: unknown entry type %q", e.Type)
	}
	return nil
}

// applySend folds an intent or a record entry into the state: each
// item's targets get the content, and a record (unknown until an outcome
// arrives, or the earlier delivery a record entry names).
func (s *State) applySend(e Entry) error {
	for _, it := range e.Items {
		if e.Type == EntryRecord {
			if err := checkOutcomes("record", &it); err != nil {
				return err
			}
		}
		m := s.writable(it.Address)
		if m == nil {
			m = &Message{Address: it.Address, Targets: map[string]*Target{}}
			if s.Compact {
				m.makeCompact()
			}
			s.Messages[it.Address] = m
			if s.owned != nil {
				s.owned[it.Address] = true
			}
		}
		if it.Kind != "" {
			m.Kind = it.Kind
		}
		if it.TargetKind != "" {
			m.TargetKind = it.TargetKind
		}
		if len(it.Texts) > 0 && e.Type == EntryIntent {
			s.recordText(it.Fingerprint, m.TargetKind, it.Targets, it.Texts, it.TextOf)
		}
		oldFP, oldContent := m.Fingerprint, m.Content
		if m.Fingerprint != it.Fingerprint {
			// Targets not in this request keep the earlier content:
			// remember its tag.
			if m.Fingerprint != "" {
				if m.EarlierTags == nil {
					m.EarlierTags = map[string]string{}
				}
				m.EarlierTags[m.Fingerprint] = m.Content.Tag
			}
			delete(m.EarlierTags, it.Fingerprint)
		}
		if it.Content != nil {
			m.Content = *it.Content
		}
		m.Fingerprint = it.Fingerprint
		t := &Target{Outcome: Unknown, Fingerprint: it.Fingerprint, Time: e.Time}
		var carried []*Target // by Unanswered count, shared
		var shared *Target    // the last record of a record entry
		m.updateTargets(it.Targets, func(i int, prev *Target) *Target {
			// The ledger keeps what the target had: other content, or
			// this content delivered before (a repeat, a --replace).
			if prev != nil && (prev.Fingerprint != it.Fingerprint || e.Type == EntryIntent && prev.Outcome == Delivered) {
				s.supersede(m, oldFP, oldContent, it.Targets[i], prev)
			}
			if e.Type == EntryRecord {
				r := *it.Outcomes[i]
				if r.Fingerprint == "" {
					r.Fingerprint = it.Fingerprint
				}
				// Targets of one earlier request share one record.
				if shared == nil || *shared != r {
					shared = &r
				}
				return shared
			}
			// A target still unknown keeps its count of unanswered
			// requests across the new send.
			if prev != nil && prev.Outcome == Unknown && prev.Unanswered > 0 {
				var rec *Target
				rec, carried = withUnanswered(t, prev.Unanswered, carried)
				return rec
			}
			return t
		})
	}
	return nil
}

// applyOutcome folds an outcome entry into the state: each target's
// record becomes its outcome.
func (s *State) applyOutcome(e Entry) error {
	for _, it := range e.Items {
		m := s.writable(it.Address)
		if m == nil {
			return fmt.Errorf("journal: outcome for %s without an intent", it.Address)
		}
		if err := checkOutcomes("outcome", &it); err != nil {
			return err
		}
		var prev *Target
		m.updateTargets(it.Targets, func(i int, cur *Target) *Target {
			if i > 0 && it.Outcomes[i] == it.Outcomes[i-1] && prev.Outcome != Unknown {
				return prev // the same record as the target before: the same result
			}
			t := outcomeRecord(&e, &it, i)
			if t.Outcome == Unknown {
				// Sent, and no usable answer: one more unanswered
				// request on top of those before it.
				t.Unanswered = 1
				if cur != nil && cur.Outcome == Unknown {
					t.Unanswered += cur.Unanswered
				}
			}
			// Most outcomes of a request are equal: share one record
			// (copied only when it differs, so t stays on the stack).
			if prev == nil || *prev != t {
				rec := t
				prev = &rec
			}
			return prev
		})
	}
	return nil
}

// move applies the items of a move entry, all or none: every address must
// be recorded and every new address free, also of the other items' moves.
func (s *State) move(items []Item) error {
	from := make(map[string]bool, len(items))
	to := make(map[string]bool, len(items))
	for _, it := range items {
		switch m := s.Messages[it.Address]; {
		case it.To == "":
			return fmt.Errorf("journal: move of %s has no new address", it.Address)
		case m == nil || from[it.Address]:
			return fmt.Errorf("journal: move of %s, which is not in the state", it.Address)
		case to[it.To] || s.Messages[it.To] != nil && !movedAway(items, it.To):
			return fmt.Errorf("journal: refusing to move %s to %s, which already has state", it.Address, it.To)
		}
		from[it.Address], to[it.To] = true, true
	}
	moved := make([]*Message, len(items))
	for i, it := range items {
		moved[i] = s.Messages[it.Address]
		delete(s.Messages, it.Address)
	}
	// On a fork, a message not owned yet keeps sharing its targets under
	// its new address.
	owned := make([]bool, len(items))
	for i, it := range items {
		owned[i] = s.owned[it.Address]
		delete(s.owned, it.Address)
	}
	for i, it := range items {
		c := *moved[i]
		c.Address = it.To
		s.Messages[it.To] = &c
		if s.owned != nil {
			s.owned[it.To] = owned[i]
		}
	}
	return nil
}

// movedAway reports whether items move addr elsewhere, freeing it.
func movedAway(items []Item, addr string) bool {
	for _, it := range items {
		if it.Address == addr {
			return true
		}
	}
	return false
}

// withUnanswered returns a copy of t with Unanswered n, shared through
// cache (indexed by n) between the targets of one entry.
func withUnanswered(t *Target, n int, cache []*Target) (*Target, []*Target) {
	if n < len(cache) && cache[n] != nil {
		return cache[n], cache
	}
	c := *t
	c.Unanswered = n
	if n < 64 { // counts stay small; do not grow the cache for a corrupt one
		for len(cache) <= n {
			cache = append(cache, nil)
		}
		cache[n] = &c
	}
	return &c, cache
}

// checkOutcomes refuses an entry item whose outcomes do not parallel its
// targets, one each.
func checkOutcomes(kind string, it *Item) error {
	if len(it.Outcomes) != len(it.Targets) {
		return fmt.Errorf("journal: %s for %s has %d outcomes for %d targets", kind, it.Address, len(it.Outcomes), len(it.Targets))
	}
	if slices.Contains(it.Outcomes, nil) {
		return fmt.Errorf("journal: %s for %s has a null outcome", kind, it.Address)
	}
	return nil
}

// outcomeRecord is the record of it's i-th outcome in e: what the outcome
// leaves unsaid (request id, time, fingerprint) is the entry's and the
// item's, and an answered request counts no unanswered ones.
func outcomeRecord(e *Entry, it *Item, i int) Target {
	t := *it.Outcomes[i]
	if t.RequestID == "" {
		t.RequestID = e.RequestID
	}
	if t.Time.IsZero() {
		t.Time = e.Time
	}
	if t.Fingerprint == "" {
		t.Fingerprint = it.Fingerprint
	}
	t.Unanswered = 0
	return t
}
