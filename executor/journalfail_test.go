package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"pushform/config"
	"pushform/pushapi"
	"pushform/state"
)

// fullJournal accepts left appends, then fails every one as a full disk
// does, saying which append it was.
type fullJournal struct {
	memJournal
	left, failed int
}

func (j *fullJournal) Append(es ...state.Entry) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.left == 0 {
		j.failed++
		return fmt.Errorf("failed append %d: %w", j.failed, syscall.ENOSPC)
	}
	j.left--
	j.entries = append(j.entries, es...)
	return nil
}

// TestJournalFailureSummary fails the journal at every append of a run of
// four requests (1,600 targets, one of them refused and split, one
// untagged, one tagged) and checks what the run reports against what the
// service did and what the journal holds (issue 16 item 4):
//   - the error is the journal failure, and Result.JournalError says it;
//   - Result.Counts holds every answer that arrived, recorded or not, so
//     the summary says what reached devices;
//   - Result.Unrecorded counts exactly the targets whose answer or
//     not-sent record is missing from the journal: all of them, and only
//     them, read back as unknown (sent, no answer);
//   - no target the service delivered reads back as never sent or failed;
//   - Result.Unrecorded.Entries, folded in, complete the state.
func TestJournalFailureSummary(t *testing.T) {
	msgs := []*config.Message{
		note("notification.a", "", users(500, "a")...),
		note("notification.t", "tag", users(500, "t")...),
		note("notification.c", "", users(400, "c")...),
		bad("notification.bad", "b1"),
		note("notification.d", "", users(199, "d")...),
	}
	for failAt := 0; ; failAt++ {
		st := state.New("test")
		p := plan(t, st, msgs...)
		j := &fullJournal{left: failAt}
		s := &fakeSender{reply: validating("index")}
		var events []Event
		res, err := Apply(context.Background(), p, state.NewRecorder(j, st), s, Options{Parallelism: 2, Sleep: noSleep,
			Events: func(e Event) { events = append(events, e) }})
		if j.failed == 0 {
			if err != nil || res.JournalError != "" || res.Unrecorded != nil {
				t.Fatalf("no failure: err %v, result %+v", err, res)
			}
			if failAt == 0 {
				t.Fatal("the journal never failed")
			}
			break
		}
		name := fmt.Sprintf("journal full after %d appends", failAt)
		if !errors.Is(err, syscall.ENOSPC) || !strings.HasPrefix(err.Error(), "writing the state journal: failed append ") || res.JournalError != err.Error() {
			t.Fatalf("%s: err %v, JournalError %q", name, err, res.JournalError)
		}

		// What the service delivered.
		delivered := map[string]bool{}
		for call, batch := range s.requests {
			if resp, err := validating("index")(call+1, batch); err == nil {
				for i, n := range batch {
					for k, u := range n.UserIDs {
						if resp.Results[i][k].Outcome == pushapi.OutcomeDelivered {
							delivered[u] = true
						}
					}
				}
			}
		}
		if res.Counts.Delivered != len(delivered) {
			t.Errorf("%s: summary says %d delivered, the service delivered %d", name, res.Counts.Delivered, len(delivered))
		}

		// What the journal holds.
		disk := state.New("test")
		for _, e := range j.entries {
			if err := disk.ApplyEntry(e); err != nil {
				t.Fatal(err)
			}
		}
		outcome := map[string]state.Outcome{}
		for _, m := range disk.Messages {
			for id, tg := range m.Targets {
				outcome[id] = tg.Outcome
			}
		}
		var recordedDelivered, unknown int
		for id, o := range outcome {
			switch o {
			case state.Delivered:
				recordedDelivered++
			case state.Unknown:
				unknown++
			}
			if delivered[id] && o != state.Delivered && o != state.Unknown {
				t.Errorf("%s: %s was delivered; the journal says %s", name, id, o)
			}
		}
		u := res.Unrecorded
		if u == nil {
			u = &Unrecorded{}
		}
		if u.Delivered != len(delivered)-recordedDelivered {
			t.Errorf("%s: %d delivered not recorded, want %d", name, u.Delivered, len(delivered)-recordedDelivered)
		}
		if unknown != u.Targets() {
			t.Errorf("%s: %d targets read back unknown, the result counts %d unrecorded (%+v)", name, unknown, u.Targets(), *u)
		}
		if u.NotSent > res.NotStarted || res.Counts.Total()+res.NotStarted-u.NotSent > p.Summary.Targets {
			t.Errorf("%s: counts %+v, not started %d, unrecorded %+v, %d targets planned", name, res.Counts, res.NotStarted, *u, p.Summary.Targets)
		}
		// Folding in what the journal missed (as apply does before a save)
		// leaves nothing unknown, and every delivered target delivered.
		for _, e := range u.Entries {
			if err := disk.ApplyEntry(e); err != nil {
				t.Fatalf("%s: folding %+v: %v", name, e, err)
			}
		}
		for _, m := range disk.Messages {
			for id, tg := range m.Targets {
				if tg.Outcome == state.Unknown || delivered[id] != (tg.Outcome == state.Delivered) {
					t.Errorf("%s: after folding, %s is %s (delivered: %v)", name, id, tg.Outcome, delivered[id])
				}
			}
		}
		// The stream marks the answers it could not record.
		marked := 0
		for _, e := range events {
			if e.Unrecorded {
				marked += e.Counts.Total()
			}
		}
		if marked != u.Total() {
			t.Errorf("%s: events mark %d targets unrecorded, the result %d", name, marked, u.Total())
		}
		if data, _ := json.Marshal(res); u.Targets() > 0 && !strings.Contains(string(data), `"unrecorded":{"delivered":`) {
			t.Errorf("%s: JSON %s", name, data)
		}
	}
}
