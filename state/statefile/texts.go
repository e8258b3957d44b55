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
		sub.uvarint(uint64(len(g.Texts)))
		for _, t := range g.Texts {
			sub.text(t)
		}
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
		k := d.count(5)
		if d.err != nil {
			return nil
		}
		g.Texts = make([]message.Text, k)
		for i := range g.Texts {
			g.Texts[i] = d.text()
		}
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

func (e *encoder) text(t message.Text) {
	e.str(t.Title)
	e.str(t.Body)
	e.str(t.OpenToURL)
	e.str(t.Tag)
	e.str(t.Locale)
}

func (d *decoder) text() message.Text {
	return message.Text{Title: d.str(), Body: d.str(), OpenToURL: d.str(), Tag: d.str(), Locale: d.str()}
}
