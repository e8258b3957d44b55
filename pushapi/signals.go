package pushapi

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// The paging signals of a recipients answer (spec 4.2 leaves paging
// unshown): one table of what a service may say about the pages of its
// list, where and meaning what. A new scheme is one row.

// place is where a paging signal is found.
type place uint8

const (
	// inBody: a key of an object answer, at its top level or one level
	// down in an object under a sigNest key (meta.total, links.next).
	inBody place = 1 << iota
	// inHeader: a response header field.
	inHeader
)

// meaning is what a paging signal says.
type meaning uint8

const (
	sigNone    meaning = iota
	sigList            // the user id list
	sigNest            // an object holding paging signals
	sigNext            // the next page: a URL, a relative reference or a cursor
	sigCursor          // the next page's cursor, unless a sigNext names it
	sigTotal           // how many ids the whole list holds
	sigMore            // true: more pages follow; false: this page is the last
	sigLast            // true: this page is the last; false: more follow; a number: the last page's number
	sigPage            // this page's number
	sigPages           // how many pages there are
	sigPerPage         // how many ids a page holds, asked as per_page (page paging)
	sigOffset          // where this page starts in the list (offset paging)
	sigLimit           // how many ids a page holds, asked as limit (offset paging)
	// sigNextish is no row: a key or header that names a next page in a
	// way not in the table (nextPageUri): a scheme pushform cannot follow.
	sigNextish
)

// signal is one row of the table: a name (matched without regard to
// case), where it is found and what it means.
type signal struct {
	name    string
	where   place
	meaning meaning
}

// signals is every paging signal pushform reads.
var signals = []signal{
	{"userIds", inBody, sigList},
	{"user_ids", inBody, sigList},
	{"recipients", inBody, sigList},
	{"data", inBody, sigList},
	{"items", inBody, sigList},
	{"results", inBody, sigList},

	{"links", inBody, sigNest},
	{"_links", inBody, sigNest},
	{"paging", inBody, sigNest},
	{"pagination", inBody, sigNest},
	{"meta", inBody, sigNest},
	{"pageInfo", inBody, sigNest},
	{"page_info", inBody, sigNest},

	{"next", inBody, sigNext},
	{"nextCursor", inBody, sigNext},
	{"next_cursor", inBody, sigNext},
	{"nextPageToken", inBody, sigNext},
	{"next_page_token", inBody, sigNext},
	{"nextPage", inBody, sigNext},
	{"next_page", inBody, sigNext},
	{"nextUrl", inBody, sigNext},
	{"next_url", inBody, sigNext},
	{"nextLink", inBody, sigNext},
	{"next_link", inBody, sigNext},
	{"nextPageUrl", inBody, sigNext},
	{"next_page_url", inBody, sigNext},
	{"nextRecordsUrl", inBody, sigNext},
	{"next_records_url", inBody, sigNext},
	{"@odata.nextLink", inBody, sigNext},
	{"nextToken", inBody, sigNext},
	{"next_token", inBody, sigNext},
	{"continuationToken", inBody, sigNext},
	{"continuation_token", inBody, sigNext},
	{"X-Next-Cursor", inHeader, sigNext},
	{"X-Next-Page", inHeader, sigNext},
	{"X-Next-Page-Token", inHeader, sigNext},
	{"Next-Page-Token", inHeader, sigNext},
	{"X-Next-Token", inHeader, sigNext},
	{"X-Continuation-Token", inHeader, sigNext},
	{"Continuation-Token", inHeader, sigNext},
	{"X-Continuation", inHeader, sigNext},
	{"X-Next", inHeader, sigNext},
	{"X-Next-Url", inHeader, sigNext},
	{"X-Next-Link", inHeader, sigNext},

	{"cursor", inBody, sigCursor},
	{"endCursor", inBody, sigCursor},
	{"end_cursor", inBody, sigCursor},

	{"total", inBody, sigTotal},
	{"totalCount", inBody, sigTotal},
	{"total_count", inBody, sigTotal},
	{"totalItems", inBody, sigTotal},
	{"total_items", inBody, sigTotal},
	{"totalResults", inBody, sigTotal},
	{"total_results", inBody, sigTotal},
	{"totalElements", inBody, sigTotal},
	{"total_elements", inBody, sigTotal},
	{"totalSize", inBody, sigTotal},
	{"total_size", inBody, sigTotal},
	{"count", inBody, sigTotal},
	{"X-Total-Count", inHeader, sigTotal},
	{"X-Total", inHeader, sigTotal},
	{"Total-Count", inHeader, sigTotal},
	{"X-Total-Items", inHeader, sigTotal},
	{"X-Total-Results", inHeader, sigTotal},

	{"hasMore", inBody, sigMore},
	{"has_more", inBody, sigMore},
	{"hasNext", inBody, sigMore},
	{"has_next", inBody, sigMore},
	{"hasNextPage", inBody, sigMore},
	{"has_next_page", inBody, sigMore},
	{"more", inBody, sigMore},
	{"moreResults", inBody, sigMore},
	{"more_results", inBody, sigMore},
	{"X-Has-More", inHeader, sigMore},
	{"Has-More", inHeader, sigMore},
	{"Has-Next", inHeader, sigMore},
	{"X-Has-Next", inHeader, sigMore},
	{"X-More", inHeader, sigMore},

	{"isLast", inBody, sigLast},
	{"is_last", inBody, sigLast},
	{"last", inBody, sigLast},
	{"lastPage", inBody, sigLast},
	{"last_page", inBody, sigLast},
	{"isLastPage", inBody, sigLast},
	{"is_last_page", inBody, sigLast},
	{"done", inBody, sigLast},
	{"X-Is-Last", inHeader, sigLast},
	{"Is-Last", inHeader, sigLast},
	{"X-Last-Page", inHeader, sigLast},

	{"page", inBody, sigPage},
	{"currentPage", inBody, sigPage},
	{"current_page", inBody, sigPage},
	{"pageNumber", inBody, sigPage},
	{"page_number", inBody, sigPage},
	{"X-Page", inHeader, sigPage},
	{"X-Current-Page", inHeader, sigPage},

	{"pages", inBody, sigPages},
	{"totalPages", inBody, sigPages},
	{"total_pages", inBody, sigPages},
	{"pageCount", inBody, sigPages},
	{"page_count", inBody, sigPages},
	{"X-Total-Pages", inHeader, sigPages},
	{"X-Page-Count", inHeader, sigPages},
	{"X-Pages", inHeader, sigPages},

	{"per_page", inBody, sigPerPage},
	{"perPage", inBody, sigPerPage},
	{"pageSize", inBody, sigPerPage},
	{"page_size", inBody, sigPerPage},
	{"X-Per-Page", inHeader, sigPerPage},
	{"X-Page-Size", inHeader, sigPerPage},

	{"offset", inBody, sigOffset},
	{"X-Offset", inHeader, sigOffset},

	{"limit", inBody, sigLimit},
	{"X-Limit", inHeader, sigLimit},
}

