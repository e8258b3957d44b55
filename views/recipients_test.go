package views

import (
	"bytes"
	"testing"
)

func TestRecipientsHuman(t *testing.T) {
	tests := []struct {
		ids            []string
		stdout, stderr string
	}{
		{nil, "", "0 users can receive a push right now.\n"},
		{[]string{"u1"}, "u1\n", "1 user can receive a push right now.\n"},
		// Ids come from the service: a terminal escape is shown, not run.
		{[]string{"u1", "evil\x1b[2J"}, "u1\nevil\\x1b[2J\n", "2 users can receive a push right now.\n"},
	}
	for _, tt := range tests {
		var out, errOut bytes.Buffer
		if err := NewRecipients(Human, &View{Stdout: &out, Stderr: &errOut}).Recipients(tt.ids); err != nil {
			t.Fatal(err)
		}
		if out.String() != tt.stdout || errOut.String() != tt.stderr {
			t.Errorf("Recipients(%q): stdout %q stderr %q, want %q and %q", tt.ids, out.String(), errOut.String(), tt.stdout, tt.stderr)
		}
	}
}

func TestRecipientsJSON(t *testing.T) {
	tests := []struct {
		ids    []string
		indent bool
		want   string
	}{
		{nil, false, `{"format_version":"1","count":0,"user_ids":[]}` + "\n"},
		{[]string{"a<b", "evil\x1b"}, false, `{"format_version":"1","count":2,"user_ids":["a<b","evil\u001b"]}` + "\n"},
		{[]string{"u1"}, true, "{\n  \"format_version\": \"1\",\n  \"count\": 1,\n  \"user_ids\": [\n    \"u1\"\n  ]\n}\n"},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		if err := NewRecipients(JSON, &View{Stdout: &out, Indent: tt.indent}).Recipients(tt.ids); err != nil {
			t.Fatal(err)
		}
		if out.String() != tt.want {
			t.Errorf("Recipients(%q) = %q, want %q", tt.ids, out.String(), tt.want)
		}
	}
}
