package command

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"pushform/pushapi"
	"pushform/termtext"
)

// logLevelWarning says what is wrong with the PUSHFORM_LOG value v, or ""
// when it is a level pushform logs at (debug, trace) or off (unset, off):
// a level that logs nothing must not look like one that logs quietly.
func logLevelWarning(v string) string {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "off", "debug", "trace":
		return ""
	case "info", "warn", "warning", "error":
		return fmt.Sprintf("PUSHFORM_LOG=%s logs nothing: pushform logs only at debug (PUSHFORM_LOG=debug); unset it to silence this warning", termtext.Clean(v))
	}
	return fmt.Sprintf("PUSHFORM_LOG=%q is not a log level: use debug (or trace, the same), or unset it; nothing is logged", termtext.Clean(v))
}

// debugOn reports whether PUSHFORM_LOG asks for debug lines.
func (m *Meta) debugOn() bool {
	if m.Getenv == nil { // an Env built in a test
		return false
	}
	switch strings.ToLower(strings.TrimSpace(m.Getenv("PUSHFORM_LOG"))) {
	case "debug", "trace":
		return true
	}
	return false
}

// debugLine formats one debug line: time, level, the message with
// control characters escaped.
func debugLine(msg string) string {
	return time.Now().UTC().Format("2006-01-02T15:04:05.000Z") + " [DEBUG] " + termtext.Clean(msg) + "\n"
}

// debugLines returns the logger of the state backend's debug lines
// (PostgreSQL connects and locks) that PUSHFORM_LOG=debug asks for, or
// nil.
func (m *Meta) debugLines() func(string) {
	if !m.debugOn() {
		return nil
	}
	var mu sync.Mutex
	w := m.Stderr
	return func(msg string) {
		line := debugLine(msg)
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprint(w, line)
	}
}

// debugLog returns the request logger PUSHFORM_LOG=debug asks for, or nil.
// It writes one line per HTTP exchange to stderr: method, path, status,
// request id, duration and counts; never the key, target ids or bodies
// (pushapi.RequestLog holds none of them).
func (m *Meta) debugLog() func(pushapi.RequestLog) {
	if !m.debugOn() {
		return nil
	}
	var mu sync.Mutex // workers log concurrently; lines must not interleave
	w := m.Stderr
	return func(r pushapi.RequestLog) {
		var b strings.Builder
		fmt.Fprintf(&b, "%s [DEBUG] %s %s", time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), r.Method, r.Path)
		if r.Page > 0 {
			fmt.Fprintf(&b, " page=%d", r.Page)
		}
		if r.Status != 0 {
			fmt.Fprintf(&b, " status=%d", r.Status)
		}
		if r.RequestID != "" {
			fmt.Fprintf(&b, " request_id=%s", termtext.Clean(r.RequestID))
		}
		fmt.Fprintf(&b, " duration=%s", r.Duration.Round(time.Millisecond))
		if r.IDsSent > 0 {
			fmt.Fprintf(&b, " ids_sent=%d", r.IDsSent)
		}
		fmt.Fprintf(&b, " ids_received=%d", r.IDsReceived)
		if r.Unreadable > 0 {
			fmt.Fprintf(&b, " unreadable_fields=%d", r.Unreadable) // results kept with optional fields as served
		}
		if r.Error != "" {
			fmt.Fprintf(&b, " error=%q", r.Error)
		}
		b.WriteByte('\n')
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprint(w, b.String())
	}
}
