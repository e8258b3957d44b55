package sandbox

import (
	"bytes"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxUserIDs is the spec's limit of userIds per send request (part 8).
const MaxUserIDs = 500

type targetKind uint8

const (
	targetUsers targetKind = iota + 1
	targetDevices
	targetTopics
)

// notification is one validated element of a send request.
type notification struct {
	kind targetKind
	ids  []string
	msg  *message
	// refused, when set, fails every target with this message without
	// a delivery (Options.MaxLengthAnswer "207").
	refused string
}

// message is the content of a notification, shared by every device that
// holds it.
type message struct {
	requestID string
	title     string
	body      string
	tag       string
	openToURL string
	visible   bool  // title and body given
	badge     int64 // -1 when not given
	silent    bool
}

var targetFields = [...]string{"userIds", "deviceIds", "topics"}

var knownFields = []string{
	"userIds", "deviceIds", "topics", "title", "body", "openToUrl",
	"badgeCount", "silentInForeground", "tag",
}

// decodeSendRequest parses and validates a send request body. It returns
// every issue found, not only the first; the notifications are only
// meaningful when there are none.
func decodeSendRequest(body []byte) ([]notification, []Issue) {
	trimmed := trimJSONSpace(body)
	if len(trimmed) == 0 {
		return nil, []Issue{{Path: []any{}, Message: "the request body is empty: send a JSON array of notification objects"}}
	}
	elems, top, err := splitRequest(body)
	if err != nil {
		return nil, []Issue{{Path: []any{}, Message: err.Error()}}
	}
	if elems == nil {
		return nil, []Issue{{Path: []any{}, Message: "the request body must be a JSON array of notification objects, not " + jsonKind([]byte{top})}}
	}
	if len(elems) == 0 {
		return nil, []Issue{{Path: []any{}, Message: "the array is empty: send at least one notification object"}}
	}
	ns := make([]notification, 0, len(elems))
	var issues []Issue
	users := 0
	for i, e := range elems {
		n, u, iss := decodeNotification(i, e)
		users += u
		issues = append(issues, iss...)
		if len(iss) == 0 {
			ns = append(ns, n)
		}
	}
	if users > MaxUserIDs {
		issues = append(issues, Issue{Path: []any{}, Message: fmt.Sprintf(
			"too many userIds: a request may carry at most %d (spec part 8), this one has %d", MaxUserIDs, users)})
	}
	if len(issues) > 0 {
		return nil, issues
	}
	return ns, nil
}

// decodeNotification validates element i; users counts its userIds.
func decodeNotification(i int, e element) (n notification, users int, issues []Issue) {
	if !e.object {
		return n, 0, []Issue{{Path: []any{i}, Message: "must be a notification object, not " + jsonKind(e.raw)}}
	}
	fields := e.fields
	add := func(msg string, path ...any) {
		issues = append(issues, Issue{Path: append([]any{i}, path...), Message: msg})
	}

	var unknown []string
	for _, f := range e.fields {
		if !slices.Contains(knownFields, f.name) {
			unknown = append(unknown, f.name)
		}
	}
	slices.Sort(unknown)
	for _, name := range unknown {
		msg := "unknown field"
		for _, k := range knownFields {
			if strings.EqualFold(k, name) {
				msg += "; did you mean " + k + "?"
			}
		}
		add(msg, name)
	}

	var first string
	for ti, name := range targetFields {
		f := fields.field(name)
		if f == nil {
			continue
		}
		ids, iss := decodeIDs(f, i)
		issues = append(issues, iss...)
		if name == "userIds" {
			users = len(ids)
		}
		if first != "" {
			add(fmt.Sprintf("cannot be combined with %s: give exactly one of userIds, deviceIds and topics", first), name)
			continue
		}
		first = name
		n.kind, n.ids = targetKind(ti+1), ids
	}
	if first == "" {
		add("needs exactly one of userIds, deviceIds and topics")
	}

	m := &message{badge: -1}
	title, hasTitle := fields.get("title")
	body, hasBody := fields.get("body")
	if hasTitle {
		if s, ok := decodeString(title); ok {
			m.title = s
		} else {
			add("must be a string, not "+jsonKind(title), "title")
		}
	}
	if hasBody {
		if s, ok := decodeString(body); ok {
			m.body = s
		} else {
			add("must be a string, not "+jsonKind(body), "body")
		}
	}
	switch {
	case hasTitle && !hasBody:
		add("is required with title: a visible notification needs both title and body", "body")
	case hasBody && !hasTitle:
		add("is required with body: a visible notification needs both title and body", "title")
	}
	m.visible = hasTitle && hasBody
	if v, ok := fields.get("badgeCount"); ok {
		if c, ok := decodeBadge(v); ok {
			m.badge = c
		} else {
			add("must be a non-negative integer, not "+jsonExcerpt(v), "badgeCount")
		}
	} else if !hasTitle && !hasBody {
		add("needs title and body (a visible notification) or badgeCount (a badge-only update)")
	}
	if v, ok := fields.get("openToUrl"); ok {
		s, isStr := decodeString(v)
		switch {
		case !isStr:
			add("must be a string, not "+jsonKind(v), "openToUrl")
		case !absoluteURL(s):
			add("must be an absolute URL such as https://example.com/page, not "+strconv.Quote(excerpt(s)), "openToUrl")
		default:
			m.openToURL = s
		}
	}
	if v, ok := fields.get("silentInForeground"); ok {
		switch string(v) {
		case "true":
			m.silent = true
		case "false":
		default:
			add("must be a boolean, not "+jsonKind(v), "silentInForeground")
		}
	}
	if v, ok := fields.get("tag"); ok {
		if s, ok := decodeString(v); ok {
			m.tag = s
		} else {
			add("must be a string, not "+jsonKind(v), "tag")
		}
	}
	n.msg = m
	return n, users, issues
}

// decodeIDs decodes target array f of element i: a non-empty array of
// non-empty strings. The count of elements is returned even when some are
// bad.
func decodeIDs(f *field, i int) ([]string, []Issue) {
	raw, field := f.raw, f.name
	if raw[0] != '[' {
		return nil, []Issue{{Path: []any{i, field}, Message: "must be an array of strings, not " + jsonKind(raw)}}
	}
	ids := f.strs
	if ids == nil {
		// Some element is not a string: find which, the slow way.
		elems := arrayElems(raw)
		if len(elems) == 0 {
			return nil, []Issue{{Path: []any{i, field}, Message: "must not be empty"}}
		}
		ids = make([]string, len(elems))
		var issues []Issue
		for j, e := range elems {
			s, isStr := decodeString(e)
			if !isStr {
				issues = append(issues, Issue{Path: []any{i, field, j}, Message: "must be a string, not " + jsonKind(e)})
			} else if s == "" {
				issues = append(issues, Issue{Path: []any{i, field, j}, Message: "must be a non-empty string"})
			}
			ids[j] = s
		}
		return ids, issues
	}
	if len(ids) == 0 {
		return ids, []Issue{{Path: []any{i, field}, Message: "must not be empty"}}
	}
	var issues []Issue
	for j, s := range ids {
		if s == "" {
			issues = append(issues, Issue{Path: []any{i, field, j}, Message: "must be a non-empty string"})
		}
	}
	return ids, issues
}

// trimJSONSpace trims JSON's white space.
func trimJSONSpace(b []byte) []byte { return bytes.Trim(b, " \t\r\n") }

// decodeBadge accepts a JSON number with an integral value from 0 to
// 2^31-1: 3 and 3.0 and 3e0, not 1.5, -1 or "3".
func decodeBadge(raw []byte) (int64, bool) {
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0, false
	}
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return n, n >= 0 && n <= math.MaxInt32
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != math.Trunc(f) || f < 0 || f > math.MaxInt32 {
		return 0, false
	}
	return int64(f), true
}

// absoluteURL reports whether s is an absolute URL with a scheme and a host
// (https://shop.example/x) or an opaque part (mailto:a@b).
func absoluteURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Scheme != "" && (u.Host != "" || u.Opaque != "")
}

// jsonKind names the kind of a JSON value by its first byte.
func jsonKind(raw []byte) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// jsonExcerpt is a short rendering of a JSON value for a message.
func jsonExcerpt(raw []byte) string {
	if raw[0] == '"' || raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9') {
		return excerpt(string(raw))
	}
	return jsonKind(raw)
}

func excerpt(s string) string {
	const max = 40
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// fieldMap indexes an object's fields by the names the validator asks for.
type fieldMap []field

func (m fieldMap) get(name string) ([]byte, bool) {
	if f := m.field(name); f != nil {
		return f.raw, true
	}
	return nil, false
}

// field is the member called name, or nil.
func (m fieldMap) field(name string) *field {
	for i := range m {
		if m[i].name == name {
			return &m[i]
		}
	}
	return nil
}

// validUTF8 is utf8.Valid with an ASCII fast path.
func validUTF8(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return utf8.Valid(b)
		}
	}
	return true
}
