package secret

import (
	"bytes"
	"errors"
	mbits "math/bits"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Redacted stands in for a secret in text.
const Redacted = "[redacted]"

// MinRedactLength is the length under which a secret is not redacted:
// replacing a three-letter word everywhere would mangle ordinary text, and
// a key that short protects nothing anyway.
const MinRedactLength = 4

// Redactor replaces secrets (an API key, a database password) in text that
// came from outside: a server's answer, an error, a log line. It finds a
// secret written raw or escaped: JSON \uXXXX and \", \\, \/ escapes,
// \xHH, URL %XX escapes and HTML &#NN; / &#xHH; references, in any hex
// case, mixed character by character and nested two deep (%5Cu0043); in
// any letter case; with invisible characters (see Invisible) between its
// characters, raw or escaped; and base64 or base64url encoded at any
// alignment inside a longer encoded text. Join and Bytes also find a
// secret split across adjacent fields. A nil *Redactor redacts nothing.
// It is safe for concurrent use.
type Redactor struct {
	secrets [][]byte // the secrets and their encoded forms, longest first
	folds   [][]byte // each as fold writes it
	encoded []bool   // whether each is an encoded form
	min     int      // length of the shortest, either way
	// class sorts bytes for quick: unsure for those that start an escape
	// or are not ASCII, start for those that may begin a fold.
	class [256]byte
}

// Byte classes of Redactor.class.
const (
	unsure = 1 + iota
	start
)

// NewRedactor returns a redactor for the given secrets; empty and short
// ones (under MinRedactLength bytes) are ignored.
func NewRedactor(secrets ...string) *Redactor {
	type form struct {
		text    string
		encoded bool
	}
	var forms []form
	seen := map[string]bool{}
	add := func(s string, encoded bool) {
		if f := fold(s); len(s) >= MinRedactLength && len(f) >= MinRedactLength && !seen[f] {
			seen[f] = true
			forms = append(forms, form{s, encoded})
		}
	}
	for _, s := range secrets {
		add(s, false)
	}
	for _, s := range secrets {
		for _, e := range encodedForms(s) {
			add(e, true)
		}
	}
	slices.SortStableFunc(forms, func(a, b form) int { return len(b.text) - len(a.text) })
	r := &Redactor{}
	for i, f := range forms {
		folded := []byte(fold(f.text))
		r.secrets = append(r.secrets, []byte(f.text))
		r.folds = append(r.folds, folded)
		r.encoded = append(r.encoded, f.encoded)
		if l := min(len(f.text), len(folded)); i == 0 || l < r.min {
			r.min = l
		}
	}
	for b := range 256 {
		c := byte(b)
		switch {
		case c >= utf8.RuneSelf || isEscapeStart(c):
			r.class[c] = unsure
		case slices.ContainsFunc(r.folds, func(f []byte) bool { return f[0] == lowerASCII(c) }):
			r.class[c] = start
		}
	}
	return r
}

// Active reports whether r has any secret to redact.
func (r *Redactor) Active() bool { return r != nil && len(r.secrets) > 0 }

// Contains reports whether s holds a secret in any form String redacts.
func (r *Redactor) Contains(s string) bool { return r.String(s) != s }

// ContainsBytes is Contains for bytes; it does not allocate for ASCII
// text without escapes (a recipient id).
func (r *Redactor) ContainsBytes(b []byte) bool {
	if !r.Active() || len(b) < r.min {
		return false
	}
	if hit, sure := quick(r, b); sure {
		return hit
	}
	return len(r.find(identity(string(b)), nil)) > 0
}

// quick answers whether text holds a secret when that is cheap to tell:
// ASCII text without escapes can only hold one raw, in some letter case,
// and none at all without a byte a secret may begin with. That one pass is
// all a recipient id takes (a recipients list checks each of millions).
func quick[T string | []byte](r *Redactor, text T) (hit, sure bool) {
	starts := false
	for i := 0; i < len(text); i++ {
		switch r.class[text[i]] {
		case unsure:
			return false, false
		case start:
			starts = true
		}
	}
	if !starts {
		return false, true
	}
	for _, f := range r.folds {
		if indexFoldASCII(text, f) >= 0 {
			return true, true
		}
	}
	return false, true
}

// String returns s with every secret in it, in any form the Redactor
// finds, replaced by [redacted].
func (r *Redactor) String(s string) string {
	if !r.Active() || len(s) < r.min {
		return s
	}
	if hit, sure := quick(r, s); sure && !hit { // the common case
		return s
	}
	spans := r.find(identity(s), nil)
	if len(spans) == 0 {
		return s
	}
	return string(replace([]byte(s), spans))
}

// Bytes is String for raw text such as a whole answer: it also finds a
// secret split across the JSON strings in it (`"bad key CANA","x":"RY-7f"`).
// b is not modified.
func (r *Redactor) Bytes(b []byte) []byte {
	if !r.Active() || len(b) < r.min {
		return b
	}
	spans := r.find(identity(string(b)), nil)
	// A fragment may start inside a string: try both readings.
	spans = r.find(stringContents(b, false), spans)
	spans = r.find(stringContents(b, true), spans)
	if len(spans) == 0 {
		return b
	}
	return replace(b, spans)
}

// Join redacts adjacent fields together, in place: a secret split across
// them (a message ending "CANA" and the next field starting "RY-7f3a9") is
// replaced in each.
func (r *Redactor) Join(parts []string) {
	if !r.Active() {
		return
	}
	total := 0
	for _, p := range parts {
		total += len(p)
	}
	if total < r.min {
		return
	}
	if len(parts) == 1 {
		parts[0] = r.String(parts[0])
		return
	}
	joined := strings.Join(parts, "")
	spans := r.find(identity(joined), nil)
	if len(spans) == 0 {
		return
	}
	start := 0
	for i, p := range parts {
		end := start + len(p)
		var local []span
		for _, sp := range spans {
			if sp.start < end && sp.end > start {
				local = append(local, span{max(sp.start, start) - start, min(sp.end, end) - start})
			}
		}
		if local != nil {
			parts[i] = string(replace([]byte(p), local))
		}
		start = end
	}
}

// Error returns err with secrets redacted from its message. The result
// still answers errors.Is as err does (a timeout stays a timeout), but
// does not unwrap to err, whose message holds the secret.
func (r *Redactor) Error(err error) error {
	if err == nil || !r.Active() {
		return err
	}
	msg := err.Error()
	if red := r.String(msg); red != msg {
		return &redactedError{msg: red, orig: err}
	}
	return err
}

type redactedError struct {
	msg  string
	orig error
}

func (e *redactedError) Error() string        { return e.msg }
func (e *redactedError) Is(target error) bool { return errors.Is(e.orig, target) }

// span is a half-open byte range of the original text.
type span struct{ start, end int }

// mapped is a text with, for each of its bytes, where it stands in the
// original: start[i] to end[i]. Nil maps mean the text is the original.
type mapped struct {
	text       []byte
	start, end []int32
}

func identity(s string) mapped { return mapped{text: []byte(s)} }

func (m *mapped) origStart(i int) int {
	if m.start == nil {
		return i
	}
	return int(m.start[i])
}

func (m *mapped) origEnd(i int) int {
	if m.end == nil {
		return i + 1
	}
	return int(m.end[i])
}

// stringContents is the concatenated insides of the "quoted" values of b
// (strings followed by ':' are keys, left out), mapped to b: a secret split
// across JSON fields is contiguous in it.
func stringContents(b []byte, inside bool) mapped {
	m := mapped{text: make([]byte, 0, len(b)), start: make([]int32, 0, len(b)), end: make([]int32, 0, len(b))}
	in, open := inside, 0
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '"' && !in:
			in, open = true, len(m.text)
			continue
		case c == '"':
			in = false
			j := i + 1
			for j < len(b) && (b[j] == ' ' || b[j] == '\t' || b[j] == '\n' || b[j] == '\r') {
				j++
			}
			if j < len(b) && b[j] == ':' { // a key
				m.text, m.start, m.end = m.text[:open], m.start[:open], m.end[:open]
			}
			continue
		case !in:
			continue
		case c == '\\' && i+1 < len(b): // keep escapes whole for the decoder
			m.text = append(m.text, c, b[i+1])
			m.start = append(m.start, int32(i), int32(i+1))
			m.end = append(m.end, int32(i+1), int32(i+2))
			i++
			continue
		}
		m.text = append(m.text, c)
		m.start = append(m.start, int32(i))
		m.end = append(m.end, int32(i+1))
	}
	return m
}