// bodySignals maps a body key, lower case, to its meaning; headerSignals
// are the rows found in headers, in table order.
var bodySignals, headerSignals = func() (map[string]meaning, []signal) {
	body := map[string]meaning{}
	var headers []signal
	for _, s := range signals {
		if s.where&inBody != 0 {
			body[strings.ToLower(s.name)] = s.meaning
		}
		if s.where&inHeader != 0 {
			headers = append(headers, signal{http.CanonicalHeaderKey(s.name), inHeader, s.meaning})
		}
	}
	return body, headers
}()

// maxSignalKey is the longest body key looked up in the table.
const maxSignalKey = 32

// bodySignal is the meaning of body key key: its row's, or sigNextish for
// a key that names a next page otherwise (nextPageUri), else sigNone.
func bodySignal(key []byte) meaning {
	if len(key) > maxSignalKey {
		return sigNone
	}
	var buf [maxSignalKey]byte
	lower := buf[:len(key)]
	for i, c := range key {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	if m, ok := bodySignals[string(lower)]; ok {
		return m
	}
	if bytes.Contains(lower, []byte("next")) {
		for _, w := range [...]string{"page", "cursor", "url", "uri", "link", "token", "href", "offset", "key"} {
			if bytes.Contains(lower, []byte(w)) {
				return sigNextish
			}
		}
	}
	return sigNone
}

// nextishHeader reports whether header name (canonical), not in the
// table, names a next page or a cursor: a scheme pushform cannot follow.
func nextishHeader(name string) bool {
	l := strings.ToLower(name)
	return strings.Contains(l, "next") || strings.Contains(l, "cursor") || strings.Contains(l, "continuation")
}

// found is a signal's value and where it came from ("meta.total",
// "header X-Total-Count"), for messages.
type found struct{ v, from string }

// pageInfo is what one recipients answer says about paging, from its
// headers and body.
type pageInfo struct {
	next, cursor found
	total        int64 // -1: not said
	totalFrom    string
	// end is 1 when the answer says more pages follow, -1 when it says it
	// is the last, 0 when it says neither; endFrom is the signal with its
	// value ("hasMore: false").
	end     int8
	endFrom string
	// The page's number, the number of pages, ids a page holds and where
	// the page starts; -1 when not said.
	page, pages, perPage, offset, limit int64
	pagesFrom                           string
	nextish                             string // a signal naming a next page in a way not understood
	any                                 bool   // some signal was seen (the list aside)
}

func newPageInfo() pageInfo {
	return pageInfo{total: -1, page: -1, pages: -1, perPage: -1, offset: -1, limit: -1}
}

// nextPage returns the next page the answer names and where.
func (p *pageInfo) nextPage() found {
	if p.next.v != "" {
		return p.next
	}
	return p.cursor
}

// count records a whole number signal m of value n from from; the first
// one of each meaning wins.
func (p *pageInfo) count(m meaning, n int64, from string) {
	p.any = true
	set := func(f *int64) {
		if *f < 0 {
			*f = n
		}
	}
	switch m {
	case sigTotal:
		if p.total < 0 {
			p.total, p.totalFrom = n, from
		}
	case sigPage:
		set(&p.page)
	case sigPages, sigLast:
		if p.pages < 0 {
			p.pages, p.pagesFrom = n, from
		}
	case sigPerPage:
		set(&p.perPage)
	case sigOffset:
		set(&p.offset)
	case sigLimit:
		set(&p.limit)
	}
}

// flag records an end signal m: more (sigMore) or last (sigLast) is
// value. A "this is the last page" wins over a "more follow".
func (p *pageInfo) flag(m meaning, value bool, from string) {
	p.any = true
	more := value == (m == sigMore)
	switch {
	case !more:
		if p.end >= 0 {
			p.end, p.endFrom = -1, fmt.Sprintf("%s: %v", from, value)
		}
	case p.end == 0:
		p.end, p.endFrom = 1, fmt.Sprintf("%s: %v", from, value)
	}
}

// setNext records a next page (sigNext) or cursor (sigCursor) v.
func (p *pageInfo) setNext(m meaning, v, from string) {
	p.any = true
	switch {
	case v == "":
	case m == sigNext && p.next.v == "":
		p.next = found{v, from}
	case m == sigCursor && p.cursor.v == "":
		p.cursor = found{v, from}
	}
}

// merge is what the headers (p) and the body (b) say together: a signal of
// the headers first, a "last page" from either.
func (p pageInfo) merge(b *pageInfo) pageInfo {
	if p.next.v == "" {
		p.next = b.next
	}
	if p.cursor.v == "" {
		p.cursor = b.cursor
	}
	if p.total < 0 {
		p.total, p.totalFrom = b.total, b.totalFrom
	}
	if b.end < 0 || p.end == 0 {
		if b.end != 0 {
			p.end, p.endFrom = b.end, b.endFrom
		}
	}
	if p.pages < 0 {
		p.pages, p.pagesFrom = b.pages, b.pagesFrom
	}
	for _, f := range [...]struct{ to, from *int64 }{{&p.page, &b.page}, {&p.perPage, &b.perPage}, {&p.offset, &b.offset}, {&p.limit, &b.limit}} {
		if *f.to < 0 {
			*f.to = *f.from
		}
	}
	if p.nextish == "" {
		p.nextish = b.nextish
	}
	p.any = p.any || b.any
	return p
}

// headerInfo reads the paging signals of an answer's headers.
func headerInfo(h http.Header) pageInfo {
	p := newPageInfo()
	for _, s := range headerSignals {
		vs := h.Values(s.name)
		if len(vs) == 0 {
			continue
		}
		v := strings.TrimSpace(vs[0])
		from := "header " + s.name
		switch s.meaning {
		case sigNext:
			if len(v) > MaxCursorBytes {
				p.nextish = from // refused below as a scheme it cannot follow
				continue
			}
			p.setNext(sigNext, validUTF8([]byte(v)), from)
		case sigMore, sigLast:
			endValue(&p, s.meaning, v, from)
		default:
			if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
				p.count(s.meaning, n, from)
			}
		}
	}
	// Any other header that names a next page: the answer pages in a way
	// not in the table. The first by name, so the message is stable.
	var names []string
	for name := range h {
		if nextishHeader(name) && !slices.ContainsFunc(headerSignals, func(s signal) bool { return s.name == name }) {
			names = append(names, name)
		}
	}
	if len(names) > 0 && p.nextish == "" {
		slices.Sort(names)
		p.nextish, p.any = "header "+names[0], true
	}
	return p
}

