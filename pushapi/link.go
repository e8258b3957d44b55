package pushapi

import (
	"errors"
	"fmt"
	"strings"
)

// link is one link of a Link header (RFC 8288): its target as written and
// its relation types, lower case.
type link struct {
	target string
	rels   []string
}

// maxLinks bounds the links read from one answer's Link headers.
const maxLinks = 64

// parseLinks parses the values of the Link header fields of an answer
// (RFC 8288 section 3): comma-separated links "<URI-Reference>" each
// followed by parameters "; name=value" (a token or a quoted string, or
// no value). Only rel is kept; rel="a b" holds two relation types.
func parseLinks(values []string) ([]link, error) {
	var out []link
	for _, v := range values {
		p := linkParser{s: v}
		for {
			p.space()
			if p.done() {
				break
			}
			if p.s[p.i] == ',' { // an empty element: allowed by the list rule
				p.i++
				continue
			}
			l, err := p.link()
			if err != nil {
				return nil, err
			}
			if len(out) == maxLinks {
				return nil, fmt.Errorf("more than %d links", maxLinks)
			}
			out = append(out, l)
			p.space()
			if p.done() {
				break
			}
			if p.s[p.i] != ',' {
				return nil, fmt.Errorf("at byte %d: want \",\" between links", p.i)
			}
			p.i++
		}
	}
	return out, nil
}

// nextLink returns the target of the first link with relation type next,
// "" when there is none.
func nextLink(values []string) (string, error) {
	links, err := parseLinks(values)
	if err != nil {
		return "", err
	}
	for _, l := range links {
		for _, r := range l.rels {
			if r == "next" {
				if l.target == "" {
					return "", errors.New(`the rel="next" link is empty`)
				}
				return l.target, nil
			}
		}
	}
	return "", nil
}

type linkParser struct {
	s string
	i int
}

func (p *linkParser) done() bool { return p.i >= len(p.s) }

// space skips optional white space (OWS).
func (p *linkParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *linkParser) link() (link, error) {
	var l link
	if p.s[p.i] != '<' {
		return l, fmt.Errorf("at byte %d: want \"<\" to start a link", p.i)
	}
	end := strings.IndexByte(p.s[p.i+1:], '>')
	if end < 0 {
		return l, fmt.Errorf("at byte %d: the link target has no closing \">\"", p.i)
	}
	l.target = strings.TrimSpace(p.s[p.i+1 : p.i+1+end])
	if len(l.target) > MaxCursorBytes {
		return l, fmt.Errorf("a link target longer than %d bytes", MaxCursorBytes)
	}
	p.i += end + 2
	relSeen := false
	for {
		p.space()
		if p.done() || p.s[p.i] == ',' {
			return l, nil
		}
		if p.s[p.i] != ';' {
			return l, fmt.Errorf("at byte %d: want \";\" before a link parameter", p.i)
		}
		p.i++
		p.space()
		name := p.token()
		if name == "" {
			return l, fmt.Errorf("at byte %d: want a parameter name", p.i)
		}
		p.space()
		var value string
		if !p.done() && p.s[p.i] == '=' {
			p.i++
			p.space()
			var err error
			if value, err = p.value(); err != nil {
				return l, err
			}
		}
		// Only the first rel counts (RFC 8288 section 3.3).
		if strings.EqualFold(name, "rel") && !relSeen {
			relSeen = true
			for _, r := range strings.Fields(value) {
				l.rels = append(l.rels, strings.ToLower(r))
			}
		}
	}
}

// token reads a token (RFC 9110 tchar); "" when there is none.
func (p *linkParser) token() string {
	start := p.i
	for p.i < len(p.s) && isTchar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

// value reads a token or a quoted string.
func (p *linkParser) value() (string, error) {
	if p.done() || p.s[p.i] != '"' {
		v := p.token()
		if v == "" {
			return "", fmt.Errorf("at byte %d: want a parameter value", p.i)
		}
		return v, nil
	}
	var b strings.Builder
	for p.i++; p.i < len(p.s); p.i++ {
		switch c := p.s[p.i]; c {
		case '"':
			p.i++
			return b.String(), nil
		case '\\':
			p.i++
			if p.i == len(p.s) {
				return "", errors.New("the header ends inside a quoted string")
			}
			b.WriteByte(p.s[p.i])
		default:
			b.WriteByte(c)
		}
	}
	return "", errors.New("the header ends inside a quoted string")
}

func isTchar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}
