package statefile

// The binary encoding's primitives: varints, strings, times, front-coded
// id lists and content, written by encoder and read by decoder.

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"iter"
	"math"
	"math/bits"
	"slices"
	"strings"
	"time"

	"pushform/message"
)

// encoder appends the binary encoding to b.
type encoder struct {
	b []byte
	// snapshot is the format of the snapshot body being written; 0 for a
	// journal entry. From 3 on, outcome records carry Unanswered (journal
	// entries leave it to ApplyEntry) and messages their earlier tags.
	snapshot int
	// spillTo, when set, takes the encoding whenever b holds spillAt
	// bytes, and sum is the CRC-32C of what it took (continuing from the
	// header's). b must then not be read back.
	spillTo *bufio.Writer
	sum     uint32
	// reuse, when set, keeps intents' id lists for their outcomes.
	reuse *IDReuse
	// list, when set, is the snapshot's recipients list encoded once
	// (sharedList): it is copied for the list and for each message sent
	// to exactly its ids. With listLater, its encoding is being made on
	// another goroutine: only its ids are read, and listAt are the offsets
	// in b it goes at (encodeBody writes it there).
	list      *encodedList
	listLater bool
	listAt    []int
}

// spillAt is how much of a snapshot's encoding is kept before it is
// written out.
const spillAt = 128 << 10

// maybeSpill spills once b holds spillAt bytes.
func (e *encoder) maybeSpill() {
	if len(e.b) >= spillAt {
		e.spill()
	}
}

// spill hands b to spillTo. A write error is the bufio.Writer's to report
// at its Flush.
func (e *encoder) spill() {
	if e.spillTo == nil {
		return
	}
	e.sum = crc32.Update(e.sum, castagnoli, e.b)
	e.spillTo.Write(e.b)
	e.b = e.b[:0]
}

// encoded appends p, an encoding made earlier, spilling it at once.
func (e *encoder) encoded(p []byte) {
	if e.spillTo == nil {
		e.b = append(e.b, p...)
		return
	}
	e.spill()
	e.sum = crc32.Update(e.sum, castagnoli, p)
	e.spillTo.Write(p)
}

func (e *encoder) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }

func (e *encoder) varint(v int64) { e.b = binary.AppendVarint(e.b, v) }

func (e *encoder) str(s string) { e.uvarint(uint64(len(s))); e.b = append(e.b, s...) }

func (e *encoder) boolean(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}

// time keeps the instant and the zone offset; a zero offset reads back as
// UTC.
func (e *encoder) time(t time.Time) {
	_, off := t.Zone()
	e.varint(t.Unix())
	e.uvarint(uint64(t.Nanosecond()))
	e.varint(int64(off))
}

// ids front-codes a list: per id the length of the prefix it shares with
// the previous one and the rest. Prefix and rest lengths below 15 and 16
// share one byte; 0xff escapes to two varints.
func (e *encoder) ids(ids []string) {
	e.uvarint(uint64(len(ids)))
	if len(ids) >= 4096 && e.spillTo == nil {
		// A long list (a recipients snapshot) gets its room at once, not
		// by growing a few kilobytes at a time: a million ids were 20
		// copies into fresh memory. Sorted ids take 2 to 4 bytes each.
		e.b = slices.Grow(e.b, 4*len(ids))
	}
	e.idRun("", ids)
}

// idRun appends ids front-coded, the first against prev, and returns the
// last one written (prev when ids is empty).
func (e *encoder) idRun(prev string, ids []string) string {
	for _, id := range ids {
		e.id(prev, id)
		prev = id
		e.maybeSpill()
	}
	return prev
}

// idSeq is ids for the n ids of seq.
func (e *encoder) idSeq(n int, seq iter.Seq[string]) {
	e.uvarint(uint64(n))
	prev := ""
	for id := range seq {
		e.id(prev, id)
		prev = id
		e.maybeSpill()
	}
}

// id appends id front-coded against prev.
func (e *encoder) id(prev, id string) {
	p := commonPrefix(prev, id)
	s := len(id) - p
	if p < 15 && s < 16 {
		// The usual case, a sorted id differing from the last in a byte
		// or two: written in place, not through append's call to copy.
		b := e.b
		if cap(b)-len(b) < 16 {
			b = slices.Grow(b, 16)
		}
		n := len(b)
		b = b[:n+1+s]
		b[n] = byte(p<<4 | s)
		for i := range s {
			b[n+1+i] = id[p+i]
		}
		e.b = b
		return
	}
	e.b = append(e.b, 0xff)
	e.uvarint(uint64(p))
	e.uvarint(uint64(s))
	e.b = append(e.b, id[p:]...)
}

func (e *encoder) content(c message.Content) {
	e.str(c.Title)
	e.str(c.Body)
	e.str(c.OpenToURL)
	e.str(c.Tag)
	e.boolean(c.SilentInForeground)
	// A byte of flags, which was the badge count's boolean before
	// templates: 1 a badge count follows, 2 a template.
	var flags byte
	if c.BadgeCount != nil {
		flags |= 1
	}
	if c.Template != "" {
		flags |= 2
	}
	e.b = append(e.b, flags)
	if c.BadgeCount != nil {
		e.varint(int64(*c.BadgeCount))
	}
	if c.Template != "" {
		e.str(c.Template)
	}
}

