package pushapi

import (
	"encoding/binary"
	"strconv"
	"sync"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"
)

// maxPooledBody keeps one huge request from pinning its buffer in the pool.
const maxPooledBody = 4 << 20

// appendBatch appends the JSON array of batch to dst: what encoding/json
// would produce for []Notification (the same fields, omitted when empty),
// without reflection.
func appendBatch(dst []byte, batch []Notification) []byte {
	dst = append(dst, '[')
	for i := range batch {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendNotification(dst, &batch[i])
	}
	return append(dst, ']')
}

func appendNotification(dst []byte, n *Notification) []byte {
	dst = append(dst, '{')
	first := true
	field := func(name string) {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, '"')
		dst = append(dst, name...)
		dst = append(dst, '"', ':')
	}
	strs := func(name string, v []string) {
		if len(v) == 0 {
			return
		}
		field(name)
		dst = append(dst, '[')
		for i, s := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, s)
		}
		dst = append(dst, ']')
	}
	str := func(name, v string) {
		if v == "" {
			return
		}
		field(name)
		dst = appendJSONString(dst, v)
	}
	strs("userIds", n.UserIDs)
	strs("deviceIds", n.DeviceIDs)
	strs("topics", n.Topics)
	str("title", n.Title)
	str("body", n.Body)
	str("openToUrl", n.OpenToURL)
	if n.BadgeCount != nil {
		field("badgeCount")
		dst = strconv.AppendInt(dst, int64(*n.BadgeCount), 10)
	}
	if n.SilentInForeground {
		field("silentInForeground")
		dst = append(dst, "true"...)
	}
	str("tag", n.Tag)
	return append(dst, '}')
}

// appendJSONString quotes s with jsontext (the sandbox quotes with the
// same library): the minimal escaping of RFC 8785, invalid UTF-8 as
// U+FFFD.
func appendJSONString(dst []byte, s string) []byte {
	if plain(s) { // an id, mostly: quoted as it is (AppendQuote took 14 ns one)
		dst = append(dst, '"')
		dst = append(dst, s...)
		return append(dst, '"')
	}
	dst, _ = jsontext.AppendQuote(dst, s) // the error only reports invalid UTF-8, replaced
	return dst
}

// plain reports whether s is ASCII that JSON quotes as it is: no control
// character, '"' or '\\'. It looks at eight bytes at a time.
func plain(s string) bool {
	b := unsafe.Slice(unsafe.StringData(s), len(s)) // read only
	for ; len(b) >= 8; b = b[8:] {
		if special(binary.LittleEndian.Uint64(b)) != 0 {
			return false
		}
	}
	for _, c := range b {
		if notPlain(c) {
			return false
		}
	}
	return true
}

// bufPool recycles byte slices for request and response bodies.
type bufPool struct{ p sync.Pool }

func (p *bufPool) get() *[]byte {
	if b, ok := p.p.Get().(*[]byte); ok {
		*b = (*b)[:0]
		return b
	}
	b := make([]byte, 0, 64<<10)
	return &b
}

func (p *bufPool) put(b *[]byte) {
	if cap(*b) <= maxPooledBody {
		p.p.Put(b)
	}
}