// find adds to spans where a secret is in m's text, in any form.
func (r *Redactor) find(m mapped, spans []span) []span {
	if !hasEscape(string(m.text)) {
		// Only raw forms: compare folded texts.
		f := m
		if !isASCII(m.text) {
			f = folded(m)
		}
		for _, sec := range r.folds {
			for off := 0; ; {
				var i int
				if f.start == nil {
					i = indexFoldASCII(f.text[off:], sec)
				} else {
					i = bytes.Index(f.text[off:], sec)
				}
				if i < 0 {
					break
				}
				spans = appendRuns(spans, f, off+i, off+i+len(sec))
				off += i + 1
			}
		}
		return spans
	}
	mt := &matcher{t: m.text, escapes: map[rune][]string{}, folds: map[rune][]rune{}}
	for i, sec := range r.secrets {
		// An encoded form is looked for with its letters and digits raw
		// (in a base64 text, only + and / are ever escaped: \/, %2F), which
		// keeps the work on escaped text what it is for the secret alone.
		encoded := r.encoded[i]
		if !couldHold(m.text, sec) {
			continue
		}
		mt.steps = 0 // each form has its budget
		var firsts [256]bool
		first, _ := utf8.DecodeRune(sec)
		for _, f := range mt.foldsOf(first) {
			var buf [utf8.UTFMax]byte
			utf8.EncodeRune(buf[:], f)
			firsts[buf[0]] = true
		}
		for p := 0; p < len(m.text); p++ {
			if c := m.text[p]; !firsts[c] && (!isEscapeStart(c) || encoded && !isBase64Symbol(first)) {
				continue
			}
			if end := mt.secret(p, string(sec), encoded); end > p {
				spans = appendRuns(spans, m, p, end)
			}
			if mt.steps > maxSteps { // hostile text: redact all of it
				return append(spans[:0], span{m.origStart(0), m.origEnd(len(m.text) - 1)})
			}
		}
	}
	return spans
}

