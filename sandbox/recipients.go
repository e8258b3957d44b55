package sandbox

import (
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"

	"pushform/internal/jsonstr"
)

// RecipientsPageSize is the default page of the object shape of
// GET /push-notifications/recipients; ?limit= (1 to 10000) changes it.
const RecipientsPageSize = 1000

// eligible reports whether device idx counts a user in for a key of
// environment e (spec 2.3): a push token, the permission, the key's app.
// Rule 1, signed in with the user id, holds for every device of a user.
// The flags are read without the device's lock (a million locks a list).
func (s *Server) eligible(idx int32, e env) bool {
	d := &s.devs[idx]
	if s.infos[d.info].env != e {
		return false
	}
	const want = flagPushToken | flagPermission
	return atomic.LoadUint32(&d.flags)&want == want
}

// idLister appends the quoted ids of recipients listed in ordinal order.
// A range user's id is the one before it counted up by one, not formatted
// anew, and is quoted as it is when its prefix and suffix need no escaping:
// a list of a million ids took 20 ms more formatting and quoting them one
// by one.
type idLister struct {
	s     *Server
	ord   int    // the ordinal of id; -1 before the first
	last  int    // the ordinal after its range's last user
	id    []byte // the last range user's id
	digit int    // where its number starts
	end   int    // where its number ends
	plain bool   // its prefix and suffix are quoted as they are
}

func newIDLister(s *Server) *idLister { return &idLister{s: s, ord: -1} }

// appendQuoted appends the id of the user of ordinal ord as a JSON string.
func (l *idLister) appendQuoted(b []byte, ord int) []byte {
	if ord < len(l.s.users) {
		return appendJSONString(b, l.s.users[ord].id)
	}
	if ord != l.ord+1 || ord >= l.last || !countUp(l.id[l.digit:l.end]) {
		l.format(ord)
	}
	l.ord = ord
	if !l.plain {
		return appendJSONString(b, l.id)
	}
	b = append(b, '"')
	b = append(b, l.id...)
	return append(b, '"')
}

// format formats the id of range user ord.
func (l *idLister) format(ord int) {
	l.id, l.last = l.id[:0], 0
	for _, r := range l.s.ranges {
		if ord < r.ordBase+r.count {
			f := r.user
			l.id = f.appendID(l.id, ord-r.ordBase)
			l.last, l.digit, l.end = r.ordBase+r.count, len(f.prefix), len(l.id)-len(f.suffix)
			l.plain = jsonstr.Plain(f.prefix) && jsonstr.Plain(f.suffix)
			return
		}
	}
}

// countUp adds one to the decimal number d in place, and reports false
// when it needs another digit.
func countUp(d []byte) bool {
	for i := len(d) - 1; i >= 0; i-- {
		if d[i] != '9' {
			d[i]++
			return true
		}
		d[i] = '0'
	}
	return false
}

// recipients calls emit for each user ordinal from start on whose user is
// a recipient for environment e, until emit returns false. It returns the
// ordinal after the last one looked at.
func (s *Server) recipients(e env, start int, emit func(ord int) bool) int {
	ord := start
	for ; ord < len(s.users); ord++ {
		u := &s.users[ord]
		for _, idx := range u.devs {
			if s.eligible(idx, e) {
				if !emit(ord) {
					return ord + 1
				}
				break
			}
		}
	}
	for _, r := range s.ranges {
		if ord >= r.ordBase+r.count {
			continue
		}
		if r.info.env != e {
			ord = r.ordBase + r.count
			continue
		}
		for ; ord < r.ordBase+r.count; ord++ {
			i := ord - r.ordBase
			if s.eligible(r.devBase+int32(i), e) {
				if !emit(ord) {
					return ord + 1
				}
			}
		}
	}
	return ord
}

