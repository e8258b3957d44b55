package planner

import (
	"bytes"
	"fmt"
	"testing"

	"pushform/config"
	"pushform/state"
	"pushform/state/statefile"
)

// The ledger's cost (issue 21): a state whose ledger holds ten forgotten
// campaigns of a million targets each, against the same state without
// that history. Each run reads the snapshot as plan and apply do
// (statefile.DecodeCompact) and plans; the create runs also fold the
// apply's journal entries and write the final snapshot. Skipped with
// -short.

const ledgerUsers = 1_000_000

// ledgerState returns the encoded state after campaign "live" was
// delivered to every user and, when history, ten other campaigns were
// delivered and then forgotten, to the same users or (distinct) each to
// a million others; and its record count.
func ledgerState(b *testing.B, users []string, history, distinct bool) ([]byte, int) {
	b.Helper()
	st := state.New("test")
	st.Compact = true
	st.Recipients = &state.Snapshot{FetchedAt: now, UserIDs: users}
	if history {
		for i := range 10 {
			to := users
			if distinct {
				to = make([]string, len(users))
				for j := range to {
					to[j] = fmt.Sprintf("c%d-%07d", i, j)
				}
			}
			m := note(fmt.Sprintf("campaign.c%d.notification.n", i), fmt.Sprintf("Sale %d", i), "Everything off", "", to...)
			deliverAll(b, st, m, i*10_000)
			if err := st.ApplyEntry(state.Entry{Type: state.EntryForget, Time: now, Items: []state.Item{{Address: m.Address}}}); err != nil {
				b.Fatal(err)
			}
		}
	}
	deliverAll(b, st, note("notification.live", "Live", "Now", "", users...), 200_000)
	var buf bytes.Buffer
	if err := statefile.Encode(&buf, st); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes(), st.RecordCount()
}

// deliverAll folds into st the entries of an apply delivering m to all
// its targets, 500 a request, batches numbered from batch0.
func deliverAll(b *testing.B, st *state.State, m *config.Message, batch0 int) {
	b.Helper()
	fp := Fingerprint(m.Kind, m.Content)
	ids := m.Targets.IDs
	outs := make([]*state.Target, 500)
	rec := &state.Target{Outcome: state.Delivered, DeviceCount: 1} // apply shares one record among equal outcomes
	for i := range outs {
		outs[i] = rec
	}
	content := m.Content
	for batch, from := batch0, 0; from < len(ids); batch, from = batch+1, from+500 {
		part := ids[from:min(from+500, len(ids))]
		for _, e := range []state.Entry{
			{Type: state.EntryIntent, Batch: int64(batch), Time: now, Items: []state.Item{{Address: m.Address, Kind: m.Kind, TargetKind: m.Targets.Kind, Fingerprint: fp, Content: &content, Targets: part}}},
			{Type: state.EntryOutcome, Batch: int64(batch), Time: now, RequestID: fmt.Sprintf("req-%d", batch), Status: 200,
				Items: []state.Item{{Address: m.Address, Fingerprint: fp, Targets: part, Outcomes: outs[:len(part)]}}},
		} {
			if err := st.ApplyEntry(e); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkLedgerNoOp1M: the no-op plan of the live campaign, read from
// the snapshot, with and without ten forgotten campaigns in the ledger:
// to the same recipients (their ids stored once), or each to a million
// users of its own.
func BenchmarkLedgerNoOp1M(b *testing.B) {
	if testing.Short() {
		b.Skip("eleven million targets; skipped with -short")
	}
	users := benchIDs(ledgerUsers)
	for _, run := range []struct {
		name              string
		history, distinct bool
	}{{"without", false, false}, {"with10x1M", true, false}, {"with10x1Mdistinct", true, true}} {
		data, records := ledgerState(b, users, run.history, run.distinct)
		b.Run(run.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				st, err := statefile.DecodeCompact(bytes.NewReader(data))
				if err != nil {
					b.Fatal(err)
				}
				cfg := cfgOf(note("notification.live", "Live", "Now", "", st.Recipients.UserIDs...))
				p, err := Make(Input{Config: cfg, State: st}, Options{Now: now})
				if err != nil || p.HasChanges() {
					b.Fatalf("plan: %v, %+v", err, p.Summary)
				}
			}
			b.ReportMetric(float64(len(data))/float64(records), "B/record")
		})
	}
}

// BenchmarkLedgerCreate1M: the plan and apply of an eleventh campaign of
// a million users (read the snapshot, plan, fold the journal entries,
// write the final snapshot), with and without the ten forgotten ones.
func BenchmarkLedgerCreate1M(b *testing.B) {
	if testing.Short() {
		b.Skip("twelve million targets; skipped with -short")
	}
	users := benchIDs(ledgerUsers)
	for _, history := range []bool{false, true} {
		data, _ := ledgerState(b, users, history, false)
		b.Run(map[bool]string{false: "without", true: "with10x1M"}[history], func(b *testing.B) {
			b.ReportAllocs()
			var out bytes.Buffer
			for b.Loop() {
				st, err := statefile.DecodeCompact(bytes.NewReader(data))
				if err != nil {
					b.Fatal(err)
				}
				live := note("notification.live", "Live", "Now", "", st.Recipients.UserIDs...)
				next := note("notification.next", "Eleventh", "Sale", "", st.Recipients.UserIDs...)
				p, err := Make(Input{Config: cfgOf(live, next), State: st}, Options{Now: now})
				if err != nil || p.Summary.Requests != 2000 {
					b.Fatalf("plan: %v, %+v", err, p.Summary)
				}
				deliverAll(b, st, next, 300_000)
				out.Reset()
				if err := statefile.Encode(&out, st); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
