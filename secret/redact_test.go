package secret

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

const canary = "CANARY-7f3a9"

func TestRedactEscapings(t *testing.T) {
	r := NewRedactor(canary)
	cases := []struct{ name, in, want string }{
		{"raw", "bad key CANARY-7f3a9", "bad key [redacted]"},
		{"twice", "CANARY-7f3a9/CANARY-7f3a9", "[redacted]/[redacted]"},
		{"overlapping", "CANARY-7f3aCANARY-7f3a9", "CANARY-7f3a[redacted]"},
		{"json \\u lower", `bad key \u0043ANARY-7f3a9`, "bad key [redacted]"},
		{"json \\u upper hex", `\u0043\u0041\u004E\u0041\u0052\u0059\u002D\u0037\u0046\u0033\u0041\u0039`, "[redacted]"}, // CANARY-7F3A9: letter case does not hide it
		{"json \\u every char", `x \u0043\u0041\u004e\u0041\u0052\u0059\u002d\u0037\u0066\u0033\u0061\u0039 y`, "x [redacted] y"},
		{"json \\u mixed case hex", `\u004e is N; CA\u004eARY\u002D7f3a9`, `\u004e is N; [redacted]`},
		{"json \\/ and \\\\", `CANARY\u002d7f3a\u0039`, "[redacted]"},
		{"url lower", "key=CANARY%2d7f3a9", "key=[redacted]"},
		{"url upper", "key=%43%41%4E%41%52%59%2D%37%66%33%61%39", "key=[redacted]"},
		{"url mixed with raw", "key=C%41NARY%2D7f%33a9&x=1", "key=[redacted]&x=1"},
		{"url mixed with json", `C\u0041NARY%2d7f3a9`, "[redacted]"},
		{"url inside json", `%5Cu0043ANARY-7f3a9`, "[redacted]"},
		{"json inside url", `\u00253ANARY-7f3a9 \u0025` + `43ANARY-7f3a9`, `\u00253ANARY-7f3a9 [redacted]`},
		{"html decimal", "&#67;&#65;NARY-7f3a9", "[redacted]"},
		{"html hex", "&#x43;ANARY&#X2d;7f3a9", "[redacted]"},
		{"\\x", `\x43ANARY-7f3a9`, "[redacted]"},
		{"a prefix is not the key", "CANARY-7f3a", "CANARY-7f3a"},
		{"unrelated escapes kept", `a\u00e9b %41 &amp;`, `a\u00e9b %41 &amp;`},
		{"empty", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := r.String(tc.in); got != tc.want {
				t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if got := string(r.Bytes([]byte(tc.in))); got != tc.want {
				t.Errorf("Bytes(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if got := r.ContainsBytes([]byte(tc.in)); got != (tc.in != tc.want) {
				t.Errorf("ContainsBytes(%q) = %v", tc.in, got)
			}
		})
	}
}

// TestRedactQuickPath covers plain ASCII text, which quick answers alone:
// a secret in any letter case and any encoded form is still found at any
// place, and text without a byte a secret may begin with is passed.
func TestRedactQuickPath(t *testing.T) {
	r := NewRedactor(canary)
	b64 := base64.StdEncoding.EncodeToString([]byte("x" + canary))
	cases := []struct {
		in  string
		hit bool
	}{
		{"u0000001", false},
		{"user-000042", false},
		{"canary-7f3a9", true},
		{"idCaNaRy-7F3A9", true},
		{"CANARY-7f3a9x", true},
		{"CANARY-7f3a", false},
		{"prefix" + b64 + "suffix", true},
		{b64[:len(b64)-6], false},
	}
	for _, tc := range cases {
		if _, sure := quick(r, tc.in); !sure {
			t.Errorf("%q: quick is not sure of plain ASCII", tc.in)
		}
		if got := r.ContainsBytes([]byte(tc.in)); got != tc.hit {
			t.Errorf("ContainsBytes(%q) = %v, want %v", tc.in, got, tc.hit)
		}
		if got := r.String(tc.in) != tc.in; got != tc.hit {
			t.Errorf("String(%q) redacted: %v, want %v", tc.in, got, tc.hit)
		}
	}
}

func TestRedactSplitAcrossFields(t *testing.T) {
	r := NewRedactor(canary)
	body := `{"userId":"u1","message":"bad key CANA","reason":"RY-7f\u0033a9 more"}`
	want := `{"userId":"u1","message":"bad key [redacted]","reason":"[redacted] more"}`
	if got := string(r.Bytes([]byte(body))); got != want {
		t.Errorf("Bytes:\n got %s\nwant %s", got, want)
	}
	parts := []string{"bad key CANA", "RY-", "7f3a9 more", "unrelated"}
	r.Join(parts)
	if want := []string{"bad key [redacted]", "[redacted]", "[redacted] more", "unrelated"}; strings.Join(parts, "|") != strings.Join(want, "|") {
		t.Errorf("Join: %q", parts)
	}
	one := []string{"x CANARY-7f3a9"}
	r.Join(one)
	if one[0] != "x [redacted]" {
		t.Errorf("Join of one: %q", one)
	}
}

func TestRedactShortAndNone(t *testing.T) {
	if got := NewRedactor("abc", "").String("abc abc"); got != "abc abc" {
		t.Errorf("a secret under 4 bytes was redacted: %q", got)
	}
	if got := NewRedactor("abcd").String("xabcdx"); got != "x[redacted]x" {
		t.Errorf("4 bytes: %q", got)
	}
	var nilR *Redactor
	if nilR.String("CANARY-7f3a9") != "CANARY-7f3a9" || nilR.Active() {
		t.Error("a nil redactor redacts")
	}
	two := NewRedactor("pg-password-1", canary)
	if got := two.String("CANARY-7f3a9 pg-password-1"); got != "[redacted] [redacted]" {
		t.Errorf("two secrets: %q", got)
	}
}

func TestRedactError(t *testing.T) {
	r := NewRedactor(canary)
	base := fmt.Errorf("reading: %w: key CANARY-7f3a9", os.ErrDeadlineExceeded)
	err := r.Error(base)
	if strings.Contains(err.Error(), canary) || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("got %v (Is deadline: %v)", err, errors.Is(err, os.ErrDeadlineExceeded))
	}
	if errors.Unwrap(err) != nil {
		t.Error("the redacted error unwraps to the one holding the key")
	}
	plain := errors.New("nothing here")
	if r.Error(plain) != plain {
		t.Error("an error without the key was replaced")
	}
}

