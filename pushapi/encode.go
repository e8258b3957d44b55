package pushapi

import (
	"strconv"

	"pushform/internal/jsonstr"
)

// appendBatch appends the JSON array of batch to dst: what encoding/json
// would produce for []Notification (the same fields, omitted when empty),
// without reflection, its strings quoted by jsonstr as jsontext (the
// sandbox's library) quotes them.
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
