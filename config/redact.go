package config

import (
	"net/url"
	"strings"

	"pushform/secret"
)

// looksSecret reports whether a value may be a secret: a key, a URL with
// credentials, a query or a fragment, or a key=value connection string with
// a password.
func looksSecret(v string) bool {
	if secret.LooksLikeKey(v) || strings.Contains(strings.ToLower(v), "password=") {
		return true
	}
	if !strings.Contains(v, "://") {
		return false
	}
	u, err := url.Parse(strings.TrimSpace(v))
	if err != nil {
		return true // unparseable: do not guess
	}
	return u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != ""
}