// escapers write one byte of a secret in some escaping.
var escapers = []func(c byte) string{
	func(c byte) string { return string(c) },
	func(c byte) string { return fmt.Sprintf(`\u%04x`, c) },
	func(c byte) string { return fmt.Sprintf(`\u%04X`, c) },
	func(c byte) string { return fmt.Sprintf("%%%02x", c) },
	func(c byte) string { return fmt.Sprintf("%%%02X", c) },
	func(c byte) string { return fmt.Sprintf("&#%d;", c) },
	func(c byte) string { return fmt.Sprintf("&#x%x;", c) },
	func(c byte) string { return fmt.Sprintf(`%%5Cu%04x`, c) },  // JSON escape inside a URL escape
	func(c byte) string { return fmt.Sprintf(`\u0025%02X`, c) }, // URL escape inside a JSON escape
}

// decodeAll undoes every escaping the fuzz test uses, independently of the
// redactor, until nothing changes.
var (
	reU    = regexp.MustCompile(`\\u([0-9a-fA-F]{4})`)
	rePct  = regexp.MustCompile(`%([0-9a-fA-F]{2})`)
	reDec  = regexp.MustCompile(`&#([0-9]{1,7});`)
	reHex  = regexp.MustCompile(`&#[xX]([0-9a-fA-F]{1,6});`)
	decode = func(s string) string {
		for range 6 {
			prev := s
			for _, re := range []*regexp.Regexp{reU, rePct, reHex} {
				s = re.ReplaceAllStringFunc(s, func(m string) string {
					h := re.FindStringSubmatch(m)[1]
					v, _ := strconv.ParseUint(h, 16, 32)
					if v > 0x7f {
						return m // the fuzz secrets are ASCII
					}
					return string(rune(v))
				})
			}
			s = reDec.ReplaceAllStringFunc(s, func(m string) string {
				v, _ := strconv.Atoi(reDec.FindStringSubmatch(m)[1])
				if v > 0x7f {
					return m
				}
				return string(rune(v))
			})
			if s == prev {
				return s
			}
		}
		return s
	}
)

