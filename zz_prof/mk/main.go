package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"pushform/config"
	"pushform/planner"
	"pushform/state"
)

func main() {
	dir := os.Args[1]
	n := 1_000_000
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(`service {
  base_url    = "http://127.0.0.1:1/v1"
  api_key_env = "PUSHFORM_API_KEY"
  environment = "test"
}
data "recipients" "all" {}
notification "announce" {
  user_ids = data.recipients.all.user_ids
  title    = "Launch"
  body     = "It is here"
  tag      = "launch-2026"
}
`), 0o644)
	s := state.New("test")
	t0 := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("u%07d", i)
	}
	s.Recipients = &state.Snapshot{FetchedAt: t0, UserIDs: ids}
	content := planner.StateContent(config.Content{Title: "Launch", Body: "It is here", Tag: "launch-2026"})
	fp := planner.Fingerprint("notification", content)
	m := &state.Message{Address: "notification.announce", Kind: "notification", TargetKind: "user_ids", Fingerprint: fp, Content: content, Targets: map[string]state.Target{}}
	for i, id := range ids {
		m.Targets[id] = state.Target{Outcome: state.Delivered, Fingerprint: fp, DeviceCount: 1, RequestID: fmt.Sprintf("req-%016x", i/500), Time: t0}
	}
	s.Messages[m.Address] = m
	if err := state.NewFile(filepath.Join(dir, "pushform.state")).Persist(s); err != nil {
		panic(err)
	}
}