// couldHold is a quick necessary condition for text to hold sec in some
// writing: every character of sec missing from text (in either case) must
// be written as an escape, and each escape takes an escape character of
// its own.
func couldHold(text, sec []byte) bool {
	if !isASCII(sec) {
		return true // its letters fold to other bytes: no quick answer
	}
	var have [256]int32
	starts := 0
	for _, c := range text {
		have[lowerASCII(c)]++
		if isEscapeStart(c) {
			starts++
		}
	}
	missing := 0
	for _, c := range sec {
		if c = lowerASCII(c); have[c] > 0 {
			have[c]--
		} else if missing++; missing > starts {
			return false
		}
	}
	return true
}

// maxSteps bounds the matcher's work on one text for one form of a
// secret, about 25 ms: 64 KiB of URL-encoded text or of an HTML page full
// of entities takes under 128Ki steps (letters are tried in both cases); a
// text that needs more (64 KiB of "%") is redacted whole.
const maxSteps = 1 << 18

// maxDepth bounds how many escapings inside each other are seen through:
// %5Cu0043 (a JSON escape inside a URL escape) is two.
const maxDepth = 2

// matcher finds a secret written with each character raw or escaped:
// JSON \uXXXX (surrogate pairs too), \xHH, \" \\ \/ \', URL %XX per
// UTF-8 byte, HTML &#NN; &#xHH; and named references, hex digits in any
// case, and the characters of an escape themselves escaped, maxDepth
// deep. It matches rather than decodes, so no reading of ambiguous text
// ("%%38", "%8000") can hide a secret.
type matcher struct {
	t       []byte
	escapes map[rune][]string
	folds   map[rune][]rune
	steps   int

	cur, next []int // reused by secret
}