// FuzzRedact writes a secret in the text with every byte in a chosen
// escaping, possibly split across two JSON fields, and checks no form of
// it survives redaction.
func FuzzRedact(f *testing.F) {
	f.Add("bad key ", " more", "CANARY-7f3a9", uint64(0), uint8(0))
	f.Add(`{"message":"`, `"}`, "k3y-Secret/9", uint64(0x123456789), uint8(5))
	f.Add("%", "&#", "abcd", uint64(0xffffffff), uint8(2))
	f.Fuzz(func(t *testing.T, prefix, suffix, sec string, choice uint64, splitAt uint8) {
		if len(sec) < MinRedactLength || len(sec) > 64 {
			return
		}
		for i := 0; i < len(sec); i++ {
			if c := sec[i]; c < 0x21 || c > 0x7e || strings.IndexByte(`\%&"#;`, c) >= 0 {
				return // printable ASCII that is not escape syntax itself
			}
		}
		var form strings.Builder
		split := int(splitAt) % len(sec)
		for i := 0; i < len(sec); i++ {
			if i == split && split > 0 {
				form.WriteString(`","x":"`) // the rest in the next JSON field
			}
			form.WriteString(escapers[choice%uint64(len(escapers))](sec[i]))
			choice = choice/uint64(len(escapers)) + uint64(i)*7
		}
		r := NewRedactor(sec)
		text := prefix + form.String() + suffix
		if split > 0 { // fields of a JSON object around the split
			if strings.Contains(prefix+suffix, `"`) {
				return
			}
			text = `{"m":"` + text + `"}`
		}
		for _, out := range []string{string(r.Bytes([]byte(text))), r.String(strings.ReplaceAll(text, `","x":"`, ""))} {
			joined := decode(strings.ReplaceAll(out, `","x":"`, ""))
			if strings.Contains(joined, sec) {
				t.Fatalf("secret %q survives in %q (from %q)", sec, out, text)
			}
		}
		parts := strings.Split(text, `","x":"`)
		r.Join(parts)
		if joined := decode(strings.Join(parts, "")); strings.Contains(joined, sec) {
			t.Fatalf("Join: secret %q survives in %q", sec, parts)
		}
	})
}

func BenchmarkRedact(b *testing.B) {
	r := NewRedactor(canary)
	var body strings.Builder
	for i := range 500 {
		fmt.Fprintf(&body, `{"userId":"user-%06d","status":"failed","message":"device token expired"},`, i)
	}
	for _, tc := range []struct {
		name string
		text string
	}{
		{"message", "device token expired"},
		{"message-with-escapes", `token expired: see https://x.example/a%20b?c=d&e=f \u00e9`},
		{"body-50KiB", body.String()},
		{"hostile-64KiB-percent", strings.Repeat("%", 64<<10)},
		{"hostile-64KiB-escapes", strings.Repeat(`\u0025%5C&#37;`, 64<<10/16)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.text)))
			b.ReportAllocs()
			for b.Loop() {
				r.Bytes([]byte(tc.text))
			}
		})
	}
}

