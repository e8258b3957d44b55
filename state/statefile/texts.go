package statefile

// Format 8's part of the snapshot body, after the overrides: what
// personalised notifications sent each target (state.TextGroup), as a
// section of known length that a reader decodes only when asked, so a
// plan never decodes a million texts it does not read.

import (
	"pushform/message"
	"pushform/state"
)

// texts writes the texts section: its length, then the groups. Texts read
// from a file and not decoded since are written back as they were read.
func (e *encoder) texts(s *state.State) {
	if raw, ok := s.RawTexts(); ok {
		e.uvarint(uint64(len(raw)))
		e.encoded(raw)
		return
	}
	sub := encoder{}
	n := 0
	for g := range s.TextGroups() {
		n++
		sub.str(g.Fingerprint)
		sub.str(string(g.TargetKind))
		sub.textList(g.Texts)
		sub.ids(g.IDs)
		for _, i := range g.Of {
			sub.uvarint(uint64(i))
		}
	}
	if n == 0 {
		e.uvarint(0)
		return
	}
	body := sub.b
	sub.b = nil
	sub.uvarint(uint64(n))
	head := sub.b
	e.uvarint(uint64(len(head) + len(body)))
	e.encoded(head)
	e.encoded(body)
}

// texts reads the texts section, to be decoded on first use.
func (d *decoder) texts(s *state.State) {
	n := d.count(1)
	raw := d.bytes(n)
	if d.err != nil || n == 0 {
		return
	}
	s.SetLazyTexts(raw, func() ([]state.TextGroup, error) {
		dd := decoder{b: raw}
		groups := dd.textGroups()
		if dd.err == nil && dd.off != len(dd.b) {
			dd.fail("unexpected data after the texts")
		}
		return groups, dd.err
	})
}

func (d *decoder) textGroups() []state.TextGroup {
	n := d.count(4)
	var out []state.TextGroup
	for range n {
		g := state.TextGroup{Fingerprint: d.str(), TargetKind: message.TargetKind(d.str())}
		g.Texts = d.textList(1)
		k := len(g.Texts)
		g.IDs = d.ids()
		if d.err != nil {
			return nil
		}
		g.Of = make([]int32, len(g.IDs))
		for i := range g.Of {
			v := d.uvarint()
			if v >= uint64(k) {
				d.fail("text index out of range")
				return nil
			}
			g.Of[i] = int32(v)
		}
		out = append(out, g)
	}
	return out
}

// textList writes texts: their count, then each field of each as the
// length plus one and the bytes, or 0 for the same as the text before's
// (texts of one template mostly differ in a field or two: the title).
func (e *encoder) textList(texts []message.Text) {
	e.uvarint(uint64(len(texts)))
	var prev [5]string
	for _, t := range texts {
		fields := [5]string{t.Title, t.Body, t.OpenToURL, t.Tag, t.Locale}
		for i, f := range fields {
			if f == prev[i] {
				e.uvarint(0)
				continue
			}
			e.uvarint(uint64(len(f)) + 1)
			e.b = append(e.b, f...)
		}
		prev = fields
	}
}

// textList reads what encoder.textList wrote; minSize is what a list
// must hold at least.
func (d *decoder) textList(minSize int) []message.Text {
	n := d.count(5)
	if n < minSize {
		d.fail("too few texts")
	}
	if d.err != nil {
		return nil
	}
	out := make([]message.Text, n)
	var prev message.Text
	for i := range out {
		t := prev
		for _, f := range [5]*string{&t.Title, &t.Body, &t.OpenToURL, &t.Tag, &t.Locale} {
			if k := d.uvarint(); k > 0 {
				*f = string(d.bytes(int(k - 1)))
			}
		}
		if d.err != nil {
			return nil
		}
		out[i], prev = t, t
	}
	return out
}
