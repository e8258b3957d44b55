package jsonstr

import (
	"bytes"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// FuzzAppendQuote: AppendQuote writes jsontext.AppendQuote's bytes for
// every string and byte slice, after what dst held; Plain says whether
// they are the string between quotes.
func FuzzAppendQuote(f *testing.F) {
	for _, s := range []string{"", "u0001", "a b/c<d>&e'", "\x00\b\f\n\r\t\x1f\x20\x7e\x7f", `"\`, "\u2028\u2029",
		"\xff\xfe", "é😀", "\xc3", "caf\xc3\xa9\"", "\ufffd", "\xed\xa0\x80", "\xf4\x90\x80\x80",
		"user-000123", "abcdefgh\"ijklmnop", "abcdefg\x7fhijklmn\x1f", "abcdefghijklmno\\p", "user-000123é-and-more", "abc\x80defghijklm",
		"abcdefgh\\", "abcdefghi\"", "user-00012é", "abcdefghijklmn\x1f", "abcdefghijklmnopqrstuvw\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := jsontext.AppendQuote([]byte("kept"), s)
		for _, got := range [][]byte{AppendQuote([]byte("kept"), s), AppendQuote([]byte("kept"), []byte(s))} {
			if !bytes.Equal(got, want) {
				t.Fatalf("AppendQuote(%q) = %s, jsontext writes %s", s, got, want)
			}
		}
		plain := string(want) == `kept"`+s+`"`
		if Plain(s) != plain || Plain([]byte(s)) != plain {
			t.Fatalf("Plain(%q) = %v, %v for bytes; jsontext quotes it as it is: %v", s, Plain(s), Plain([]byte(s)), plain)
		}
	})
}
