package secret

import (
	"net/url"
	"regexp"
	"strings"
)

var kvPassword = regexp.MustCompile(`(?i)password\s*=\s*('(?:[^'\\]|\\.)*'|[^\s']\S*)`)

// ConnPasswords returns the password of a PostgreSQL connection string
// (a postgres:// URL or a key=value list) in each form it is written
// there and decoded: the one place that takes it apart, for the state
// backend's messages and the configuration's check of its values. A
// string that does not parse still gives what looks like its password.
func ConnPasswords(conn string) []string {
	var out []string
	add := func(s string) {
		if s != "" && !strings.Contains(strings.Join(out, "\x00")+"\x00", "\x00"+s+"\x00") {
			out = append(out, s)
		}
	}
	if u, err := url.Parse(conn); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok {
			add(pw)
		}
	}
	// As written in a URL, escaped however its author chose, even when the
	// URL does not parse.
	if _, rest, ok := strings.Cut(conn, "://"); ok {
		authority := rest
		if i := strings.IndexAny(rest, "/?#"); i >= 0 {
			authority = rest[:i]
		}
		if at := strings.LastIndex(authority, "@"); at >= 0 {
			if _, pw, ok := strings.Cut(authority[:at], ":"); ok {
				add(pw)
				if dec, err := url.PathUnescape(pw); err == nil {
					add(dec)
				}
			}
		}
	}
	for _, m := range kvPassword.FindAllStringSubmatch(conn, -1) {
		v := m[1]
		add(v)
		if strings.HasPrefix(v, "'") {
			v = strings.Trim(v, "'")
			add(v)
			add(strings.NewReplacer(`\'`, `'`, `\\`, `\`).Replace(v))
		}
	}
	return out
}
