package statefile

// The binary encoding of one journal entry (journal formats 2 and 3).

import (
	"slices"

	"pushform/message"
	"pushform/state"
)

// AppendEntry appends the binary encoding of e to dst: the payload of a
// format-2 or format-3 journal line before its escaping, for backends
// that store each entry as a record of its own.
func AppendEntry(dst []byte, e state.Entry) []byte { return appendEntry(dst, e, nil) }

// appendEntry is AppendEntry with intents' id lists kept in r for their
// outcomes (see IDReuse); r may be nil.
func appendEntry(dst []byte, e state.Entry, r *IDReuse) []byte {
	enc := encoder{b: dst, reuse: r}
	enc.entry(e)
	return enc.b
}

// DecodeEntry decodes one entry that AppendEntry encoded.
func DecodeEntry(b []byte) (state.Entry, error) {
	d := decoder{b: b}
	e := d.entry()
	if d.err == nil && d.off != len(d.b) {
		d.fail("unexpected data after the entry")
	}
	return e, d.err
}

// entryTypes are the entry types coded as their index in one byte; any
// other is otherEntryType and its name.
var entryTypes = [...]state.EntryType{
	state.EntryIntent, state.EntryOutcome, state.EntryForget,
	state.EntrySnapshot, state.EntryMove, state.EntryRecord,
}

const otherEntryType = 0xff

func (e *encoder) entry(en state.Entry) {
	if c := slices.Index(entryTypes[:], en.Type); c >= 0 {
		e.b = append(e.b, byte(c))
	} else {
		e.b = append(e.b, otherEntryType)
		e.str(string(en.Type))
	}
	e.varint(en.Batch)
	e.time(en.Time)
	e.str(en.RequestID)
	e.varint(int64(en.Status))
	e.uvarint(uint64(len(en.Items)))
	for i, it := range en.Items {
		e.str(it.Address)
		e.str(string(it.Kind))
		e.str(string(it.TargetKind))
		e.str(it.Fingerprint)
		// A byte of flags, which was the content's boolean before texts:
		// 1 a content follows, 2 the targets' texts.
		var flags byte
		if it.Content != nil {
			flags |= 1
		}
		if len(it.Texts) > 0 {
			flags |= 2
		}
		e.b = append(e.b, flags)
		if it.Content != nil {
			e.content(*it.Content)
		}
		if len(it.Texts) > 0 {
			e.textList(it.Texts)
			e.boolean(it.TextOf != nil)
		}
		e.itemIDs(&en, i, it.Targets)
		for _, o := range it.TextOf { // after the ids, whose count they take
			e.uvarint(uint64(o))
		}
		e.uvarint(uint64(len(it.Outcomes)))
		if len(it.Outcomes) > 0 {
			e.outcomeList(it.Outcomes)
		}
		if en.Type == state.EntryMove {
			e.str(it.To)
		}
	}
}

func (d *decoder) entry() state.Entry {
	var e state.Entry
	switch c := d.byte(); {
	case int(c) < len(entryTypes):
		e.Type = entryTypes[c]
	case c == otherEntryType:
		e.Type = state.EntryType(d.str())
	default:
		d.fail("bad entry type")
	}
	e.Batch = d.varint()
	e.Time = d.time()
	e.RequestID = d.str()
	e.Status = d.int()
	n := d.count(7) // an item takes at least seven bytes
	if n > 0 {
		e.Items = make([]state.Item, n)
	}
	for i := range e.Items {
		it := state.Item{Address: d.str(), Kind: message.Kind(d.str()), TargetKind: message.TargetKind(d.str()), Fingerprint: d.str()}
		flags := d.byte()
		if flags > 3 {
			d.fail("bad item flags")
		}
		if flags&1 != 0 {
			c := d.content()
			it.Content = &c
		}
		var textOf bool
		if flags&2 != 0 {
			it.Texts = d.textList(1)
			textOf = d.boolean()
		}
		it.Targets = d.ids()
		if textOf && d.err == nil {
			it.TextOf = make([]int32, len(it.Targets))
			for j := range it.TextOf {
				v := d.uvarint()
				if v >= uint64(len(it.Texts)) {
					d.fail("text index out of range")
				}
				it.TextOf[j] = int32(v)
			}
		}
		// Outcomes are run-length coded, so their count is not bounded by
		// the data; they parallel the targets.
		if k := d.uvarint(); k > 0 {
			if k != uint64(len(it.Targets)) {
				d.fail("outcomes do not match targets")
			}
			if d.err != nil {
				return e
			}
			it.Outcomes = make([]*state.Target, len(it.Targets))
			d.outcomes(len(it.Targets), func(j int, t *state.Target) { it.Outcomes[j] = t })
		}
		if e.Type == state.EntryMove {
			it.To = d.str()
		}
		e.Items[i] = it
	}
	return e
}
