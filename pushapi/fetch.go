package pushapi

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Recipients fetches the user ids that can receive a push now (spec 4.2),
// following paging to the last page. It is RecipientsFunc collecting every
// id.
func (c *Client) Recipients(ctx context.Context) (*RecipientsResponse, error) {
	out := &RecipientsResponse{}
	ids, err := c.RecipientsFunc(ctx, func(chunk []string) error {
		out.UserIDs = append(out.UserIDs, chunk...)
		return nil
	})
	out.RequestIDs = ids
	if err != nil {
		return nil, err
	}
	return out, nil
}

// recipientsChunk is how many ids RecipientsFunc hands over at a time.
const recipientsChunk = 4096

// RecipientsFunc fetches the recipient list (spec 4.2), following its
// paging, and calls fn with the user ids in chunks in the order served,
// each id once (duplicates within and across pages are dropped). fn may
// keep the slice and its strings; an error from fn stops the fetch and is
// returned. The request ids of the pages fetched are returned, also with
// an error.
//
// How an answer pages is read from the table of paging signals (see
// signals): the next page named by a Link header with rel="next" (RFC
// 8288), by a header (X-Next-Cursor, Next-Page-Token...) or in the body
// (next, nextCursor, links.next, paging.next, cursor...): an absolute URL,
// a relative one, or a cursor sent back as ?cursor=. Without one, a total
// (X-Total-Count, total, meta.total...) above the ids served, a has-more
// flag or a page count is followed by offset paging (?offset=N&limit=M)
// when the answer gives an offset or limit, or page paging
// (?page=N&per_page=M) when it gives a page number, size or count. An
// explicit end (hasMore: false, isLast: true...) wins over a next page,
// and contradicts a total above the ids served: an error. So does any
// sign of more that pushform cannot follow, and a page after the first
// that brings no id not listed before while the walk would go on (a
// service that ignores the paging parameters answers page 1 again).
//
// The ids of a page are handed to fn only once what the page says about
// paging is known to be followable, so no id of a page that ends the walk
// with an error reaches fn: a list whose first page shows a sign of more
// it cannot follow hands over nothing. A bare array whose headers name
// the next page, or say nothing of paging, is handed over as it arrives
// (a list of ten million ids is planned and sent while it is read).
//
// A link is followed only on the base URL's scheme and host (the API key
// goes nowhere else). A page answered 503 or another status that
// certainly changed nothing is asked for again, up to
// Options.RecipientsMaxAttempts tries, waiting as apply's retries do
// (Retry-After honoured, up to Options.MaxRetryAfter); a 429 is waited
// out within Options.RateLimit and uses no try. The whole list is bounded
// by Options.RecipientsTimeout, each cursor or link by MaxCursorBytes and
// each id by MaxUserIDBytes; the API key in an id (in any escaping) is
// redacted like everywhere else.
func (c *Client) RecipientsFunc(ctx context.Context, fn func(ids []string) error) (requestIDs []string, err error) {
	parent := ctx
	ctx, cancel := c.recDeadline(ctx)
	defer cancel()
	start := time.Now()
	f := &recipientsFetch{c: c, fn: fn, size: recipientsChunk}
	w := &walk{total: -1, firstPage: -1}
	target := c.base + RecipientsPath
	fetched := map[string]struct{}{target: {}}
	for page := 1; ; page++ {
		if page > maxPages {
			return requestIDs, fmt.Errorf("the recipient list did not end after %d pages (%s user ids): the service keeps sending a next page; ask its operators why its paging does not end", maxPages, count(f.total))
		}
		w.page = page
		pg, err := c.recipientsPageRetry(ctx, target, page, f, &requestIDs)
		if err == nil {
			err = f.flush()
		}
		if err != nil {
			f.held = nil
			if ctx.Err() != nil && parent.Err() == nil {
				return requestIDs, fmt.Errorf("the recipient list was not complete after %s (%d pages, %s user ids so far): raise the recipients time limit (--recipients-timeout) if the list is that long: %w",
					time.Since(start).Round(time.Second), page, count(f.total), err)
			}
			if page > 1 {
				err = fmt.Errorf("recipients page %d, after %s listed: %w", page, userIDs(f.total), err)
			}
			return requestIDs, err
		}
		next, err := c.nextPage(target, pg, f, w)
		if err != nil {
			f.held = nil
			return requestIDs, c.pageError(pg, page, f, err)
		}
		if next == "" {
			return requestIDs, f.release()
		}
		// A next page already fetched loops; when the service named it,
		// that says it best, else a page of nothing new does (a service
		// ignoring the offset it is asked for answers page 1 again).
		_, again := fetched[next]
		if again && pg.nextRaw != "" {
			f.held = nil
			return requestIDs, &DecodeError{Method: http.MethodGet, StatusCode: http.StatusOK, RequestID: pg.requestID,
				Err: c.red.Error(fmt.Errorf("paging loops: recipients page %d names a page already fetched as its next (%s)", page, sanitize(pg.nextRaw, 80)))}
		}
		if page > 1 && pg.fresh == 0 {
			f.held = nil
			return requestIDs, c.pageError(pg, page, f, fmt.Errorf("the page brought no user id not listed before (%s served) yet the list goes on: "+
				"a service that ignores the paging parameters answers the first page again; the list would be incomplete", count(pg.served)))
		}
		if again {
			f.held = nil
			return requestIDs, c.pageError(pg, page, f, fmt.Errorf("paging loops: the next page would be %s, already fetched", sanitize(strings.TrimPrefix(next, c.base), 80)))
		}
		if err := f.release(); err != nil {
			return requestIDs, err
		}
		fetched[next] = struct{}{}
		target = next
	}
}

