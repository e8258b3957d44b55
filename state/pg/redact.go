package pg

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/jackc/pgx/v5"
)

// redacted replaces a secret in messages.
const redacted = "[redacted]"

// redactor removes the connection password, in every spelling it may take
// in a message, and whatever the caller's Redact removes.
type redactor struct {
	secrets []string // longest first, so a spelling is not cut by a shorter one
	extra   func(string) string
}

var kvPassword = regexp.MustCompile(`(?i)password\s*=\s*('(?:[^'\\]|\\.)*'|[^\s']\S*)`)

func newRedactor(connString string, extra func(string) string) redactor {
	r := redactor{extra: extra}
	if u, err := url.Parse(connString); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok {
			r.add(pw)
		}
	}
	// The password as written in a URL, escaped however its author chose.
	if _, rest, ok := strings.Cut(connString, "://"); ok {
		authority := rest
		if i := strings.IndexAny(rest, "/?#"); i >= 0 {
			authority = rest[:i]
		}
		if at := strings.LastIndex(authority, "@"); at >= 0 {
			if _, pw, ok := strings.Cut(authority[:at], ":"); ok {
				r.add(pw)
				if dec, err := url.PathUnescape(pw); err == nil {
					r.add(dec)
				}
			}
		}
	}
	for _, m := range kvPassword.FindAllStringSubmatch(connString, -1) {
		v := m[1]
		r.add(v)
		if strings.HasPrefix(v, "'") {
			v = strings.Trim(v, "'")
			r.add(v)
			r.add(strings.NewReplacer(`\'`, `'`, `\\`, `\`).Replace(v))
		}
	}
	return r
}

// add adds a password and the spellings it takes once escaped.
func (r *redactor) add(pw string) {
	if pw == "" {
		return
	}
	q := strconv.Quote(pw)
	for _, s := range []string{pw, url.QueryEscape(pw), url.PathEscape(pw), url.UserPassword("", pw).String()[1:], q[1 : len(q)-1], strings.ToLower(url.QueryEscape(pw))} {
		if s != "" && !contains(r.secrets, s) {
			r.secrets = append(r.secrets, s)
		}
	}
	sort.Slice(r.secrets, func(i, j int) bool { return len(r.secrets[i]) > len(r.secrets[j]) })
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// clean returns s with secrets removed and control characters escaped: the
// text comes from a server and a driver, and ends on a terminal.
func (r redactor) clean(s string) string {
	for _, sec := range r.secrets {
		s = strings.ReplaceAll(s, sec, redacted)
	}
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
