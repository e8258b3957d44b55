package sandbox

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzDecodeSendRequest checks the request decoder on any input: it never
// panics, every issue has a path and a message, and what it accepts obeys
// spec 2.1 and part 8 and survives a round trip through encoding/json.
func FuzzDecodeSendRequest(f *testing.F) {
	for _, seed := range []string{
		`[{"userIds":["alice"],"title":"t","body":"b"}]`,
		`[{"deviceIds":["d1","d2"],"badgeCount":0,"tag":"x"}]`,
		`[{"topics":["deals"],"title":"t","body":"b","openToUrl":"https://a.example/x","silentInForeground":true,"badgeCount":3}]`,
		`[{"userIds":["a"],"deviceIds":["b"]}]`,
		`[{"userIds":[1,"",null],"title":2,"badgeCount":"3"}]`,
		`[{"userIds":["\u00e9\ud800"],"title":"a\"b\\c","body":"\n"}]`,
		`{}`, `null`, `[]`, `[1]`, ``, `[{"userIds":`, `[{"x":1}]`,
		`[{"userIds":["a"],"badgeCount":1e400}]`,
		`[{"userIds":["a"],"badgeCount":1.0e1}]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		ns, issues := decodeSendRequest(body)
		syntaxIssue := len(issues) == 1 && strings.HasPrefix(issues[0].Message, "invalid JSON")
		if valid := json.Valid(body); valid == syntaxIssue && len(trimJSONSpace(body)) > 0 {
			t.Fatalf("json.Valid %v, issues %v", valid, issues)
		}
		if len(issues) > 0 {
			if ns != nil {
				t.Fatal("notifications returned with issues")
			}
			for _, is := range issues {
				if is.Path == nil || is.Message == "" {
					t.Fatalf("issue %+v", is)
				}
				if len(is.Path) > 0 {
					if _, ok := is.Path[0].(int); !ok {
						t.Fatalf("path %v does not start with an index", is.Path)
					}
				}
			}
			// The 400 body is valid JSON.
			for _, shape := range []string{IssuesPath, IssuesIndex, IssuesPointer, IssuesMessage} {
				var v any
				if err := json.Unmarshal(appendIssues(nil, issues, shape), &v); err != nil {
					t.Fatalf("issues JSON, shape %s: %v", shape, err)
				}
			}
			return
		}
		if len(ns) == 0 {
			t.Fatal("accepted an empty request")
		}
		users := 0
		type wire struct {
			UserIDs            []string `json:"userIds,omitempty"`
			DeviceIDs          []string `json:"deviceIds,omitempty"`
			Topics             []string `json:"topics,omitempty"`
			Title              *string  `json:"title,omitempty"`
			Body               *string  `json:"body,omitempty"`
			OpenToURL          string   `json:"openToUrl,omitempty"`
			BadgeCount         *int64   `json:"badgeCount,omitempty"`
			SilentInForeground bool     `json:"silentInForeground,omitempty"`
			Tag                *string  `json:"tag,omitempty"`
		}
		var again []wire
		for _, n := range ns {
			if n.kind < targetUsers || n.kind > targetTopics || len(n.ids) == 0 {
				t.Fatalf("targets %v %v", n.kind, n.ids)
			}
			for _, id := range n.ids {
				if id == "" || !utf8.ValidString(id) {
					t.Fatalf("id %q", id)
				}
			}
			if n.kind == targetUsers {
				users += len(n.ids)
			}
			m := n.msg
			if !m.visible && m.badge < 0 {
				t.Fatal("neither visible nor a badge update")
			}
			if m.badge > 1<<31-1 {
				t.Fatalf("badge %d", m.badge)
			}
			if m.openToURL != "" && !strings.Contains(m.openToURL, ":") {
				t.Fatalf("url %q", m.openToURL)
			}
			w := wire{OpenToURL: m.openToURL, SilentInForeground: m.silent}
			switch n.kind {
			case targetUsers:
				w.UserIDs = n.ids
			case targetDevices:
				w.DeviceIDs = n.ids
			default:
				w.Topics = n.ids
			}
			if m.visible {
				w.Title, w.Body = &m.title, &m.body
			}
			if m.badge >= 0 {
				w.BadgeCount = &m.badge
			}
			if m.tag != "" {
				w.Tag = &m.tag
			}
			again = append(again, w)
		}
		if users > MaxUserIDs {
			t.Fatalf("%d userIds accepted", users)
		}
		b, err := json.Marshal(again)
		if err != nil {
			t.Fatal(err)
		}
		ns2, issues2 := decodeSendRequest(b)
		if len(issues2) > 0 || len(ns2) != len(ns) {
			t.Fatalf("re-encoded request %s rejected: %v", b, issues2)
		}
		for i := range ns {
			a, b := ns[i], ns2[i]
			if a.kind != b.kind || strings.Join(a.ids, "\x00") != strings.Join(b.ids, "\x00") || *a.msg != *b.msg {
				t.Fatalf("round trip changed notification %d: %+v %+v", i, *a.msg, *b.msg)
			}
		}
	})
}

// FuzzAppendJSONString checks the encoder writes a string encoding/json
// reads back as the string encoding/json itself writes (escaping may
// differ: jsontext escapes only what JSON requires), and that unquote
// reads any string token back as encoding/json does.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", "<a & b>", "\x00\b\f\n\r\t\x1f\"\\", "\u2028\u2029", "\xff\xfe", "é😀", `\ud800`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var want string
		if err := json.Unmarshal(enc, &want); err != nil {
			t.Fatal(err)
		}
		for _, got := range [][]byte{appendJSONString(nil, s), appendJSONString(nil, []byte(s))} {
			var back string
			if err := json.Unmarshal(got, &back); err != nil || back != want {
				t.Fatalf("appendJSONString(%q) = %s, reads back as %q, %v; want %q", s, got, back, err, want)
			}
		}
		// s itself as the inside of a token: escapes, surrogates, bad bytes.
		tok := []byte(`"` + s + `"`)
		var std string
		stdErr := json.Unmarshal(tok, &std)
		got, ok := unquote(tok)
		if ok != (stdErr == nil) || got != std {
			t.Fatalf("unquote(%q) = %q, %v; encoding/json %q, %v", tok, got, ok, std, stdErr)
		}
	})
}
