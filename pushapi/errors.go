package pushapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// excerptMax bounds the body excerpt carried by errors.
const excerptMax = 512

// Issue is one entry of the `issues` array of a 400 answer.
type Issue struct {
	Raw json.RawMessage // the entry as served (an API key in it is redacted)
	// Index is the notification of the request the issue is about, from
	// its path, index, JSON pointer or a message starting "[N]"; -1 when
	// the service did not say (or named one that was not sent).
	Index   int
	Field   string // e.g. "title" or "userIds[3]"
	Message string
}

// ValidationError is a 400: the service refused the request as invalid.
// Nothing was sent.
type ValidationError struct {
	RequestID     string
	Issues        []Issue
	Excerpt       string // the body when it held no issues array
	Notifications int    // how many notifications the request had
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString("the service rejected the request as invalid (400")
	writeRequestID(&b, e.RequestID)
	b.WriteString(")")
	if len(e.Issues) == 0 {
		if e.Excerpt != "" {
			b.WriteString(": ")
			b.WriteString(e.Excerpt)
		}
		return b.String()
	}
	const shown = 5
	for i, is := range e.Issues {
		if i == shown {
			fmt.Fprintf(&b, "; and %d more", len(e.Issues)-shown)
			break
		}
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(is.String())
	}
	if e.Notifications > 1 && !slices.ContainsFunc(e.Issues, func(is Issue) bool { return is.Index >= 0 }) {
		fmt.Fprintf(&b, " (the service did not say which of the %d notifications of the request was invalid)", e.Notifications)
	}
	return b.String()
}

// String renders the issue for a human: "notification 2, title: message".
func (is Issue) String() string {
	var parts []string
	if is.Index >= 0 {
		parts = append(parts, "notification "+strconv.Itoa(is.Index))
	}
	if is.Field != "" {
		parts = append(parts, is.Field)
	}
	msg := is.Message
	if msg == "" {
		msg = sanitize(string(is.Raw), 200)
	}
	if len(parts) == 0 {
		return msg
	}
	return strings.Join(parts, ", ") + ": " + msg
}

// AuthError is a 401: the API key is missing or invalid. Nothing was sent.
type AuthError struct {
	RequestID string
	KeyEnv    string // the environment variable that holds the key
}

func (e *AuthError) Error() string {
	var b strings.Builder
	b.WriteString("the service rejected the API key (401")
	writeRequestID(&b, e.RequestID)
	b.WriteString("): ")
	if e.KeyEnv != "" {
		b.WriteString("check the key in environment variable ")
		b.WriteString(e.KeyEnv)
	} else {
		b.WriteString("check the API key")
	}
	return b.String()
}

// StatusError is any answer with an unexpected status (429, 5xx, 404, ...).
type StatusError struct {
	Method     string // GET or POST
	StatusCode int
	RequestID  string
	RetryAfter time.Duration // from the Retry-After header; 0 if absent
	Excerpt    string        // bounded, sanitized; an HTML page by its title
}

