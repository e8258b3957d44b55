package statefile

// The ledger section of snapshot format 5: forgotten and current entries
// with their records, each behind its length so readers skip it.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"maps"
	"slices"
	"strconv"

	"pushform/message"
	"pushform/state"
)

// ledger writes the ledger entries. Their target ids come first, as a
// table of distinct lists (campaigns to one recipients list share one),
// each front-coded with its count and prefixed by its length in bytes;
// then the entries: address, kind, target kind, fingerprint, content,
// whether and when it was forgotten, earlier tags, the fingerprints its
// records hold, its target count, the index of its ids in the table, and
// its records (a message's outcome encoding) prefixed by their length. An
// entry read lazily and never decoded is written back from the bytes it
// was read from.
func (e *encoder) ledger(s *state.State) {
	type entryIDs struct {
		list int
		recs []byte
	}
	var lists [][]byte
	seen := map[uint32][]int{}
	refs := make([]entryIDs, len(s.Ledger))
	for i, m := range s.Ledger {
		ids, recs, ok := m.RawTargets()
		if !ok {
			sec := encoder{snapshot: e.snapshot}
			at, _ := sec.targets(m)
			ids, recs = sec.b[:at:at], sec.b[at:]
		}
		h := crc32.Checksum(ids, castagnoli)
		k := -1
		for _, j := range seen[h] {
			if bytes.Equal(lists[j], ids) {
				k = j
				break
			}
		}
		if k < 0 {
			k = len(lists)
			lists = append(lists, ids)
			seen[h] = append(seen[h], k)
		}
		refs[i] = entryIDs{k, recs}
	}
	size := 0
	for _, l := range lists {
		size += len(l) + binary.MaxVarintLen64
	}
	for _, r := range refs {
		size += len(r.recs) + 256
	}
	if e.spillTo == nil {
		e.b = slices.Grow(e.b, size) // once, rather than doubling as it goes
	}
	e.uvarint(uint64(len(lists)))
	for _, l := range lists {
		e.uvarint(uint64(len(l)))
		e.b = append(e.b, l...)
		e.maybeSpill()
	}
	e.uvarint(uint64(len(s.Ledger)))
	for i, m := range s.Ledger {
		e.str(m.Address)
		e.str(string(m.Kind))
		e.str(string(m.TargetKind))
		e.str(m.Fingerprint)
		e.content(m.Content)
		e.boolean(!m.ForgottenAt.IsZero())
		if !m.ForgottenAt.IsZero() {
			e.time(m.ForgottenAt)
		}
		tags := slices.Sorted(maps.Keys(m.EarlierTags))
		e.uvarint(uint64(len(tags)))
		for _, fp := range tags {
			e.str(fp)
			e.str(m.EarlierTags[fp])
		}
		fps := m.Fingerprints()
		e.uvarint(uint64(len(fps)))
		for _, fp := range fps {
			e.str(fp)
		}
		e.uvarint(uint64(m.TargetCount()))
		e.uvarint(uint64(refs[i].list))
		e.uvarint(uint64(len(refs[i].recs)))
		e.b = append(e.b, refs[i].recs...)
		e.maybeSpill()
	}
}

// ledger reads what encoder.ledger wrote. A compact state decodes each
// entry's targets on first use (state.Message.SetLazyTargets); the
// snapshot's checksum has been verified, so only a file written wrongly
// can fail then (state.Message.LoadErr).
func (d *decoder) ledger(s *state.State, recipients []byte) {
	var recipientIDs []string
	if s.Recipients != nil {
		recipientIDs = s.Recipients.UserIDs
	}
	lists := make([]*idList, d.count(1))
	for i := range lists {
		lists[i] = &idList{raw: d.bytes(d.count(1))}
	}
	n := d.count(8)
	if n > 0 {
		s.Ledger = make([]*state.Message, 0, n)
	}
	for range n {
		m := &state.Message{Address: d.str(), Kind: message.Kind(d.str()), TargetKind: message.TargetKind(d.str()), Fingerprint: d.str(), Content: d.content()}
		if d.boolean() {
			m.ForgottenAt = d.time()
		}
		for range d.count(2) {
			fp, tag := d.str(), d.str()
			if m.EarlierTags == nil {
				m.EarlierTags = map[string]string{}
			}
			m.EarlierTags[fp] = tag
		}
		var fps []string
		for range d.count(1) {
			fps = append(fps, d.str())
		}
		targets, li := d.uvarint(), d.uvarint()
		recs := d.bytes(d.count(1))
		if d.err != nil {
			return
		}
		if li >= uint64(len(lists)) || targets > uint64(len(lists[li].raw)) {
			d.fail("ledger entry of " + strconv.Quote(m.Address) + " names ids it does not have")
			return
		}
		list := lists[li]
		load := func(m *state.Message) error {
			ids, err := list.get(recipients, recipientIDs)
			if err == nil && len(ids) != int(targets) {
				err = errors.New("target count does not match")
			}
			if err != nil {
				return fmt.Errorf("ledger entry of %s: %w", m.Address, err)
			}
			sd := decoder{b: recs, snapshot: d.snapshot, compact: true}
			sd.compactTargets(m, ids)
			if sd.err == nil && sd.off != len(sd.b) {
				sd.fail("unexpected data after the records")
			}
			if sd.err != nil {
				return fmt.Errorf("ledger entry of %s: %w", m.Address, sd.err)
			}
			return nil
		}
		if d.compact {
			m.SetLazyTargets(int(targets), fps, list.raw, recs, load)
		} else {
			ids, err := list.get(recipients, recipientIDs)
			if err != nil {
				d.fail("ledger entry of " + strconv.Quote(m.Address) + ": " + err.Error())
				return
			}
			m.Targets = make(map[string]*state.Target, len(ids))
			sd := decoder{b: recs, snapshot: d.snapshot}
			sd.outcomes(len(ids), func(i int, t *state.Target) { m.Targets[ids[i]] = t })
			switch {
			case sd.err != nil:
				d.fail("ledger entry of " + strconv.Quote(m.Address) + ": " + sd.err.Error())
			case sd.off != len(sd.b):
				d.fail("ledger entry of " + strconv.Quote(m.Address) + ": unexpected data after the records")
			case len(m.Targets) != len(ids) || len(ids) != int(targets):
				d.fail("ledger entry of " + strconv.Quote(m.Address) + ": target ids repeated or miscounted")
			}
		}
		s.Ledger = append(s.Ledger, m)
	}
}
