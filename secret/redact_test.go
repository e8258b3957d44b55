package secret

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const canary = "CANARY-7f3a9"

func TestRedactEscapings(t *testing.T) {
	r := NewRedactor(canary)
	cases := []struct{ name, in, want string }{
		{"raw", "bad key CANARY-7f3a9", "bad key [redacted]"},
		{"twice", "CANARY-7f3a9/CANARY-7f3a9", "[redacted]/[redacted]"},
		{"overlapping", "CANARY-7f3aCANARY-7f3a9", "CANARY-7f3a[redacted]"},
		{"json \\u lower", `bad key \u0043ANARY-7f3a9`, "bad key [redacted]"},
		{"json \\u upper hex", `\u0043\u0041\u004E\u0041\u0052\u0059\u002D\u0037\u0046\u0033\u0041\u0039`, `\u0043\u0041\u004E\u0041\u0052\u0059\u002D\u0037\u0046\u0033\u0041\u0039`}, // CANARY-7F3A9: another key, case counts
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