func (e *StatusError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the service answered %d %s (", e.StatusCode, http.StatusText(e.StatusCode))
	if e.RequestID != "" {
		b.WriteString("request id ")
		b.WriteString(e.RequestID)
	} else {
		b.WriteString("no request id")
	}
	b.WriteString(")")
	if e.RetryAfter > 0 {
		b.WriteString(", retry after ")
		b.WriteString(e.RetryAfter.String())
	}
	if e.Excerpt != "" {
		b.WriteString(": ")
		b.WriteString(e.Excerpt)
	}
	return b.String()
}

// TransportError is a failure to get an answer: dial, TLS, timeout,
// connection dropped, or a broken response body.
type TransportError struct {
	Op        string // e.g. "POST /push-notifications/send"
	Err       error
	RequestID string // set when the response headers arrived
	// Sent is false when the request certainly never reached the server
	// (nothing was written to a connection), so a retry is safe; true when
	// it may have been processed.
	Sent bool
}

func (e *TransportError) Error() string {
	var b strings.Builder
	b.WriteString(e.Op)
	if e.RequestID != "" {
		b.WriteString(" (request id ")
		b.WriteString(e.RequestID)
		b.WriteString(")")
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	switch {
	case !e.Sent:
		b.WriteString(" (the request was not sent)")
	case e.mayHaveChanged():
		b.WriteString(" (the request may have been processed)")
	}
	return b.String()
}

func (e *TransportError) Unwrap() error { return e.Err }

// mayHaveChanged reports whether the request may have changed something
// at the service: it may have been processed, and it was not a read.
func (e *TransportError) mayHaveChanged() bool {
	return e.Sent && !strings.HasPrefix(e.Op, http.MethodGet+" ")
}

// DecodeError is a 200/207 (or recipients) answer whose body cannot be
// understood. For a send, the notifications may have been delivered.
type DecodeError struct {
	Method     string
	StatusCode int
	RequestID  string
	Err        error  // what is wrong
	Excerpt    string // bounded, sanitized start of the body
}

func (e *DecodeError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cannot understand the service's %d answer (", e.StatusCode)
	if e.RequestID != "" {
		b.WriteString("request id ")
		b.WriteString(e.RequestID)
	} else {
		b.WriteString("no request id")
	}
	b.WriteString("): ")
	b.WriteString(e.Err.Error())
	if e.Method == http.MethodPost {
		b.WriteString("; the notifications may have been delivered")
	}
	if e.Excerpt != "" {
		b.WriteString("; body: ")
		b.WriteString(e.Excerpt)
	}
	return b.String()
}

func (e *DecodeError) Unwrap() error { return e.Err }

// RequestID returns the x-request-id of the answer behind an error from
// Send or Recipients (a 400, a 401, any other status, an answer that
// could not be read or understood), wrapped or not; "" when no answer
// arrived. Apply records it with the targets, so a refused request can be
// quoted to support.
func RequestID(err error) string {
	var (
		ve *ValidationError
		ae *AuthError
		se *StatusError
		te *TransportError
		de *DecodeError
	)
	switch {
	case errors.As(err, &ve):
		return ve.RequestID
	case errors.As(err, &ae):
		return ae.RequestID
	case errors.As(err, &se):
		return se.RequestID
	case errors.As(err, &de):
		return de.RequestID
	case errors.As(err, &te):
		return te.RequestID
	}
	return ""
}

// Class says what a failed call means for retrying the same request.
type Class int

const (
	// Permanent: the service answered and a retry of the same request will
	// not help (400, 401, other 4xx, 3xx), or the error is not from a call.
	Permanent Class = iota
	// Safe: the request was certainly not processed (nothing sent, 429,
	// 503, 408), or it was a read-only call; a retry cannot duplicate.
	Safe
	// Ambiguous: the request may have been processed (timeout or dropped
	// connection after writing, 500/502/504, an unreadable 200/207).
	Ambiguous
)

func (c Class) String() string {
	switch c {
	case Safe:
		return "safe"
	case Ambiguous:
		return "ambiguous"
	default:
		return "permanent"
	}
}

// Classify sorts an error from Send or Recipients for a retry policy and
// returns the wait the service asked for (Retry-After), if any. It describes
// the request, not the caller: a cancelled context still classifies by
// whether the request was written.
func Classify(err error) (Class, time.Duration) {
	var (
		se *StatusError
		te *TransportError
		de *DecodeError
	)
	switch {
	case errors.As(err, &te):
		if !te.mayHaveChanged() {
			return Safe, 0
		}
		return Ambiguous, 0
	case errors.As(err, &se):
		c := statusClass(se.StatusCode)
		if c == Ambiguous && se.Method == http.MethodGet {
			c = Safe
		}
		return c, se.RetryAfter
	case errors.As(err, &de):
		if de.Method == http.MethodGet {
			return Permanent, 0 // a read that cannot be understood stays so
		}
		return Ambiguous, 0
	}
	return Permanent, 0
}

func statusClass(code int) Class {
	switch {
	case code == http.StatusTooManyRequests, code == http.StatusServiceUnavailable,
		code == http.StatusRequestTimeout, code == http.StatusTooEarly:
		return Safe
	case code >= 500, code >= 200 && code < 300:
		// A 2xx we did not expect was still accepted.
		return Ambiguous
	}
	return Permanent
}

// Retryable is Classify in the shape a retry loop wants: safe means a retry
// cannot duplicate a delivery; ambiguous means it might (retry only what is
// idempotent, e.g. tagged notifications); after is the wait the service asked
// for.
func Retryable(err error) (safe, ambiguous bool, after time.Duration) {
	c, after := Classify(err)
	return c == Safe, c == Ambiguous, after
}

// parseRetryAfter reads seconds or an HTTP date; 0 when absent or invalid.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		if n > int64(24*time.Hour/time.Second) {
			n = int64(24 * time.Hour / time.Second)
		}
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d.Round(time.Second)
		}
	}
	return 0
}

func writeRequestID(b *strings.Builder, id string) {
	if id != "" {
		b.WriteString(", request id ")
		b.WriteString(id)
	}
}

// excerpt summarises an error body for a human: an HTML page by its title,
// anything else as sanitized text, at most excerptMax bytes.
func excerpt(body []byte, contentType string) string {
	if len(body) > 64<<10 {
		body = body[:64<<10]
	}
	trimmed := bytes.TrimSpace(body)
	if isHTML(trimmed, contentType) {
		if t := htmlTitle(trimmed); t != "" {
			return "HTML page: " + sanitize(t, excerptMax)
		}
		return "HTML page: " + sanitize(stripTags(trimmed), excerptMax)
	}
	return sanitize(string(trimmed), excerptMax)
}

func isHTML(b []byte, contentType string) bool {
	if strings.Contains(strings.ToLower(contentType), "html") {
		return true
	}
	head := b
	if len(head) > 512 {
		head = head[:512]
	}
	lower := bytes.ToLower(head)
	return bytes.HasPrefix(lower, []byte("<!doctype html")) || bytes.Contains(lower, []byte("<html"))
}

func htmlTitle(b []byte) string {
	lower := bytes.ToLower(b)
	i := bytes.Index(lower, []byte("<title"))
	if i < 0 {
		return ""
	}
	j := bytes.IndexByte(lower[i:], '>')
	if j < 0 {
		return ""
	}
	start := i + j + 1
	end := bytes.Index(lower[start:], []byte("</title"))
	if end < 0 {
		return ""
	}
	return strings.TrimSpace(string(b[start : start+end]))
}

func stripTags(b []byte) string {
	var out strings.Builder
	in := false
	for _, c := range b {
		switch {
		case c == '<':
			in = true
		case c == '>':
			in = false
			out.WriteByte(' ')
		case !in:
			out.WriteByte(c)
		}
	}
	return out.String()
}

// sanitize makes untrusted text safe to print on one line: valid UTF-8, no
// control or format characters (no terminal escapes or bidi overrides),
// runs of space collapsed, at most max bytes.
func sanitize(s string, max int) string {
	cut := false
	if len(s) > 4*max {
		s, cut = s[:4*max], true
	}
	var b strings.Builder
	space := false
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		if unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			space = b.Len() > 0
			continue
		}
		n := utf8.RuneLen(r)
		if space {
			n++
		}
		if b.Len()+n > max {
			cut = true
			break
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	if cut {
		b.WriteString("…")
	}
	return b.String()
}
