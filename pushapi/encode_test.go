package pushapi

import (
	"encoding/json"
	"reflect"
	"testing"
)

// sameJSON fails t unless got and want (from encoding/json) are valid JSON
// of the same value: the same fields, omitted alike, and the same strings
// (escaping may differ: jsontext escapes only what JSON requires).
func sameJSON(t *testing.T, got, want []byte) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("appendBatch wrote invalid JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("appendBatch:\n got %s\nwant %s", got, want)
	}
}

func TestAppendBatchMatchesEncodingJSON(t *testing.T) {
	cases := map[string][]Notification{
		"users": {{UserIDs: []string{"a", "b"}, Title: "T", Body: "B", Tag: "x"}},
		"badge": {{DeviceIDs: []string{"d"}, BadgeCount: intp(0)}},
		"all fields": {{Topics: []string{"deals", "news"}, Title: "Sale <50%> & more", Body: "line\nbreak\t\"q\" \\ \x01\x7f",
			OpenToURL: "https://x.example/a?b=c&d=e", BadgeCount: intp(-3), SilentInForeground: true, Tag: "t\u2028\u2029"}},
		"unicode and invalid utf8": {{UserIDs: []string{"ü", "日本", "\xff\xfe", "😀"}, Title: "\b\f", Body: "\x00"}},
		"mixed": {
			{UserIDs: []string{"u1"}, Title: "a", Body: "b"},
			{DeviceIDs: []string{"d1"}, BadgeCount: intp(7)},
			{},
		},
	}
	for name, batch := range cases {
		t.Run(name, func(t *testing.T) {
			want, err := json.Marshal(batch)
			if err != nil {
				t.Fatal(err)
			}
			sameJSON(t, appendBatch(nil, batch), want)
		})
	}
}

func FuzzEncodeNotification(f *testing.F) {
	f.Add("u", "title", "body", "https://x", "tag", 3, true)
	f.Add("\xff<", "\u2028", "\x00\"\\", "", "", -1, false)
	f.Fuzz(func(t *testing.T, id, title, body, url, tag string, badge int, silent bool) {
		batch := []Notification{{UserIDs: []string{id, title}, Title: title, Body: body, OpenToURL: url, Tag: tag,
			BadgeCount: &badge, SilentInForeground: silent}, {Topics: []string{tag}}}
		want, err := json.Marshal(batch)
		if err != nil {
			t.Fatal(err)
		}
		sameJSON(t, appendBatch(nil, batch), want)
	})
}
