package statefile

import (
	"bytes"
	"testing"
	"time"

	"pushform/message"
	"pushform/state"
)

// TestTextsRoundTrip: what personalised notifications sent each target
// survives the journal and the snapshot, with its template; a snapshot
// whose texts were never read is written back byte for byte, and a later
// text of one target wins.
func TestTextsRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	tmpl := message.Content{Title: "Hi ${user.first_name}", Body: "Your order", Tag: "o-${user.id}", Template: "user\ntranslation \"fr\" { title = \"Salut ${user.first_name}\" }"}
	ann := message.Text{Title: "Salut Ann", Body: "Your order", Tag: "o-u1", Locale: "fr"}
	bob := message.Text{Title: "Hi Bob", Body: "Your order", Tag: "o-u2"}
	intent := func(ids []string, tx message.Text) state.Entry {
		return state.Entry{Type: state.EntryIntent, Time: at, Items: []state.Item{{Address: "notification.n", Kind: message.KindNotification,
			TargetKind: message.TargetUsers, Fingerprint: "fpT", Content: &tmpl, Targets: ids, Texts: []message.Text{tx}}}}
	}
	entries := []state.Entry{intent([]string{"u1"}, ann), intent([]string{"u2", "u3"}, bob), intent([]string{"u3"}, ann)}
	for _, compact := range []bool{false, true} {
		s := state.New("test")
		s.Compact = compact
		for _, e := range entries {
			back, err := DecodeEntry(AppendEntry(nil, e))
			if err != nil {
				t.Fatal(err)
			}
			if d := diffEntry(e, back); d != "" {
				t.Fatalf("entry: %s", d)
			}
			if err := s.ApplyEntry(back); err != nil {
				t.Fatal(err)
			}
		}
		var buf bytes.Buffer
		if err := Encode(&buf, s); err != nil {
			t.Fatal(err)
		}
		decode := Decode
		if compact {
			decode = DecodeCompact
		}
		got, err := decode(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if _, raw := got.RawTexts(); !raw {
			t.Error("texts decoded before anything read them")
		}
		var again bytes.Buffer
		if err := Encode(&again, got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), again.Bytes()) {
			t.Error("a snapshot whose texts were not read is not written back as it was")
		}
		if c := got.Messages["notification.n"].Content; c != tmpl {
			t.Errorf("content %+v, want the template %+v", c, tmpl)
		}
		for id, want := range map[string]message.Text{"u1": ann, "u2": bob, "u3": ann} {
			if tx, ok := got.TextOf("fpT", message.TargetUsers, id); !ok || tx != want {
				t.Errorf("compact %v: text of %s = %+v, %v; want %+v", compact, id, tx, ok, want)
			}
		}
		if _, ok := got.TextOf("fpT", message.TargetDevices, "u1"); ok {
			t.Error("a text of another target kind")
		}
	}
}