// offsets is a set of small distances from a position (an escape of an
// escape is under 128 bytes long).
type offsets [2]uint64

func (o *offsets) add(i int) {
	if i < 128 {
		o[i>>6] |= 1 << (i & 63)
	}
}

func (o offsets) empty() bool { return o[0]|o[1] == 0 }

// or adds the offsets of o, each plus shift.
func (o *offsets) or(p offsets, shift int) {
	for w := range p {
		for bits := p[w]; bits != 0; bits &= bits - 1 {
			o.add(shift + w*64 + mbits.TrailingZeros64(bits))
		}
	}
}

// Every escape starts with one of these (an escaped escape too).
func isEscapeStart(c byte) bool { return c == '\\' || c == '%' || c == '&' }

// secret returns where the longest match of sec starting at p ends, or
// -1: its characters in either case, each raw or escaped, with invisible
// characters (raw or escaped) between them.
func (m *matcher) secret(p int, sec string, encoded bool) int {
	cur, next := append(m.cur[:0], p), m.next[:0]
	for k, c := range sec {
		next = next[:0]
		depth := maxDepth
		if encoded && !isBase64Symbol(c) {
			depth = 0
		}
		for _, e := range cur {
			for _, v := range m.foldsOf(c) {
				o := m.enc(e, v, depth)
				for w := range o {
					for bits := o[w]; bits != 0; bits &= bits - 1 {
						if x := e + w*64 + mbits.TrailingZeros64(bits); !slices.Contains(next, x) {
							next = append(next, x)
						}
					}
				}
			}
		}
		if len(next) == 0 {
			m.cur, m.next = cur, next
			return -1
		}
		if k+utf8.RuneLen(c) < len(sec) {
			next = m.skipInvisible(next)
		}
		cur, next = next, cur
	}
	m.cur, m.next = cur, next
	return slices.Max(cur)
}

func isBase64Symbol(c rune) bool { return c == '+' || c == '/' }

// skipInvisible adds to ends the positions after the invisible
// characters that follow each.
func (m *matcher) skipInvisible(ends []int) []int {
	for i := 0; i < len(ends) && m.steps <= maxSteps; i++ {
		x := ends[i]
		if x >= len(m.t) {
			continue
		}
		n := 0
		if m.t[x] >= utf8.RuneSelf {
			if r, size := utf8.DecodeRune(m.t[x:]); r != utf8.RuneError && Invisible(r) {
				n = size
			}
		} else if isEscapeStart(m.t[x]) {
			m.steps++
			n = escapedInvisible(m.t, x)
		}
		if n > 0 && !slices.Contains(ends, x+n) {
			ends = append(ends, x+n)
		}
	}
	return ends
}

// foldsOf is the package's foldsOf, remembered.
func (m *matcher) foldsOf(c rune) []rune {
	if f, ok := m.folds[c]; ok {
		return f
	}
	f := foldsOf(c)
	m.folds[c] = f
	return f
}

// enc returns where writings of c starting at pos end, c escaped at most
// depth deep.
func (m *matcher) enc(pos int, c rune, depth int) offsets {
	var out offsets
	if pos >= len(m.t) {
		return out
	}
	if c < utf8.RuneSelf {
		if m.t[pos] == byte(c) {
			out.add(1)
		}
	} else {
		var buf [utf8.UTFMax]byte
		if raw := buf[:utf8.EncodeRune(buf[:], c)]; bytes.HasPrefix(m.t[pos:], raw) {
			out.add(len(raw))
		}
	}
	if depth == 0 || !isEscapeStart(m.t[pos]) || m.steps > maxSteps {
		return out
	}
	m.steps++
	if c >= utf8.RuneSelf { // UTF-8 bytes each raw, %HH or \xHH
		var buf [utf8.UTFMax]byte
		raw := buf[:utf8.EncodeRune(buf[:], c)]
		cur := offsets{1}
		for _, b := range raw {
			var next offsets
			for w := range cur {
				for bits := cur[w]; bits != 0; bits &= bits - 1 {
					i := w*64 + mbits.TrailingZeros64(bits)
					if pos+i < len(m.t) && m.t[pos+i] == b {
						next.add(i + 1)
					}
					next.or(m.lits(pos+i, "%"+hex(int(b), 2), depth-1), i)
					next.or(m.lits(pos+i, `\x`+hex(int(b), 2), depth-1), i)
				}
			}
			if cur = next; cur.empty() {
				break
			}
		}
		out.or(cur, 0)
	}
	for _, lit := range m.escapesOf(c) {
		out.or(m.lits(pos, lit, depth-1), 0)
	}
	return out
}