// pageError is err about page of the list, which ends the walk: it says
// how many ids were listed before it (and handed over), none of its own.
func (c *Client) pageError(pg *pageAnswer, page int, f *recipientsFetch, err error) error {
	where := "recipients page 1"
	if page > 1 {
		where = fmt.Sprintf("recipients page %d, after %s listed", page, userIDs(f.total))
	}
	return &DecodeError{Method: http.MethodGet, StatusCode: http.StatusOK, RequestID: pg.requestID,
		Err: c.red.Error(fmt.Errorf("%s: %w", where, err))}
}

// userIDs is "1 user id" or "N user ids".
func userIDs(n int) string {
	if n == 1 {
		return "1 user id"
	}
	return count(n) + " user ids"
}

// walk is what the pages read so far say about the list, for the next.
type walk struct {
	page int // the page being read, from 1
	// total is the size of the whole list the latest answer gave (-1:
	// none did); a page that does not repeat it keeps it.
	total     int64
	totalFrom string
	// firstPage is the number the first page gave itself (-1: none), so
	// a page count is read from 0 or from 1 as the service counts.
	firstPage int64
	perPage   int64 // ids the first page held: the page size when none is said
}

// recipientsPageRetry fetches one page, asking again while the answer
// says nothing was done (429, 503...) and no id of the page was read. A
// 429 waits within the rate limit budget and counts no try.
func (c *Client) recipientsPageRetry(ctx context.Context, target string, page int, f *recipientsFetch, requestIDs *[]string) (*pageAnswer, error) {
	limited, waited := 0, false
	for attempt := 1; ; attempt++ {
		// Every request waits out a pause a 429 asked for (one of this
		// list's pages, or of the run's sends), unless it just did.
		if !waited {
			if err := c.rate.Pause(ctx, c.sleep); err != nil {
				return &pageAnswer{}, err
			}
		}
		waited = false
		pageStart, before := time.Now(), f.served
		pg, err := c.recipientsPage(ctx, target, f)
		reqID := pg.requestID
		if c.log != nil {
			status := http.StatusOK
			if err != nil {
				status = statusOf(err)
			}
			c.log(RequestLog{Method: http.MethodGet, Path: RecipientsPath, Page: page, Status: status, RequestID: reqID,
				Duration: time.Since(pageStart), IDsReceived: f.served - before, Error: logWord(err)})
		}
		if reqID != "" {
			*requestIDs = append(*requestIDs, reqID)
		}
		if err == nil || f.served != before || ctx.Err() != nil {
			return pg, err
		}
		class, after := Classify(err)
		var se *StatusError
		var te *TransportError
		if class != Safe || !errors.As(err, &se) && !(errors.As(err, &te) && !te.Sent) {
			return pg, err
		}
		if se != nil && se.StatusCode == http.StatusTooManyRequests {
			limited++
			if werr := c.rate.Wait(ctx, c.recBackoff(limited, after), c.sleep); werr != nil {
				return pg, fmt.Errorf("%w; %w", err, werr)
			}
			attempt-- // a wait, not a try
			waited = true
			continue
		}
		if attempt >= c.recAttempts {
			return pg, err
		}
		if c.sleep(ctx, c.recBackoff(attempt, after)) != nil {
			return pg, err
		}
	}
}

