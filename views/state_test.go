package views

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"pushform/message"
	"pushform/state"
)

func sampleState() *state.State {
	st := state.New("test")
	st.Lineage, st.Serial = "lin-1", 4
	one := 1
	st.Messages["badge.b"] = &state.Message{Address: "badge.b", Kind: "badge", TargetKind: "device_ids", Fingerprint: "fp-b",
		Content: message.Content{BadgeCount: &one}, Targets: map[string]*state.Target{"d1": {Outcome: state.Delivered, DeviceCount: 1}}}
	n := &state.Message{Address: "notification.n", Kind: "notification", TargetKind: "user_ids", Fingerprint: "fp-n",
		Content: message.Content{Title: "T", Body: "B", SilentInForeground: true}, Targets: map[string]*state.Target{}}
	for i := range 1500 {
		o := state.Delivered
		if i%500 == 0 {
			o = state.Failed
		}
		n.Targets[fmt.Sprintf("u%04d", i)] = &state.Target{Outcome: o, DeviceCount: 1200, Message: "nope"}
	}
	st.Messages[n.Address] = n
	return st
}

func TestStateHuman(t *testing.T) {
	st := sampleState()
	var b bytes.Buffer
	if err := NewStateHuman(&b, 0).List(st); err != nil {
		t.Fatal(err)
	}
	want := "badge.b         1 delivered\nnotification.n  1,497 delivered, 3 failed\n"
	if b.String() != want {
		t.Errorf("list:\n%s\nwant:\n%s", b.String(), want)
	}
	tests := []struct {
		limit     int
		lines     int
		want, not []string
	}{
		{2, 2, []string{"silent_in_foreground = true", "Targets: 1,500 (1,497 delivered, 3 failed)", "Showing the first 2;", "... and 1,498 more", `u0000  failed     "nope"`}, nil},
		{0, 1500, []string{"u0001  delivered  1,200 devices"}, []string{"Showing", "more"}},
	}
	for _, tt := range tests {
		b.Reset()
		if err := NewStateHuman(&b, tt.limit).Show(st.Messages["notification.n"]); err != nil {
			t.Fatal(err)
		}
		got := b.String()
		if n := strings.Count(got, "\n  u"); n != tt.lines {
			t.Errorf("limit %d: %d target lines, want %d", tt.limit, n, tt.lines)
		}
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("limit %d: output lacks %q:\n%.600s", tt.limit, w, got)
			}
		}
		for _, w := range tt.not {
			if strings.Contains(got, w) {
				t.Errorf("limit %d: output has %q", tt.limit, w)
			}
		}
	}
}

func TestStateJSON(t *testing.T) {
	st := sampleState()
	var b bytes.Buffer
	if err := NewStateJSON(&b, true).List(st); err != nil {
		t.Fatal(err)
	}
	var list jsonStateList
	if err := json.Unmarshal(b.Bytes(), &list); err != nil {
		t.Fatal(err)
	}
	if list.FormatVersion != "1" || list.Serial != 4 || list.Lineage != "lin-1" || len(list.Addresses) != 2 ||
		list.Addresses[1].Address != "notification.n" || list.Addresses[1].Targets != 1500 ||
		list.Addresses[1].Outcomes[state.Failed] != 3 || list.Addresses[1].Outcomes[state.Delivered] != 1497 {
		t.Errorf("list: %+v", list)
	}
	b.Reset()
	if err := NewStateJSON(&b, true).List(nil); err != nil || !strings.Contains(b.String(), `"addresses": []`) {
		t.Errorf("list of no state: %v %s", err, b.String())
	}
	b.Reset()
	if err := NewStateJSON(&b, true).Show(st.Messages["badge.b"]); err != nil {
		t.Fatal(err)
	}
	var msg state.Message
	if err := json.Unmarshal(b.Bytes(), &msg); err != nil || msg.Fingerprint != "fp-b" || *msg.Content.BadgeCount != 1 || msg.Targets["d1"].DeviceCount != 1 {
		t.Errorf("show: %v %+v", err, msg)
	}
}
