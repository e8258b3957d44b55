package config

import (
	"bytes"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"pushform/secret"
)

// Diagnostics end up in terminals and CI logs, so they never show a secret
// someone pasted into a file: source snippets are rendered from a copy of
// the files with secret-looking values masked byte for byte (positions and
// carets stay right), and summaries and details are scrubbed of them.

// secretAttrs are attributes (or block types) whose value is a secret
// whatever it looks like.
var secretAttrs = map[string]bool{"api_key": true, "password": true, "secret": true, "token": true, "conn_str": true}

// looksSecret reports whether a value may be a secret: a key, a URL with
// credentials, a query or a fragment, or a key=value connection string with
// a password.
func looksSecret(v string) bool {
	if strings.Contains(strings.ToLower(v), "password=") {
		return true
	}
	// Per word: a key has no spaces, and prose ("20% off until midnight")
	// is not one long segment.
	for _, w := range strings.Fields(v) {
		if secret.LooksLikeKey(w) {
			return true
		}
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

// redaction is what one Load masked: the values to scrub from diagnostics.
type redaction struct {
	secrets map[string]bool
	known   *secret.Redactor // the secrets the configuration names (the API key)
}

func newRedaction() *redaction { return &redaction{secrets: map[string]bool{}} }

// note records a masked value, raw and as Go would quote it.
func (r *redaction) note(v string) {
	if len(v) < 6 {
		return // too short to scrub from prose without mangling it
	}
	r.secrets[v] = true
	if q := strconv.Quote(v); q[1:len(q)-1] != v {
		r.secrets[q[1:len(q)-1]] = true
	}
}

// file returns f with its bytes redacted; the original is left alone.
func (r *redaction) file(f *hcl.File) *hcl.File {
	if f == nil {
		return nil
	}
	out := &hcl.File{Body: f.Body, Bytes: r.source(f.Bytes)}
	if f.Nav != nil {
		out.Nav = redactedNav{inner: f.Nav, r: r}
	}
	return out
}

// source masks every secret-looking value of an HCL source: string
// literals (whole templates, escapes decoded), the value of an attribute
// such as api_key whatever it looks like, a name in an *_env attribute
// that is not a variable name, and words of comments.
func (r *redaction) source(src []byte) []byte {
	toks, _ := hclsyntax.LexConfig(src, "", hcl.Pos{Line: 1, Column: 1})
	out := bytes.Clone(src)
	mask := func(rng hcl.Range) {
		for i := rng.Start.Byte; i < rng.End.Byte && i < len(out); i++ {
			if out[i] != '\n' && out[i] != '\r' {
				out[i] = '*'
			}
		}
	}
	// A template may hold templates (in interpolations): one frame each.
	type frame struct {
		attr  string            // attribute or block type the value belongs to
		lits  []hclsyntax.Token // literal pieces
		value strings.Builder   // the text, interpolations as "x"
	}
	var stack []*frame
	attr := ""
	flush := func(f *frame) {
		v := f.value.String()
		hide := secretAttrs[f.attr] || looksSecret(v) || (strings.HasSuffix(f.attr, "_env") && !envNameRE.MatchString(v)) || r.known.Contains(v)
		for _, t := range f.lits {
			if lit := unescapeHCL(t); looksSecret(lit) || r.known.Contains(lit) {
				hide = true
			}
		}
		if !hide || len(f.lits) == 0 {
			return
		}
		r.note(v)
		for _, t := range f.lits {
			mask(t.Range)
			r.note(string(t.Bytes))
			r.note(unescapeHCL(t))
		}
	}
	for i, t := range toks {
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch t.Type {
		case hclsyntax.TokenOQuote, hclsyntax.TokenOHeredoc:
			f := &frame{attr: attr}
			if top != nil {
				f.attr = top.attr
			}
			stack = append(stack, f)
		case hclsyntax.TokenCQuote, hclsyntax.TokenCHeredoc:
			if top != nil {
				flush(top)
				stack = stack[:len(stack)-1]
			}
		case hclsyntax.TokenQuotedLit, hclsyntax.TokenStringLit:
			if top != nil {
				top.lits = append(top.lits, t)
				top.value.WriteString(unescapeHCL(t))
			}
		case hclsyntax.TokenTemplateInterp, hclsyntax.TokenTemplateControl:
			if top != nil {
				top.value.WriteString("x")
			}
		case hclsyntax.TokenNewline:
			attr = ""
		case hclsyntax.TokenIdent:
			if secret.LooksLikeKey(string(t.Bytes)) {
				// Masked, it reads as "*" operators next time: it ends
				// the attribute as they do, so masking again changes
				// nothing.
				mask(t.Range)
				r.note(string(t.Bytes))
				attr = ""
				break
			}
			if i+1 < len(toks) && (toks[i+1].Type == hclsyntax.TokenEqual || toks[i+1].Type == hclsyntax.TokenOQuote) {
				attr = string(t.Bytes)
			}
		case hclsyntax.TokenStar:
			attr = ""
		case hclsyntax.TokenInvalid, hclsyntax.TokenBadUTF8:
			r.maskWords(out, t.Range)
			attr = "" // masked words in it read as "*" next time
		case hclsyntax.TokenComment:
			// Its delimiters stay, or masked text would stop being a
			// comment.
			rng, b := t.Range, t.Bytes
			switch {
			case bytes.HasPrefix(b, []byte("#")):
				rng.Start.Byte++
			case bytes.HasPrefix(b, []byte("/*")):
				rng.Start.Byte += 2
				if bytes.HasSuffix(b, []byte("*/")) && len(b) >= 4 {
					rng.End.Byte -= 2
				}
			case bytes.HasPrefix(b, []byte("//")):
				rng.Start.Byte += 2
			}
			r.maskWords(out, rng)
		}
	}
	for _, f := range stack { // unterminated
		flush(f)
	}
	return out
}

// maskWords masks the secret-looking words of a range of out.
func (r *redaction) maskWords(out []byte, rng hcl.Range) {
	end := min(rng.End.Byte, len(out))
	for i := rng.Start.Byte; i < end; {
		if isWordBreak(out[i]) {
			i++
			continue
		}
		j := i
		for j < end && !isWordBreak(out[j]) {
			j++
		}
		if w := string(out[i:j]); looksSecret(w) {
			r.note(w)
			for k := i; k < j; k++ {
				out[k] = '*'
			}
		}
		i = j
	}
}

func isWordBreak(c byte) bool {
	return c <= ' ' || strings.IndexByte("\"'`()[]{}<>,;", c) >= 0
}

// unescapeHCL decodes a literal piece of a template: backslash escapes in
// quoted strings, $${ and %%{ in both kinds. A malformed escape is kept.
func unescapeHCL(t hclsyntax.Token) string {
	s := string(t.Bytes)
	s = strings.NewReplacer("$${", "${", "%%{", "%{").Replace(s)
	if t.Type != hclsyntax.TokenQuotedLit || !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch c := s[i+1]; c {
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case '"', '\\':
			b.WriteByte(c)
		case 'u', 'U':
			n := 4
			if c == 'U' {
				n = 8
			}
			if i+2+n <= len(s) {
				if v, err := strconv.ParseUint(s[i+2:i+2+n], 16, 32); err == nil && utf8.ValidRune(rune(v)) {
					b.WriteRune(rune(v))
					i += n
					break
				}
			}
			b.WriteString(s[i : i+2])
		default:
			b.WriteString(s[i : i+2])
		}
		i++
	}
	return b.String()
}

// urlSecretRE finds the userinfo, query and fragment of URLs in prose.
var urlSecretRE = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://([^/\s"'@]*@)?[^\s"'?#]*([?#][^\s"']*)?`)

// text scrubs prose: the values masked in the sources, runs of 16 or more
// letters and digits mixing both (how generated keys look), and URL
// userinfo, queries and fragments.
func (r *redaction) text(s string) string {
	s = r.known.String(s)
	if len(r.secrets) > 0 {
		vals := make([]string, 0, len(r.secrets))
		for v := range r.secrets {
			vals = append(vals, v)
		}
		sort.Slice(vals, func(i, j int) bool { return len(vals[i]) > len(vals[j]) })
		for _, v := range vals {
			if strings.Contains(s, v) {
				s = strings.ReplaceAll(s, v, strings.Repeat("*", utf8.RuneCountInString(v)))
			}
		}
	}
	s = urlSecretRE.ReplaceAllStringFunc(s, func(u string) string {
		m := urlSecretRE.FindStringSubmatchIndex(u)
		b := []byte(u)
		for _, g := range []int{2, 4} {
			if m[g] >= 0 {
				for k := m[g]; k < m[g+1]; k++ {
					if b[k] != '@' {
						b[k] = '*'
					}
				}
			}
		}
		return string(b)
	})
	return maskKeyRuns(s)
}

// maskKeyRuns masks runs of 16 or more ASCII letters and digits that hold
// both, as secret.LooksLikeKey would flag them.
func maskKeyRuns(s string) string {
	isAlnum := func(c byte) bool { return c < utf8.RuneSelf && (unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c))) }
	var b []byte
	for i := 0; i < len(s); {
		if !isAlnum(s[i]) {
			i++
			continue
		}
		j := i
		letter, digit := false, false
		for j < len(s) && isAlnum(s[j]) {
			letter = letter || unicode.IsLetter(rune(s[j]))
			digit = digit || unicode.IsDigit(rune(s[j]))
			j++
		}
		if j-i >= 16 && letter && digit {
			if b == nil {
				b = []byte(s)
			}
			for k := i; k < j; k++ {
				b[k] = '*'
			}
		}
		i = j
	}
	if b == nil {
		return s
	}
	return string(b)
}