// recBackoff is the wait before asking for a page again: apply's policy,
// capped exponential backoff with jitter, never shorter than the
// Retry-After the service asked for (within MaxRetryAfter).
func (c *Client) recBackoff(attempt int, after time.Duration) time.Duration {
	const base, most = 250 * time.Millisecond, 30 * time.Second
	d := base << min(attempt-1, 16)
	if d > most || d <= 0 {
		d = most
	}
	d = d/2 + rand.N(d/2+1)
	return max(d, min(after, c.maxRetryAfter))
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d): // collected once unreferenced (Go 1.23)
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// nextPage works out the URL of the page after the one fetched from
// target: "" when it was the last. It reads what the answer said (pg.info,
// headers and body) with what the pages before said (w).
func (c *Client) nextPage(target string, pg *pageAnswer, f *recipientsFetch, w *walk) (string, error) {
	if pg.linkErr != nil {
		return "", fmt.Errorf("its Link header cannot be read (%v), so the next page cannot be found", pg.linkErr)
	}
	p := &pg.info
	if p.total >= 0 {
		w.total, w.totalFrom = p.total, p.totalFrom
	}
	if w.page == 1 {
		w.firstPage, w.perPage = p.page, int64(pg.served)
	}
	served := int64(f.served)
	if p.end < 0 {
		// An explicit end wins over any next page named beside it (a last
		// page with a stale cursor) but not over a total: both cannot hold.
		if w.total > served {
			return "", fmt.Errorf("the answer says it is the last page (%s) but the list holds %s user ids (%s) and %s were served: the list would be incomplete",
				sanitize(p.endFrom, 60), count(int(min(w.total, 1<<53))), sanitize(w.totalFrom, 40), count(f.served))
		}
		return "", nil
	}
	raw, from, isLink := pg.link, `the Link header's rel="next"`, true
	if raw == "" {
		n := p.nextPage()
		raw, from, isLink = n.v, n.from, false
	}
	pg.nextRaw = raw
	more := c.moreSaid(p, w, served)
	pageScheme := p.page >= 0 || p.perPage >= 0 || p.pages >= 0
	switch {
	case raw != "" && !isLink && pageScheme && digits([]byte(raw)):
		// A next page number beside page paging (X-Next-Page: 3).
		n, err := strconv.ParseInt(raw, 10, 64)
		if err == nil {
			return c.pageURL(n, p, w), nil
		}
	case raw != "":
	case more == "":
		return "", nil
	case p.offset >= 0 || p.limit >= 0 && !pageScheme:
		limit := p.limit
		if limit <= 0 {
			limit = int64(pg.served)
		}
		offset := served
		if p.offset >= 0 {
			offset = p.offset + int64(pg.served)
		}
		if limit <= 0 {
			return "", fmt.Errorf("the answer pages by offset and says more follows (%s) but served no user id and gives no limit: the list would be incomplete", more)
		}
		return fmt.Sprintf("%s%s?offset=%d&limit=%d", c.base, RecipientsPath, offset, limit), nil
	case pageScheme:
		next := int64(w.page) + 1
		if p.page >= 0 {
			next = p.page + 1
		}
		return c.pageURL(next, p, w), nil
	default:
		return "", c.unfollowed(more)
	}
	if !isLink && !c.looksLikeLink(raw) {
		return c.base + RecipientsPath + "?cursor=" + url.QueryEscape(raw), nil
	}
	cur, err := url.Parse(target)
	if err != nil {
		return "", err
	}
	ref, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("the next page in %s is not a URL: %q", from, sanitize(raw, 80))
	}
	u := cur.ResolveReference(ref)
	u.Fragment, u.RawFragment = "", ""
	base, _ := url.Parse(c.base)
	if u.User != nil || !strings.EqualFold(u.Scheme, base.Scheme) || !sameHost(u, base) {
		return "", fmt.Errorf("the next page in %s is on another host (%s): it is not followed, the API key is sent only to the base URL's host (%s)",
			from, sanitize(u.Scheme+"://"+u.Host, 80), sanitize(base.Host, 80))
	}
	return u.String(), nil
}

