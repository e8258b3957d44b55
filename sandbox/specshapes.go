package sandbox

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// SpecShapes are more answers a service may give where the spec says "not
// shown" (issue 38): paging signalled in headers, by an explicit end flag,
// by offset or page number; a body size limit; optional fields in forms a
// client may not read; bursts of 429. The zero value changes nothing.
type SpecShapes struct {
	// MaxBodyBytes, when positive, refuses a send request whose body is
	// longer, as TooLargeAnswer says. (MaxBodyBytes, the constant, still
	// bounds what is read at all.)
	MaxBodyBytes int
	// TooLargeAnswer is how a body over MaxBodyBytes is refused: "413"
	// (the default: 413 Payload Too Large) or "400" (a request-level issue
	// saying the body is too large).
	TooLargeAnswer string
	// SendFaults answer the first send requests to arrive, in order, each
	// with a status (429 or 503) and Retry-After: 1, before anything is
	// processed: 429x5 then 503x2 is a burst of five 429s, then two 503s.
	SendFaults []SendFault
	// DeviceCountFormat is how deviceCount is written: "number" (the
	// default) or "words" ("2 devices": a count no client reads).
	DeviceCountFormat string
}

// SendFault is a status answered to Times send requests in a row.
type SendFault struct {
	Status, Times int
}

// Values of the issue 38 shapes: Options.RecipientsPaging, SinceFormat,
// DeviceCountFormat and TooLargeAnswer.
const (
	// PagingHeader: a bare array, the next cursor in X-Next-Cursor and the
	// whole list's size in X-Total-Count.
	PagingHeader = "header"
	// PagingTotalOnly: a bare array of the first page only, with the whole
	// list's size in X-Total-Count and no way to the next page.
	PagingTotalOnly = "total-only"
	// PagingOffset: {"data":[...],"offset":N,"limit":M,"total":T}, paged
	// with ?offset=N&limit=M.
	PagingOffset = "offset"
	// PagingPage: {"items":[...],"page":N,"per_page":M,"total_count":T},
	// paged with ?page=N&per_page=M (from 1).
	PagingPage = "page"
	// PagingHasMore: {"userIds":[...],"hasMore":B,"nextCursor":"C"}, where
	// the last page says hasMore false but still names a next cursor, to
	// empty pages that name themselves.
	PagingHasMore = "has-more"

	// SincePG is PostgreSQL's text form, "2026-11-01 11:00:00+00";
	// SinceSpaceZ "2026-11-01 11:00:00Z"; SinceWords no time a client
	// reads ("1 November 2026, 11:00").
	SincePG     = "pg"
	SinceSpaceZ = "space-z"
	SinceWords  = "words"

	CountNumber = "number"
	CountWords  = "words"
)

// specPaging reports whether paging is one of the issue 38 schemes.
func specPaging(paging string) bool {
	switch paging {
	case PagingHeader, PagingTotalOnly, PagingOffset, PagingPage, PagingHasMore:
		return true
	}
	return false
}