func TestRedactHostileTextIsRedactedWhole(t *testing.T) {
	// Text that would take the matcher too long is not searched to the
	// end: it is redacted as a whole, which is safe.
	r := NewRedactor(canary)
	if got := r.String(strings.Repeat("%", 64<<10)); got != Redacted {
		t.Errorf("got %d bytes starting %q", len(got), got[:min(len(got), 20)])
	}
	// Realistic escaped text is searched in full and left alone.
	html := strings.Repeat(`<p>Caf&eacute; &amp; th&#233; &lt;b&gt; &nbsp;</p>`, 64<<10/48)
	if got := r.String(html); got != html {
		t.Error("an HTML page full of entities was changed")
	}
	url := strings.Repeat(`https%3A%2F%2Fshop.example.com%2Fa%3Fb%3Dc%26d%3De `, 64<<10/50)
	if got := r.String(url + "CANARY%2d7f3a9"); got != url+Redacted {
		t.Error("the key after 64 KiB of URL-encoded text was not found")
	}
}

func TestRedactOtherForms(t *testing.T) {
	const key = "k-test-CANARY-0123456789"
	r := NewRedactor(key)
	b64 := func(enc *base64.Encoding, s string) string { return enc.EncodeToString([]byte(s)) }
	cases := []struct{ name, in string }{
		{"lower case", "you sent " + strings.ToLower(key)},
		{"upper case", "you sent " + strings.ToUpper(key) + "!"},
		{"zero-width spaces", "key k-test\u200b-CAN\u200bARY-0123\u200b456789 end"},
		{"soft hyphens and joiners", "k-test-\u00adCANARY\u2060-0123\ufeff456789"},
		{"tag and Hangul filler", "k-test-CANARY\U000e0041-01234\u3164" + "56789"},
		{"lower case across invisible", "k-test-\u200bcanary-0123456789"},
		{"json-escaped zero-width space", `k-test-\u200bCANARY-0123\u200B456789`},
		{"html zero-width space", "k-test-&#8203;CANARY-&#x200b;0123&ZeroWidthSpace;456789"},
		{"url zero-width space", "k-test-%E2%80%8BCANARY-0123%e2%80%8b456789"},
		{"escaped and zero-width", `k-test-\u0043ANARY` + "\u200b-0123456789"},
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		for pad := 0; pad < 3; pad++ {
			for _, tail := range []string{"", "x", "~~??>>"} {
				in := b64(enc, strings.Repeat("?", pad+3)+key+tail)
				cases = append(cases, struct{ name, in string }{fmt.Sprintf("base64 %d %q", pad, tail), "blob " + in + " end"})
			}
		}
	}
	// In a JSON string whose encoder escapes "/", in a URL query.
	cases = append(cases,
		struct{ name, in string }{"base64 json \\/", strings.ReplaceAll(b64(base64.StdEncoding, "\xff\xff"+key+"\xfe"), "/", `\/`)},
		struct{ name, in string }{"base64 url-escaped", "?t=" + url.QueryEscape(b64(base64.StdEncoding, "\xfb\xff"+key))},
	)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := r.String(tc.in)
			if out == tc.in || !r.Contains(tc.in) || !r.ContainsBytes([]byte(tc.in)) {
				t.Fatalf("not found in %q", tc.in)
			}
			if got := string(r.Bytes([]byte(tc.in))); got != out {
				t.Errorf("Bytes = %q, String = %q", got, out)
			}
			// What is left holds no piece of the key long enough to matter.
			rest := strings.ToLower(strings.Map(func(c rune) rune {
				if Invisible(c) {
					return -1
				}
				return c
			}, out))
			for i := 0; i+10 <= len(key); i++ {
				if strings.Contains(rest, strings.ToLower(key[i:i+10])) {
					t.Errorf("%q left in %q", key[i:i+10], out)
				}
			}
			if strings.Contains(tc.in, " end") && !strings.HasSuffix(out, " end") {
				t.Errorf("the text after the key went too: %q", out)
			}
		})
	}
	// Ordinary text, other base64 and invisible characters alone stay.
	for _, s := range []string{
		"token expired for k-test-CANARY-012345678 (a prefix)",
		b64(base64.StdEncoding, "an unrelated payload of some length"),
		"emoji 👩\u200d💻 and a soft\u00adhyphen",
	} {
		if got := r.String(s); got != s {
			t.Errorf("String(%q) = %q", s, got)
		}
	}
}

