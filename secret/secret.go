// Package secret recognises secrets in text: values that look like API keys,
// the base URL rules that keep a key out of a configuration file (one
// place, so validate and the client refuse the same things with the same
// words), and a Redactor that takes a known secret out of text in any
// escaping.
package secret

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"
	"unicode"
)

// LooksLikeKey guesses whether v is a secret rather than a name: generated
// keys hold a long run of letters and digits (sk_live_4eC39Hq...), while
// variable names and path segments are made of short words
// (PUSHFORM_API_KEY, push-notifications).
//
// A time is not a key: "2026-11-27T08:00:00+01:00" has a long segment
// mixing letters and digits once split at its dashes.
func LooksLikeKey(v string) bool {
	if _, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return false
	}
	for _, seg := range strings.FieldsFunc(v, func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		if len(seg) < 16 {
			continue
		}
		letter := strings.IndexFunc(seg, unicode.IsLetter) >= 0
		digit := strings.IndexFunc(seg, unicode.IsDigit) >= 0
		if letter && digit {
			return true
		}
	}
	return false
}

// CheckBaseURL checks a service base URL and returns it without a trailing
// slash. It refuses credentials, a query, a fragment, a path segment that
// looks like a key, plain http:// to a host that is not loopback, and a path
// that does not end with the version segment /v1. Its errors never quote
// the parts where a key could hide (userinfo, query, fragment, path).
func CheckBaseURL(raw string) (string, error) {
	if raw == "" {
		return "", errors.New("no service base URL")
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Hostname() == "" {
		return "", errors.New(`the service base URL must be an absolute URL such as "https://push.example.com/v1"`)
	}
	if u.User != nil {
		return "", errors.New("the service base URL must not contain credentials: the API key goes in the environment variable that api_key_env names")
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.RawFragment != "" {
		return "", errors.New("the service base URL must not have a query or a fragment (they are where tokens hide): use the address ending in /v1")
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if LooksLikeKey(seg) {
			return "", errors.New("the service base URL has a path segment that looks like a key: the API key goes in the environment variable that api_key_env names")
		}
	}
	host := u.Hostname()
	switch u.Scheme {
	case "https":
	case "http":
		if !IsLoopback(host) {
			return "", fmt.Errorf("the service base URL uses plain http:// to %s, which is not loopback: use https:// (http:// is allowed only for 127.0.0.1, ::1 and localhost)", printableHost(host))
		}
	default:
		return "", errors.New("the service base URL must use https:// (or http:// to a loopback address)")
	}
	if !strings.HasSuffix(strings.TrimRight(u.Path, "/"), "/v1") {
		return "", errors.New("the service base URL must end with the version segment /v1 (spec part 9), such as \"https://push.example.com/v1\"")
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// IsLoopback reports whether host names this machine.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// printableHost quotes a host name only when it is short and plain.
func printableHost(h string) string {
	if len(h) > 253 || LooksLikeKey(h) || strings.IndexFunc(h, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
		return "that host"
	}
	return h
}
