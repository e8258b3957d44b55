package sandbox

import (
	"encoding/json"
	"strconv"
	"sync"
)

// maxLogBytes bounds the notification log: the oldest entries are dropped
// once the bodies and results kept pass it.
const maxLogBytes = 64 << 20

// logEntry is what the notification log keeps of one send request that
// passed authentication.
type logEntry struct {
	id         string
	status     int    // the status answered; 0 when the connection was dropped first
	fault      string // injected fault, if any
	body       []byte // the request body as sent
	issues     []Issue
	recipients [][]int32 // per notification, the devices attempted
	results    []byte    // the results array
}

func (e *logEntry) size() int {
	n := 256 + len(e.body) + len(e.results)
	for _, r := range e.recipients {
		n += 4 * len(r)
	}
	return n
}

// requestLog is the notification log: entries by request id, oldest
// evicted first beyond maxBytes.
type requestLog struct {
	mu       sync.Mutex
	byID     map[string]*logEntry
	order    []string
	head     int
	bytes    int
	maxBytes int
}

func (l *requestLog) add(e *logEntry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byID == nil {
		l.byID = map[string]*logEntry{}
	}
	l.byID[e.id] = e
	l.order = append(l.order, e.id)
	l.bytes += e.size()
	for l.bytes > l.maxBytes && l.head < len(l.order)-1 {
		old := l.byID[l.order[l.head]]
		delete(l.byID, l.order[l.head])
		l.order[l.head] = ""
		l.head++
		l.bytes -= old.size()
	}
	if l.head > len(l.order)/2 && l.head > 1024 {
		l.order = append([]string(nil), l.order[l.head:]...)
		l.head = 0
	}
}

func (l *requestLog) get(id string) *logEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.byID[id]
}

// render is the JSON of GET /_sandbox/log/{requestId}.
func (s *Server) renderLog(e *logEntry) []byte {
	b := []byte(`{"requestId":`)
	b = appendJSONString(b, e.id)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(e.status), 10)
	if e.fault != "" {
		b = append(b, `,"fault":`...)
		b = appendJSONString(b, e.fault)
	}
	b = append(b, `,"body":`...)
	switch {
	case e.body == nil:
		b = append(b, "null"...)
	case json.Valid(e.body):
		b = append(b, trimJSONSpace(e.body)...)
	default:
		b = appendJSONString(b, e.body)
	}
	if e.issues != nil {
		b = append(b, `,"issues":`...)
		b = appendIssues(b, e.issues, s.opts.IssuesShape)
	}
	b = append(b, `,"recipients":{`...)
	for i, devs := range e.recipients {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `":[`...)
		for j, idx := range devs {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, s.appendDeviceID(nil, idx))
		}
		b = append(b, ']')
	}
	b = append(b, `},"results":`...)
	if e.results == nil {
		b = append(b, "[]"...)
	} else {
		b = append(b, e.results...)
	}
	return append(b, '}')
}
