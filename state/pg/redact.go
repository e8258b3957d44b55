package pg

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/jackc/pgx/v5"

	"pushform/secret"
)

// redactor removes the connection string and its password, in every form
// secret.Redactor finds (escaped, in any case, base64), and whatever the
// caller's Redact removes (the API key).
type redactor struct {
	secrets []string
	red     *secret.Redactor
	extra   func(string) string
}

func newRedactor(connString string, extra func(string) string) redactor {
	r := redactor{extra: extra}
	r.add(append([]string{connString}, secret.ConnPasswords(connString)...)...)
	return r
}

// add adds passwords and the spellings they take once escaped in ways
// the Redactor does not undo (userinfo escaping, Go quoting), and builds
// the Redactor once for them all.
func (r *redactor) add(pws ...string) {
	added := false
	for _, pw := range pws {
		if pw == "" {
			continue
		}
		added = true
		q := strconv.Quote(pw)
		for _, s := range []string{pw, url.QueryEscape(pw), url.PathEscape(pw), url.UserPassword("", pw).String()[1:], q[1 : len(q)-1]} {
			if s != "" && !slices.Contains(r.secrets, s) {
				r.secrets = append(r.secrets, s)
			}
		}
	}
	if added {
		r.red = secret.NewRedactor(r.secrets...)
	}
}

// clean returns s with secrets removed and control characters escaped: the
// text comes from a server and a driver, and ends on a terminal.
func (r redactor) clean(s string) string {
	s = r.red.String(s)
	if r.extra != nil {
		s = r.extra(s)
	}
	// pgx puts one line per host tried under its summary.
	s = strings.ReplaceAll(s, ":\n\t", ": ")
	s = strings.ReplaceAll(s, "\n\t", "; ")
	var b strings.Builder
	for _, c := range s {
		switch {
		case !unicode.IsPrint(c) && c != ' ':
			q := strconv.QuoteRune(c)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

var plainWords = regexp.MustCompile(`^[A-Za-z][A-Za-z ,()-]{0,150}$`)

// parseDetail is what pgx says is wrong with a connection string, without
// the string itself: pgx quotes it (password masked) before a colon, and a
// URL parser's error may quote pieces of it, so only a detail made of plain
// words is kept.
func (r redactor) parseDetail(err error) string {
	msg := err.Error()
	i := strings.LastIndex(msg, "`: ")
	if i < 0 {
		return ""
	}
	detail := msg[i+3:]
	if !plainWords.MatchString(detail) {
		return "" // it quotes a piece of the string, which may be of the password
	}
	return " (" + r.clean(detail) + ")"
}

// quote quotes a name for a message.
func (r redactor) quote(s string) string {
	return strconv.Quote(r.clean(s))
}

// dbError is an error of the driver or the server, as safe to print: its
// message is cleaned, and it unwraps only to the context errors, never to
// the driver's error and the text inside it.
type dbError struct {
	msg  string
	errs []error
}

func (e *dbError) Error() string   { return e.msg }
func (e *dbError) Unwrap() []error { return e.errs }

// dbErr wraps an error of the driver: "PostgreSQL state ...: op: message".
func (m *Manager) dbErr(op string, err error) error {
	e := &dbError{msg: fmt.Sprintf("%s: %s: %s", m, op, m.red.clean(err.Error()))}
	if m.conn != nil && m.conn.IsClosed() {
		e.msg += " (the connection to the server is lost, and with it this run's lock on the state)"
	}
	for _, sentinel := range []error{context.Canceled, context.DeadlineExceeded, pgx.ErrNoRows} {
		if errors.Is(err, sentinel) {
			e.errs = append(e.errs, sentinel)
		}
	}
	return e
}