// escapesOf lists the one-level escapes of c.
func (m *matcher) escapesOf(c rune) []string {
	if e, ok := m.escapes[c]; ok {
		return e
	}
	var e []string
	if c < 0x80 {
		e = append(e, "%"+hex(int(c), 2), `\x`+hex(int(c), 2))
	}
	if c < 0x10000 {
		e = append(e, `\u`+hex(int(c), 4))
	} else {
		hi, lo := utf16.EncodeRune(c)
		e = append(e, `\u`+hex(int(hi), 4)+`\u`+hex(int(lo), 4))
	}
	e = append(e, "&#"+strconv.Itoa(int(c))+";", "&#x"+strconv.FormatInt(int64(c), 16)+";")
	switch c {
	case '"', '\\', '/', '\'':
		e = append(e, `\`+string(c))
	}
	if name, ok := entities[c]; ok {
		e = append(e, name)
	}
	m.escapes[c] = e
	return e
}

var entities = map[rune]string{'&': "&amp;", '<': "&lt;", '>': "&gt;", '"': "&quot;", '\'': "&apos;"}

// lits matches the characters of lit in sequence from pos, each raw or
// escaped at most depth deep; hex digits and x match in either case.
func (m *matcher) lits(pos int, lit string, depth int) offsets {
	cur := offsets{1}
	for _, c := range lit {
		var next offsets
		for w := range cur {
			for bits := cur[w]; bits != 0; bits &= bits - 1 {
				i := w*64 + mbits.TrailingZeros64(bits)
				next.or(m.enc(pos+i, c, depth), i)
				if u := otherCase(c); u != c {
					next.or(m.enc(pos+i, u, depth), i)
				}
			}
		}
		if cur = next; cur.empty() {
			return cur
		}
	}
	return cur
}

func otherCase(c rune) rune {
	switch {
	case c >= 'a' && c <= 'f' || c == 'x':
		return c - 'a' + 'A'
	case c >= 'A' && c <= 'F' || c == 'X':
		return c - 'A' + 'a'
	}
	return c
}

func hex(v, width int) string {
	s := strconv.FormatInt(int64(v), 16)
	for len(s) < width {
		s = "0" + s
	}
	return s
}

// appendRuns adds the original spans of m.text[from:to], one per
// contiguous run: a secret split across two JSON values is replaced in
// each, leaving the text between them.
func appendRuns(spans []span, m mapped, from, to int) []span {
	run := span{m.origStart(from), m.origEnd(from)}
	for k := from + 1; k < to; k++ {
		s, e := m.origStart(k), m.origEnd(k)
		if s > run.end {
			spans = append(spans, run)
			run = span{s, e}
			continue
		}
		run.end = max(run.end, e)
	}
	return append(spans, run)
}

func hasEscape(s string) bool { return strings.ContainsAny(s, `\%&`) }

// replace writes b with the spans (merged where they overlap) replaced.
func replace(b []byte, spans []span) []byte {
	slices.SortFunc(spans, func(a, c span) int { return a.start - c.start })
	out := make([]byte, 0, len(b))
	pos := 0
	for i := 0; i < len(spans); {
		s, e := spans[i].start, spans[i].end
		for i++; i < len(spans) && spans[i].start < e; i++ {
			e = max(e, spans[i].end)
		}
		if s < pos { // inside what was already replaced
			s = pos
		}
		out = append(out, b[pos:s]...)
		out = append(out, Redacted...)
		pos = max(pos, e)
	}
	return append(out, b[pos:]...)
}