// decoder reads the binary encoding from b. The first error sticks; every
// read after it returns zero values, so callers check err once.
type decoder struct {
	b   []byte
	off int
	err error
	// snapshot is the format of the snapshot body being read; 0 for a
	// journal entry.
	snapshot int
	// compact: messages hold their targets in sorted tables, not maps.
	compact bool
}

func (d *decoder) fail(msg string) {
	if d.err == nil {
		d.err = fmt.Errorf("at byte %d: %s", d.off, msg)
	}
}

func (d *decoder) byte() byte {
	if d.err != nil || d.off >= len(d.b) {
		d.fail("unexpected end")
		return 0
	}
	c := d.b[d.off]
	d.off++
	return c
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		d.fail("bad number")
		return 0
	}
	d.off += n
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b[d.off:])
	if n <= 0 {
		d.fail("bad number")
		return 0
	}
	d.off += n
	return v
}

// int reads a varint that must fit an int.
func (d *decoder) int() int {
	v := d.varint()
	if v < math.MinInt32 || v > math.MaxInt32 {
		d.fail("number out of range")
		return 0
	}
	return int(v)
}

// count reads a length of items taking at least minSize bytes each, so a
// damaged count cannot make the decoder allocate more than the input.
func (d *decoder) count(minSize int) int {
	v := d.uvarint()
	if d.err == nil && v > uint64(len(d.b)-d.off)/uint64(minSize) {
		d.fail("count larger than the data")
		return 0
	}
	return int(v)
}

func (d *decoder) bytes(n int) []byte {
	if d.err != nil || n > len(d.b)-d.off {
		d.fail("unexpected end")
		return nil
	}
	p := d.b[d.off : d.off+n]
	d.off += n
	return p
}

func (d *decoder) str() string { return string(d.bytes(d.count(1))) }

func (d *decoder) boolean() bool {
	switch d.byte() {
	case 0:
		return false
	case 1:
		return true
	}
	d.fail("bad boolean")
	return false
}

func (d *decoder) time() time.Time {
	sec := d.varint()
	nsec := d.uvarint()
	off := d.varint()
	if nsec >= 1e9 || off <= -1<<20 || off >= 1<<20 {
		d.fail("bad time")
	}
	if d.err != nil {
		return time.Time{}
	}
	t := time.Unix(sec, int64(nsec))
	if off == 0 {
		return t.UTC()
	}
	return t.In(time.FixedZone("", int(off)))
}

// ids decodes a front-coded list into substrings of one string, so a
// million ids cost two allocations rather than a million: a first pass
// sizes the string exactly, the second fills it. The strings.Builder's
// room is grown once, so every id is a substring of its one buffer, and
// the next id's prefix is read back from the id before it.
func (d *decoder) ids() []string {
	n := d.count(1)
	if d.err != nil || n == 0 {
		return nil
	}
	start, total, prevLen := d.off, 0, 0
	for range n {
		p, s := d.idHead()
		if d.err == nil && p > prevLen {
			d.fail("id prefix longer than the previous id")
		}
		d.bytes(s)
		if d.err != nil {
			return nil
		}
		prevLen = p + s
		total += prevLen
	}
	d.off = start
	var all strings.Builder
	all.Grow(total)
	out := make([]string, n)
	prev := ""
	for i := range n {
		p, s := d.idHead()
		at := all.Len()
		all.WriteString(prev[:p])
		all.Write(d.bytes(s))
		prev = all.String()[at:]
		out[i] = prev
	}
	return out
}

// idHead reads the prefix and suffix lengths of one front-coded id.
func (d *decoder) idHead() (p, s int) {
	c := d.byte()
	if c == 0xff {
		// The prefix is not read from the data: the caller bounds it by
		// the previous id.
		p := d.uvarint()
		if p > math.MaxInt32 {
			d.fail("id prefix too long")
			return 0, 0
		}
		return int(p), d.count(1)
	}
	return int(c >> 4), int(c & 15)
}

func (d *decoder) content() message.Content {
	c := message.Content{Title: d.str(), Body: d.str(), OpenToURL: d.str(), Tag: d.str(), SilentInForeground: d.boolean()}
	flags := d.byte()
	if flags > 3 {
		d.fail("bad content flags")
	}
	if flags&1 != 0 {
		n := d.int()
		c.BadgeCount = &n
	}
	if flags&2 != 0 {
		c.Template = d.str()
	}
	return c
}

// commonPrefix is the length of the prefix a and b share, compared eight
// bytes at a time: ids of a sorted list share most of theirs.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	p := 0
	for ; p+8 <= n; p += 8 {
		if x := load64(a, p) ^ load64(b, p); x != 0 {
			return p + bits.TrailingZeros64(x)/8
		}
	}
	for p < n && a[p] == b[p] {
		p++
	}
	return p
}

// load64 is the 8 bytes of s at i, little-endian (one load).
func load64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}