// pageURL asks for page n of page paging, of the size the answer gives
// (or the first page's).
func (c *Client) pageURL(n int64, p *pageInfo, w *walk) string {
	size := p.perPage
	if size <= 0 {
		size = w.perPage
	}
	q := fmt.Sprintf("?page=%d", n)
	if size > 0 {
		q += fmt.Sprintf("&per_page=%d", size)
	}
	return c.base + RecipientsPath + q
}

// moreSaid says how the answer says the list goes on beyond what was
// served, naming the signal ("hasMore: true"); "" when it does not.
func (c *Client) moreSaid(p *pageInfo, w *walk, served int64) string {
	first := w.firstPage
	if first < 0 {
		first = 1
	}
	switch {
	case p.end > 0:
		return sanitize(p.endFrom, 60)
	case w.total > served:
		return fmt.Sprintf("the list holds %s user ids (%s) and %s were served", count(int(min(w.total, 1<<53))), sanitize(w.totalFrom, 40), count(int(served)))
	case p.pages >= 0 && p.page >= 0 && p.page < first+p.pages-1:
		return fmt.Sprintf("page %d of %d (%s)", p.page, p.pages, sanitize(p.pagesFrom, 40))
	case p.nextish != "":
		return fmt.Sprintf("it names its next page under %q, which pushform cannot follow", sanitize(p.nextish, 40))
	}
	return ""
}

// unfollowed is the error of an answer that says the list goes on (more)
// but names no next page in a way pushform follows.
func (c *Client) unfollowed(more string) error {
	const how = `a Link header with rel="next", a next page or cursor in a header (X-Next-Cursor, Next-Page-Token...) or the body (next, links.next, cursor...), ` +
		`or an offset, limit, page or page size beside a total`
	return fmt.Errorf("the answer says the list goes on (%s) but names no next page pushform can follow (it follows %s): the list would be incomplete", more, how)
}

// looksLikeLink tells a next link in a body from a cursor value: an
// absolute URL, a query or dot-relative reference, or a path under the
// base URL's path (a cursor may start with "/" too: base64 does).
func (c *Client) looksLikeLink(v string) bool {
	switch {
	case strings.Contains(v, "://"), strings.HasPrefix(v, "?"), strings.HasPrefix(v, "./"), strings.HasPrefix(v, "../"):
		return true
	case strings.HasPrefix(v, "/") && !strings.HasPrefix(v, "//"):
		base, err := url.Parse(c.base)
		if err != nil {
			return false
		}
		p := v
		if i := strings.IndexAny(p, "?#"); i >= 0 {
			p = p[:i]
		}
		bp := strings.TrimSuffix(base.Path, "/")
		return bp == "" || p == bp || strings.HasPrefix(p, bp+"/")
	}
	return false
}