// handleRecipients answers GET /push-notifications/recipients: a bare
// array of every recipient, or paged (RecipientsShape "object" or a
// RecipientsPaging) with the next page named as that option says.
func (s *Server) handleRecipients(x *exchange, e env) {
	if s.serveSpecPaging(x, e) {
		return
	}
	q := x.r.URL.Query()
	paging := s.opts.RecipientsPaging
	if paging == "" && s.opts.RecipientsShape == "object" {
		paging = PagingCursor
	}
	if paging == "" {
		s.serveAllRecipients(x, e)
		return
	}
	start := 0
	c := q.Get("cursor")
	if c != "" {
		n, err := strconv.Atoi(c)
		if err != nil || n < 0 || n > s.nUsers {
			x.issues(http.StatusBadRequest, []Issue{{Path: []any{"cursor"}, Message: "invalid cursor: pass the next value of the previous page"}})
			return
		}
		start = n
	}
	limit := RecipientsPageSize
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 10000 {
			x.issues(http.StatusBadRequest, []Issue{{Path: []any{"limit"}, Message: "limit must be an integer from 1 to 10000"}})
			return
		}
		limit = n
	}
	if s.recipientsFault(x, c) {
		return
	}
	var b []byte
	switch paging {
	case PagingLink:
		b = append(b, '[')
	case PagingLinksNext:
		b = append(b, `{"data":[`...)
	default:
		b = append(b, `{"userIds":[`...)
	}
	n := 0
	ids := newIDLister(s)
	next := s.recipients(e, start, func(ord int) bool {
		if n > 0 {
			b = append(b, ',')
		}
		b = ids.appendQuoted(b, ord)
		n++
		return n < limit
	})
	b = append(b, ']')
	more := next < s.nUsers
	var nextCursor string
	if more {
		nextCursor = strconv.Itoa(next)
		s.notePage(c, nextCursor)
	}
	// A next page link: the path asked for with the next cursor, and the
	// limit when one was given.
	link := func() string {
		v := url.Values{"cursor": {nextCursor}}
		if l := q.Get("limit"); l != "" {
			v.Set("limit", l)
		}
		return x.r.URL.Path + "?" + v.Encode()
	}
	switch paging {
	case PagingLink:
		first := x.r.URL.Path
		if more {
			x.w.Header().Set("Link", "<"+first+`>; rel="first", <`+link()+`>; rel="next"; type="application/json"`)
		} else {
			x.w.Header().Set("Link", "<"+first+`>; rel="first"`)
		}
	case PagingLinksNext:
		b = append(b, `,"links":{"self":`...)
		b = appendJSONString(b, []byte(x.r.URL.RequestURI()))
		b = append(b, `,"next":`...)
		if more {
			b = appendJSONString(b, []byte("http://"+x.r.Host+link()))
		} else {
			b = append(b, "null"...)
		}
		b = append(b, "}}"...)
	default:
		if more {
			b = append(b, `,"next":"`...)
			b = append(b, nextCursor...)
			b = append(b, '"')
		}
		b = append(b, '}')
	}
	x.note = strconv.Itoa(n) + " recipients"
	x.send(http.StatusOK, b)
}

// serveAllRecipients answers with a bare array of every recipient,
// the whole list at once (RecipientsShape "array", no RecipientsPaging).
func (s *Server) serveAllRecipients(x *exchange, e env) {
	x.w.Header().Set("Content-Type", "application/json")
	x.w.WriteHeader(http.StatusOK)
	// Written in pieces of 64 KiB, not gathered: ten million ids are
	// 120 MB.
	ids := newIDLister(s)
	buf := make([]byte, 0, 64<<10+1<<10)
	buf = append(buf, '[')
	n := 0
	s.recipients(e, 0, func(ord int) bool {
		if n > 0 {
			buf = append(buf, ',')
		}
		n++
		buf = ids.appendQuoted(buf, ord)
		if len(buf) >= 64<<10 {
			x.w.Write(buf)
			buf = buf[:0]
		}
		return true
	})
	x.w.Write(append(buf, ']'))
	x.note = strconv.Itoa(n) + " recipients"
	x.logLine("200")
}

// notePage numbers the page that cursor next asks for: the one after the
// page cursor asked for.
func (s *Server) notePage(cursor, next string) {
	s.recMu.Lock()
	defer s.recMu.Unlock()
	page := 1
	if cursor != "" {
		page = s.recPages[cursor]
	}
	if page > 0 {
		if _, ok := s.recPages[next]; !ok {
			s.recPages[next] = page + 1
		}
	}
}

// recipientsFault answers the first requests for a page that
// Options.RecipientsFaults names, and reports whether it did.
func (s *Server) recipientsFault(x *exchange, cursor string) bool {
	if len(s.opts.RecipientsFaults) == 0 {
		return false
	}
	s.recMu.Lock()
	page := 1
	if cursor != "" {
		page = s.recPages[cursor]
	}
	s.recMu.Unlock()
	return s.faultPage(x, page)
}

// faultPage answers a request for page of the recipients list as
// Options.RecipientsFaults say, and reports whether it did.
func (s *Server) faultPage(x *exchange, page int) bool {
	if len(s.opts.RecipientsFaults) == 0 {
		return false
	}
	s.recMu.Lock()
	status := 0
	for _, f := range s.opts.RecipientsFaults {
		if f.Page == page && s.recFaulted[page] < max(f.Times, 1) {
			status = f.Status
			s.recFaulted[page]++
			break
		}
	}
	s.recMu.Unlock()
	if status == 0 {
		return false
	}
	s.stats.faults.Add(1)
	x.w.Header().Set("Retry-After", "1")
	x.message(status, "recipients page "+strconv.Itoa(page)+": sandbox fault, try again")
	return true
}