// parseFlag reads a yes-or-no value: true/false, 1/0, yes/no.
func parseFlag(v string) (value, ok bool) {
	switch strings.ToLower(v) {
	case "true", "1", "yes":
		return true, true
	case "false", "0", "no":
		return false, true
	}
	return false, false
}

// endValue records end signal m of text value v: under sigLast a whole
// number is the last page's number, else a yes-or-no value.
func endValue(p *pageInfo, m meaning, v, from string) {
	v = strings.TrimSpace(v)
	if m == sigLast {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
			p.count(sigLast, n, from)
			return
		}
	}
	if b, ok := parseFlag(v); ok {
		p.flag(m, b, from)
	}
}

// flagValue reads an end signal of the body: a boolean, or a string or
// number endValue takes (under sigLast a number is the last page's, as
// Laravel's last_page). Anything else (a URL under last, as JSON:API has
// it) says nothing.
func (s *scanner) flagValue(m meaning, p *pageInfo, from string) error {
	switch s.peek() {
	case 't', 'f':
		v := s.peek() == 't'
		word := "false"
		if v {
			word = "true"
		}
		if err := s.literal(word); err != nil {
			return err
		}
		p.flag(m, v, from)
		return nil
	case '"', '0':
		v, ok, err := s.numeric()
		if err != nil || !ok {
			return err
		}
		endValue(p, m, string(v), from)
		return nil
	}
	return s.skip(1)
}