// sameHost compares hosts without regard to case, with default ports.
func sameHost(a, b *url.URL) bool {
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		if strings.EqualFold(u.Scheme, "https") {
			return "443"
		}
		return "80"
	}
	return strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

// count formats n with thousands separators, as pushform prints numbers.
func count(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// recipientsFetch gathers the ids of a recipient list into chunks.
//
// Lists usually come sorted (a database's index order): while every id is
// greater than the one before, none can repeat, and no set is kept: the
// ids are only compared with the one before. At the first id out of
// order, seen is built from the chunks handed over so far (kept in
// handed until the list ends: fn may keep a chunk but never changes it)
// and the one being gathered. In an apply's profile, the set took 37 ns
// an id even on its sorted path, and copied 9 MB a million.
type recipientsFetch struct {
	c      *Client
	fn     func([]string) error
	size   int        // ids a chunk: recipientsChunk (a test's fewer)
	seen   *idSet     // nil while the ids come in order
	handed [][]string // while in order: every chunk handed to fn
	buf    []byte     // the chunk's ids, one after another
	ends   []int      // where each ends in buf
	total  int        // ids handed over
	served int        // ids read, duplicates included
	taken  int        // ids taken, duplicates not: handed over or held
	// hold keeps the chunks of the page being read in held instead of
	// handing them over, until the page is known to be followable
	// (release) or not (then they are dropped).
	hold bool
	held [][]string
}

// add takes one id as served (valid until the call returns).
func (f *recipientsFetch) add(id []byte) error {
	f.served++
	if !isASCII(id) && !utf8.Valid(id) {
		id = []byte(validUTF8(id))
	}
	if f.c.red.ContainsBytes(id) { // an echo of the key: it must not reach a plan or the state
		id = []byte(f.c.red.String(string(id)))
	}
	if f.seen == nil && !f.inOrder(id) {
		if err := f.index(); err != nil {
			return err
		}
	}
	if f.seen != nil {
		if added, err := f.seen.add(id); !added {
			return err
		}
	}
	f.taken++
	f.buf = append(f.buf, id...)
	f.ends = append(f.ends, len(f.buf))
	if len(f.ends) == f.size {
		if err := f.flush(); err != nil {
			return &stopped{err}
		}
	}
	return nil
}

// inOrder reports whether id is greater than every id taken before.
func (f *recipientsFetch) inOrder(id []byte) bool {
	if k := len(f.ends); k > 0 {
		start := 0
		if k > 1 {
			start = f.ends[k-2]
		}
		return greater(id, f.buf[start:f.ends[k-1]])
	}
	if k := len(f.handed); k > 0 {
		last := f.handed[k-1]
		return string(id) > last[len(last)-1]
	}
	return true
}

// isASCII reports whether b is all ASCII, eight bytes at a time: most ids
// are, and need no UTF-8 check (utf8.Valid took 7 ns an id).
func isASCII(b []byte) bool {
	for ; len(b) >= 8; b = b[8:] {
		if binary.LittleEndian.Uint64(b)&0x8080808080808080 != 0 {
			return false
		}
	}
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// greater reports whether a sorts after b, comparing eight bytes at a
// time (bytes.Compare took 9 ns for two short ids).
func greater(a, b []byte) bool {
	for len(a) >= 8 && len(b) >= 8 {
		if x, y := binary.BigEndian.Uint64(a), binary.BigEndian.Uint64(b); x != y {
			return x > y
		}
		a, b = a[8:], b[8:]
	}
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return a[i] > b[i]
		}
	}
	return len(a) > len(b)
}

// index builds seen from every id taken so far, when one comes out of
// order.
func (f *recipientsFetch) index() error {
	s := newIDSet()
	var id []byte
	for _, chunk := range f.handed {
		for _, str := range chunk {
			id = append(id[:0], str...)
			if _, err := s.add(id); err != nil {
				return err
			}
		}
	}
	start := 0
	for _, end := range f.ends {
		if _, err := s.add(f.buf[start:end]); err != nil {
			return err
		}
		start = end
	}
	f.seen, f.handed = s, nil
	return nil
}