func TestInvisible(t *testing.T) {
	for _, c := range []rune{0x00ad, 0x200b, 0x200c, 0x200d, 0x2060, 0xfeff, 0x034f, 0x3164, 0xfe0f, 0xe0041, 0x202e} {
		if !Invisible(c) {
			t.Errorf("%U is not invisible", c)
		}
	}
	for _, c := range []rune{' ', 'a', 0xa0, 0xe9, 0x2013, 0x1f600} {
		if Invisible(c) {
			t.Errorf("%U is invisible", c)
		}
	}
}

// FuzzRedactForms writes a secret with its letters in a chosen case and
// invisible characters between chosen characters, each character raw or
// escaped, and checks nothing of it survives in any case.
func FuzzRedactForms(f *testing.F) {
	f.Add("bad key ", " more", "CANARY-7f3a9", uint64(0x5a5a5a5a), uint64(0x0f0f))
	f.Add(`{"m":"`, `"}`, "k3y-Secret/9", uint64(0x123456789), uint64(0xffff))
	invisible := []string{"\u200b", "\u00ad", "\u2060", "\ufeff", "\u200c", `\u200b`, "&#8203;", "%E2%80%8B"}
	f.Fuzz(func(t *testing.T, prefix, suffix, sec string, cases, gaps uint64) {
		if len(sec) < MinRedactLength || len(sec) > 64 {
			return
		}
		for i := 0; i < len(sec); i++ {
			if c := sec[i]; c < 0x21 || c > 0x7e || strings.IndexByte(`\%&"#;`, c) >= 0 {
				return
			}
		}
		var form strings.Builder
		for i := 0; i < len(sec); i++ {
			c := sec[i]
			if cases>>(i%64)&1 == 1 {
				c = byte(unicode.ToUpper(rune(c)))
			} else {
				c = byte(unicode.ToLower(rune(c)))
			}
			form.WriteString(escapers[(cases>>(i%61))%uint64(len(escapers))](c))
			if i+1 < len(sec) && gaps>>(i%64)&1 == 1 {
				form.WriteString(invisible[(gaps>>((i+3)%61))%uint64(len(invisible))])
			}
		}
		r := NewRedactor(sec)
		text := prefix + form.String() + suffix
		out := r.String(text)
		clean := func(s string) string {
			s = strings.NewReplacer(`\u200b`, "", "&#8203;", "", "%E2%80%8B", "").Replace(decode(s))
			return fold(s)
		}
		if strings.Contains(clean(out), fold(sec)) {
			t.Fatalf("secret %q survives in %q (from %q)", sec, out, text)
		}
	})
}

func TestSetGrows(t *testing.T) {
	var none *Set
	none.Add("ignored-secret")
	if none.String("ignored-secret") != "ignored-secret" || none.Redactor() != nil {
		t.Error("a nil Set redacts")
	}
	s := NewSet("pg-password-canary")
	redact := s.String // handed out before the key is known
	if got := redact("pg-password-canary / k-test-canary-0123456789"); got != "[redacted] / k-test-canary-0123456789" {
		t.Errorf("before Add: %q", got)
	}
	s.Add("k-test-canary-0123456789", "")
	if got := redact("PG-PASSWORD-CANARY / " + base64.StdEncoding.EncodeToString([]byte("k-test-canary-0123456789"))); got != "[redacted] / [redacted]" {
		t.Errorf("after Add: %q", got)
	}
	if err := s.Error(errors.New("key k-test-canary-0123456789")); err.Error() != "key [redacted]" {
		t.Errorf("Error: %v", err)
	}
}