// serveSpecPaging answers GET /push-notifications/recipients in one of the
// issue 38 schemes; false for another. The list is gathered per request
// (its ordinals), which a test list of thousands affords.
func (s *Server) serveSpecPaging(x *exchange, e env) bool {
	paging := s.opts.RecipientsPaging
	if !specPaging(paging) {
		return false
	}
	var all []int
	s.recipients(e, 0, func(ord int) bool { all = append(all, ord); return true })
	q := x.r.URL.Query()
	num := func(name string, def, least int) (int, bool) {
		v := q.Get(name)
		if v == "" {
			return def, true
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < least || n > 1<<30 {
			x.issues(http.StatusBadRequest, []Issue{{Path: []any{name}, Message: name + " must be an integer from " + strconv.Itoa(least)}})
			return 0, false
		}
		return n, true
	}
	size, ok := num("limit", RecipientsPageSize, 1)
	if !ok {
		return true
	}
	start := 0
	switch paging {
	case PagingHeader, PagingHasMore:
		if start, ok = num("cursor", 0, 0); !ok {
			return true
		}
	case PagingOffset:
		if start, ok = num("offset", 0, 0); !ok {
			return true
		}
	case PagingPage:
		if size, ok = num("per_page", RecipientsPageSize, 1); !ok {
			return true
		}
		page, ok := num("page", 1, 1)
		if !ok {
			return true
		}
		start = (page - 1) * size
	}
	if s.faultPage(x, start/size+1) {
		return true
	}
	start = min(start, len(all))
	end := min(start+size, len(all))
	var b []byte
	switch paging {
	case PagingOffset:
		b = append(b, `{"data":`...)
	case PagingPage:
		b = append(b, `{"items":`...)
	case PagingHasMore:
		b = append(b, `{"userIds":`...)
	}
	b = append(b, '[')
	ids := newIDLister(s)
	for i, ord := range all[start:end] {
		if i > 0 {
			b = append(b, ',')
		}
		b = ids.appendQuoted(b, ord)
	}
	b = append(b, ']')
	total := strconv.Itoa(len(all))
	more := end < len(all)
	h := x.w.Header()
	switch paging {
	case PagingHeader:
		h.Set("X-Total-Count", total)
		if more {
			h.Set("X-Next-Cursor", strconv.Itoa(end))
		}
	case PagingTotalOnly:
		h.Set("X-Total-Count", total)
	case PagingOffset:
		b = append(b, `,"offset":`+strconv.Itoa(start)+`,"limit":`+strconv.Itoa(size)+`,"total":`+total+`}`...)
	case PagingPage:
		b = append(b, `,"page":`+strconv.Itoa(start/size+1)+`,"per_page":`+strconv.Itoa(size)+`,"total_count":`+total+`}`...)
	case PagingHasMore:
		// The last page and those past it still name a next cursor: the
		// end of the list, whose page names itself.
		b = append(b, `,"hasMore":`+strconv.FormatBool(more)+`,"nextCursor":"`+strconv.Itoa(end)+`"}`...)
	}
	x.note = strconv.Itoa(end-start) + " recipients"
	x.send(http.StatusOK, b)
	return true
}

// refuseSize answers a send request whose body is over
// SpecShapes.MaxBodyBytes, and reports whether it did.
func (s *Server) refuseSize(x *exchange) bool {
	limit := s.opts.SpecShapes.MaxBodyBytes
	if limit <= 0 || len(x.body) <= limit {
		return false
	}
	s.stats.badRequests.Add(1)
	msg := "the request body is " + strconv.Itoa(len(x.body)) + " bytes, over the limit of " + strconv.Itoa(limit) + " bytes"
	status := http.StatusRequestEntityTooLarge
	if s.opts.SpecShapes.TooLargeAnswer == "400" {
		status, msg = http.StatusBadRequest, "payload too large: "+msg
	}
	issues := []Issue{{Path: []any{}, Message: msg}}
	s.log.add(&logEntry{id: x.id, status: status, body: x.body, issues: issues})
	x.issues(status, issues)
	return true
}

// sendFaults deals out SpecShapes.SendFaults to send requests in order.
type sendFaults struct {
	mu   sync.Mutex
	next int // the fault being dealt
	used int // of its Times
}

// sendFault answers a send request with the next of SpecShapes.SendFaults,
// if any is left, and reports whether it did.
func (s *Server) sendFault(x *exchange) bool {
	faults := s.opts.SpecShapes.SendFaults
	if len(faults) == 0 {
		return false
	}
	f := &s.specFaults
	f.mu.Lock()
	for f.next < len(faults) && f.used >= max(faults[f.next].Times, 1) {
		f.next, f.used = f.next+1, 0
	}
	if f.next == len(faults) {
		f.mu.Unlock()
		return false
	}
	f.used++
	status := faults[f.next].Status
	f.mu.Unlock()
	if status == http.StatusTooManyRequests {
		s.stats.limited.Add(1)
	} else {
		s.stats.faults.Add(1)
	}
	s.log.add(&logEntry{id: x.id, status: status, fault: "send-fault", body: x.body})
	x.w.Header().Set("Retry-After", "1")
	x.message(status, "sandbox --send-fault "+strconv.Itoa(status)+": nothing was processed, try again")
	return true
}

// appendSince writes unreachableSince in one of the issue 38 forms.
func appendSince(b []byte, nanos int64, format string) []byte {
	t := time.Unix(0, nanos).UTC()
	switch format {
	case SincePG:
		return append(append(append(b, '"'), t.Format("2006-01-02 15:04:05")...), `+00"`...)
	case SinceSpaceZ:
		return append(append(append(b, '"'), t.Format("2006-01-02 15:04:05")...), `Z"`...)
	}
	return appendJSONString(b, t.Format("2 January 2006, 15:04"))
}

// appendCount writes deviceCount n as format says.
func appendCount(b []byte, n int, format string) []byte {
	if format != CountWords {
		return strconv.AppendInt(b, int64(n), 10)
	}
	if n == 1 {
		return append(b, `"1 device"`...)
	}
	return append(strconv.AppendInt(append(b, '"'), int64(n), 10), ` devices"`...)
}

// ParseSendFaults reads SendFaults written STATUS[xTIMES],...: "429x5,503x2".
func ParseSendFaults(spec string) ([]SendFault, error) {
	var out []SendFault
	for _, part := range strings.Split(spec, ",") {
		status, times := part, "1"
		if i := strings.IndexByte(part, 'x'); i >= 0 {
			status, times = part[:i], part[i+1:]
		}
		st, err1 := strconv.Atoi(status)
		n, err2 := strconv.Atoi(times)
		if err1 != nil || err2 != nil || n < 1 || st != http.StatusTooManyRequests && st != http.StatusServiceUnavailable {
			return nil, errors.New("want STATUS or STATUSxTIMES with STATUS 429 or 503, comma-separated (e.g. 429x5,503x2), not " + strconv.Quote(part))
		}
		out = append(out, SendFault{Status: st, Times: n})
	}
	return out, nil
}