// stopped carries the caller's error out of the decoder untouched.
type stopped struct{ err error }

func (s *stopped) Error() string { return s.err.Error() }

// flush hands the chunk to fn (or holds it, see hold): its ids are
// substrings of one string copied from the buffer they were gathered in
// (one allocation a chunk, not one an id), and the buffer gathers the next
// chunk.
func (f *recipientsFetch) flush() error {
	if len(f.ends) == 0 {
		return nil
	}
	all := string(f.buf)
	chunk := make([]string, len(f.ends))
	start := 0
	for i, end := range f.ends {
		chunk[i] = all[start:end]
		start = end
	}
	f.buf, f.ends = f.buf[:0], f.ends[:0]
	if f.seen == nil {
		f.handed = append(f.handed, chunk)
	}
	if f.hold {
		f.held = append(f.held, chunk)
		return nil
	}
	f.total += len(chunk)
	return f.fn(chunk)
}

// release hands over the chunks held, and holds no more.
func (f *recipientsFetch) release() error {
	held := f.held
	f.held, f.hold = nil, false
	for _, chunk := range held {
		f.total += len(chunk)
		if err := f.fn(chunk); err != nil {
			return err
		}
	}
	return nil
}

// pageAnswer is what one recipients page said about paging.
type pageAnswer struct {
	requestID string
	info      pageInfo
	link      string // the Link header's rel="next" target, "" when none
	linkErr   error  // a Link header that cannot be parsed
	nextRaw   string // the next page as named, for messages
	// served counts the ids the page held, duplicates included; fresh
	// those not listed before.
	served, fresh int
}

// readPage reads a page's paging signals from its headers h and its ids
// from body into f, and what the body says of paging, into pg. The
// headers are known before any id: a page is handed over as it arrives
// only when they name the next page or say nothing of paging, and the
// body has nothing after the list (a bare array); otherwise f holds its
// ids until nextPage has read it.
func (c *Client) readPage(pg *pageAnswer, h http.Header, body io.Reader, f *recipientsFetch) (*scanner, error) {
	if v := h.Values("Link"); len(v) > 0 {
		pg.link, pg.linkErr = nextLink(v)
	}
	hi := headerInfo(h)
	named := (pg.link != "" || hi.nextPage().v != "") && hi.end >= 0 && hi.nextish == ""
	f.hold = hi.any && !named || pg.linkErr != nil
	served, taken := f.served, f.taken
	s, info, err := readRecipientsPage(body, 64<<10, f.add, func() { f.hold = true })
	pg.info = hi.merge(&info)
	pg.served, pg.fresh = f.served-served, f.taken-taken
	return s, err
}

// recipientsPage fetches one page and passes its ids to f as they
// arrive; it returns what the page says about the next one.
func (c *Client) recipientsPage(ctx context.Context, target string, f *recipientsFetch) (*pageAnswer, error) {
	pg := &pageAnswer{}
	r, err := c.do(ctx, http.MethodGet, target, nil, true)
	if err != nil {
		pg.requestID = RequestID(err)
		return pg, err
	}
	defer r.release(c)
	pg.requestID = r.requestID
	if r.status != http.StatusOK {
		return pg, c.errorFor(http.MethodGet, r, 0)
	}
	s, err := c.readPage(pg, r.header, r.stream, f)
	if err != nil {
		var stop *stopped
		if errors.As(err, &stop) {
			return pg, stop.err
		}
		if rerr := s.readErr(); rerr != nil { // the answer broke off: not its content's fault
			return pg, r.readError(c, rerr)
		}
		// The excerpt is what the window still holds: the start of the
		// answer when it went wrong early.
		window := s.start()
		return pg, &DecodeError{Method: http.MethodGet, StatusCode: r.status, RequestID: r.requestID,
			Err: c.red.Error(err), Excerpt: excerpt(c.red.Bytes(window), r.header.Get("Content-Type"))}
	}
	return pg, nil
}
