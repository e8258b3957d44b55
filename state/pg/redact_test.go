package pg

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// spellings are the forms a password takes in messages: as written, and
// escaped by URL and Go quoting.
func spellings(pw string) []string {
	q := strconv.Quote(pw)
	return []string{pw, url.QueryEscape(pw), url.PathEscape(pw), strings.ToLower(url.QueryEscape(pw)), q[1 : len(q)-1]}
}

func TestRedactorRemovesEverySpelling(t *testing.T) {
	for _, tt := range []struct {
		name, conn, pw string
	}{
		{"url", "postgres://u:s3cret-canary@db.example.com:5432/app", "s3cret-canary"},
		{"url escaped", "postgres://u:c%40n%3Aary%2Fp%20w%25d@db/app", "c@n:ary/p w%d"},
		{"url lower-case escapes", "postgresql://u:c%40n%3aary%2fx@db/app", "c@n:ary/x"},
		{"url quote and unicode", "postgres://u:" + url.PathEscape(`q"uo\te-ünï`) + "@db/app", `q"uo\te-ünï`},
		{"key value", "host=db user=u password=kv-canary-123 dbname=app", "kv-canary-123"},
		{"key value quoted", `host=db password='sp ace\'s-canary' dbname=app`, `sp ace's-canary`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRedactor(tt.conn, nil)
			r.add(tt.pw) // as pgx's parsed config adds it
			for _, sp := range append(spellings(tt.pw), tt.conn) {
				got := r.clean("before " + sp + " after")
				for _, bad := range spellings(tt.pw) {
					if strings.Contains(got, bad) {
						t.Errorf("clean(%q) = %q: still holds %q", sp, got, bad)
					}
				}
			}
		})
	}
}

func TestRedactorExtraAndControl(t *testing.T) {
	r := newRedactor("postgres://u:pw-canary@db/app", func(s string) string { return strings.ReplaceAll(s, "api-key-canary", "[redacted]") })
	got := r.clean("pw-canary api-key-canary \x1b[31mred\n\tnext\x07")
	if strings.Contains(got, "canary") || strings.ContainsAny(got, "\x1b\x07\n\t") {
		t.Fatalf("clean = %q; want secrets removed and control characters escaped", got)
	}
	if !strings.Contains(got, `\x1b[31mred; next\a`) {
		t.Errorf("clean = %q; want escapes that keep the text readable", got)
	}
}

func TestDBErrorUnwrapsOnlySentinels(t *testing.T) {
	m := &Manager{name: "n", schema: "s", red: newRedactor("postgres://u:pw-canary@db/app", nil)}
	inner := errors.New("driver says pw-canary")
	err := m.dbErr("reading", inner)
	if errors.Is(err, inner) || strings.Contains(err.Error(), "pw-canary") {
		t.Fatalf("dbErr = %v; want the driver's error hidden and the password removed", err)
	}
	if want := `PostgreSQL state "n" (schema s): reading: driver says [redacted]`; err.Error() != want {
		t.Errorf("dbErr = %q; want %q", err, want)
	}
}
