package pushapi

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"testing/iotest"
)

// FuzzRecipientsSignals holds the signal table and the rules between its
// signals over any first page of a recipients list, headers and body:
//   - an explicit end ("this is the last page") never leads on;
//   - the walk never stops silently while the answer says the list goes
//     on (a has-more flag, a total above the ids served, a next page named
//     in a way not understood): it names the next page or fails;
//   - a next page is always on the base URL's host, under its path when
//     pushform builds it (cursor, offset, page paging);
//   - a page that ends the walk with an error and was held hands over no
//     id, and a held page is never handed over before nextPage read it;
//   - read whole or a byte at a time, the page says the same.
func FuzzRecipientsSignals(f *testing.F) {
	for _, s := range []struct{ headers, body string }{
		{"", `["a","b"]`},
		{"X-Next-Cursor: c2\nX-Total-Count: 5", `["a","b"]`},
		{"X-Total-Count: 2878", `["a","b","c"]`},
		{"X-Next-Page: 2\nX-Page: 1\nX-Per-Page: 2", `["a","b"]`},
		{"X-Has-More: false\nX-Next-Cursor: c2", `["a"]`},
		{"X-Is-Last: true", `{"data":["a"],"total":3}`},
		{"Next-Page-Token: t\nX-Continuation-Token: k", `["a"]`},
		{"X-Offset: 0\nX-Limit: 2\nX-Total: 9", `["a","b"]`},
		{"X-Next-Offset-Key: 3", `["a"]`},
		{"Link: </v1/push-notifications/recipients?page=2>; rel=\"next\"", `{"data":["a"],"hasMore":false}`},
		{"", `{"userIds":["a","b"],"nextCursor":"c2","hasMore":false,"total":3}`},
		{"", `{"data":["a","b"],"offset":0,"limit":2,"total":5}`},
		{"", `{"items":["a"],"page":1,"per_page":1,"total_count":3,"last_page":3}`},
		{"", `{"results":["a"],"meta":{"page":0,"pages":2,"count":"2","more":"yes"}}`},
		{"", `{"data":["a"],"pageInfo":{"hasNextPage":true,"endCursor":"c2"},"links":{"next":{"href":"?p=2"}}}`},
		{"", `{"data":["a"],"nextPageUri":"/x","isLast":"no","done":0}`},
		{"X-Last-Page: 4\nX-Page: 2", `["a"]`},
	} {
		f.Add(s.headers, []byte(s.body))
	}
	c, err := New(Options{BaseURL: "http://127.0.0.1:9/v1", APIKey: canary})
	if err != nil {
		f.Fatal(err)
	}
	base, _ := url.Parse(c.base)
	f.Fuzz(func(t *testing.T, headers string, body []byte) {
		h := http.Header{}
		for _, line := range strings.Split(headers, "\n") {
			if name, value, ok := strings.Cut(line, ":"); ok && name != "" {
				h.Add(http.CanonicalHeaderKey(strings.TrimSpace(name)), strings.TrimSpace(value))
			}
		}
		type outcome struct {
			info    pageInfo
			link    string
			next    string
			err     string
			handed  int
			readErr bool
		}
		read := func(r func() *bytes.Reader, oneByte bool) outcome {
			var o outcome
			fetch := &recipientsFetch{c: c}
			fetch.fn = func(ids []string) error {
				if fetch.hold {
					t.Fatalf("a held page handed over %d ids", len(ids))
				}
				o.handed += len(ids)
				return nil
			}
			var pg pageAnswer
			var in = r()
			var rd interface{ Read([]byte) (int, error) } = in
			if oneByte {
				rd = iotest.OneByteReader(in)
			}
			if _, err := c.readPage(&pg, h, rd, fetch); err != nil {
				o.readErr = true
				return o
			}
			if err := fetch.flush(); err != nil {
				t.Fatal(err)
			}
			held := fetch.hold
			w := &walk{page: 1, total: -1, firstPage: -1}
			next, err := c.nextPage(c.base+RecipientsPath, &pg, fetch, w)
			o.info, o.link, o.next = pg.info, pg.link, next
			if err != nil {
				o.err = err.Error()
				if held && o.handed > 0 {
					t.Fatalf("a held page that failed handed over %d ids", o.handed)
				}
				return o
			}
			if err := fetch.release(); err != nil {
				t.Fatal(err)
			}
			served := int64(fetch.served)
			p := &pg.info
			switch {
			case p.end < 0 && next != "":
				t.Fatalf("an explicit end (%s) led on to %q", p.endFrom, next)
			case next == "" && p.end > 0:
				t.Fatalf("stopped silently although %s", p.endFrom)
			case next == "" && p.total > served:
				t.Fatalf("stopped silently with a total of %d above %d served", p.total, served)
			case next == "" && p.end == 0 && p.nextish != "":
				t.Fatalf("stopped silently although %s names a next page", p.nextish)
			}
			if next != "" {
				u, err := url.Parse(next)
				if err != nil || !strings.EqualFold(u.Host, base.Host) || u.Scheme != base.Scheme {
					t.Fatalf("next page %q is not on the base URL's host", next)
				}
			}
			if int64(o.handed) != int64(fetch.taken) {
				t.Fatalf("handed %d of %d ids taken", o.handed, fetch.taken)
			}
			return o
		}
		whole := read(func() *bytes.Reader { return bytes.NewReader(body) }, false)
		bytewise := read(func() *bytes.Reader { return bytes.NewReader(body) }, true)
		if whole.readErr != bytewise.readErr || whole.next != bytewise.next || whole.err != bytewise.err || whole.handed != bytewise.handed {
			t.Fatalf("whole %+v\nbyte by byte %+v", whole, bytewise)
		}
	})
}
