package pushapi

import (
	"strconv"
	"sync"

	"pushform/internal/jsonstr"
)

// maxPooledBody keeps one huge request from pinning its buffer in the pool.
const maxPooledBody = 4 << 20

// appendBatch appends the JSON array of batch to dst: what encoding/json
// would produce for []Notification (the same fields, omitted when empty),
// without reflection; strings are quoted as jsontext quotes them, the
// sandbox's library (jsonstr).
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
			dst = jsonstr.AppendQuote(dst, s)
		}
		dst = append(dst, ']')
	}
	str := func(name, v string) {
		if v == "" {
			return
		}
		field(name)
		dst = jsonstr.AppendQuote(dst, v)
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