// diags scrubs diagnostics in place: summaries and details, and the
// expression values HCL would print ("with var.k as ...") when one of them
// looks secret.
func (r *redaction) diags(diags hcl.Diagnostics) hcl.Diagnostics {
	for _, d := range diags {
		d.Summary = r.text(d.Summary)
		d.Detail = r.text(d.Detail)
		if d.Expression != nil && d.EvalContext != nil && r.showsSecret(d.Expression, d.EvalContext) {
			d.Expression, d.EvalContext = nil, nil
		}
	}
	return diags
}

// showsSecret reports whether a string value HCL would print for expr is
// secret-looking.
func (r *redaction) showsSecret(expr hcl.Expression, ctx *hcl.EvalContext) bool {
	for _, t := range expr.Variables() {
		v, d := t.TraverseAbs(ctx)
		if d.HasErrors() || !v.IsKnown() || v.IsNull() || v.IsMarked() || v.Type() != cty.String {
			continue
		}
		if s := v.AsString(); looksSecret(s) || r.text(s) != s {
			return true
		}
	}
	return false
}

// redactedNav scrubs the block header HCL prints ("in backend ...").
type redactedNav struct {
	inner interface{}
	r     *redaction
}

func (n redactedNav) ContextString(offset int) string {
	cs, ok := n.inner.(interface{ ContextString(int) string })
	if !ok {
		return ""
	}
	return n.r.text(cs.ContextString(offset))
}

// WriteFileDiagnostics writes diags about files parsed elsewhere (fmt) as
// Loader.WriteDiagnostics writes a configuration's: snippets from copies
// of the files with secret-looking values masked.
func WriteFileDiagnostics(w io.Writer, files map[string]*hcl.File, diags hcl.Diagnostics, width uint, color bool) error {
	r := newRedaction()
	masked := make(map[string]*hcl.File, len(files))
	for name, f := range files {
		masked[name] = r.file(f)
	}
	if err := writeDiagnostics(w, masked, diags, width, color); err != nil {
		return fmt.Errorf("writing diagnostics: %w", err)
	}
	return nil
}
