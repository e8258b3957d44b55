package views

import "pushform/executor"

// eventLine is an event as apply --json writes it: every field of
// executor.Event, by encoding/json, with the delay as text. A field added
// to the event is written with no change here (TestApplyJSONEveryEventField);
// testdata/apply-events.jsonl pins the keys each line has.
type eventLine struct {
	executor.Event
	Delay string `json:"delay,omitempty"` // shadows Event.Delay, so encoding/json writes it last
}
