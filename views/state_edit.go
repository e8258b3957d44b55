package views

import (
	"fmt"
	"io"
	"time"

	"pushform/state"
	"pushform/termtext"
)

// What the commands that edit the state (state rm, mv, prune, push) and
// force-unlock say they did. Nothing they do is sent: each says so.

// StateRemoved writes what state rm removed: each address, then the count
// and the state's serial after.
func StateRemoved(w io.Writer, addrs []string, serial uint64) {
	for _, a := range addrs {
		fmt.Fprintf(w, "Removed %s\n", termtext.Clean(a))
	}
	n := len(addrs)
	fmt.Fprintf(w, "Removed %d address%s from the state (serial %d). Nothing was sent.\n", n, map[bool]string{true: "", false: "es"}[n == 1], serial)
}

// StateMoved writes what state mv moved: each address (Item.Address to
// Item.To), then the count and the state's serial after.
func StateMoved(w io.Writer, items []state.Item, serial uint64) {
	for _, it := range items {
		fmt.Fprintf(w, "Moved %s to %s\n", termtext.Clean(it.Address), termtext.Clean(it.To))
	}
	what := "1 address"
	if len(items) > 1 {
		what = Count(len(items)) + " addresses"
	}
	fmt.Fprintf(w, "Moved %s in the state (serial %d). Nothing was sent.\n", what, serial)
}

// StatePruned writes what state prune dropped from the ledger: dropped
// records older than before, leaving the state at serial.
func StatePruned(w io.Writer, dropped int, before time.Time, serial uint64) {
	at := before.Format(time.RFC3339)
	if dropped == 0 {
		fmt.Fprintf(w, "The ledger holds no record older than %s: nothing was dropped.\n", at)
		return
	}
	fmt.Fprintf(w, "Dropped %s older than %s from the ledger (serial %d). The addresses' last outcomes are kept.\n",
		LedgerRecords(dropped), at, serial)
}

// LedgerRecords says "1 ledger record" or "1,234 ledger records".
func LedgerRecords(n int) string {
	if n == 1 {
		return "1 ledger record"
	}
	return fmt.Sprintf("%s ledger records", Count(n))
}

// StatePush is what state push did, for StatePushed.
type StatePush struct {
	// File is the local state file pushed; Backend names where.
	File, Backend string
	// Same says the backend already held this state: nothing was pushed.
	Same bool
	// Pushed is the state of File; Replaced the backend's before (nil when
	// it held none); Stored what the backend holds now, with Added
	// delivery records kept from Replaced.
	Pushed, Replaced, Stored *state.State
	Added                    int
}

// StatePushed writes what state push stored, and what became of the
// delivery records and the lineage of the state it replaced.
func StatePushed(w io.Writer, p StatePush) {
	if p.Same {
		fmt.Fprintf(w, "%s already holds this state (serial %d); nothing was pushed.\n", p.Backend, p.Replaced.Serial)
		return
	}
	src, cur, out := p.Pushed, p.Replaced, p.Stored
	addrs := Count(len(out.Messages)) + " addresses"
	if len(out.Messages) == 1 {
		addrs = "1 address"
	}
	fmt.Fprintf(w, "Pushed %s to %s: serial %d, lineage %s, %s.\n", p.File, p.Backend, out.Serial, out.Lineage, addrs)
	if cur != nil {
		fmt.Fprintf(w, "Delivery records: %s had %s, %s had %s; %s kept from %s, %s in all (a ledger only grows: see pushform state prune).\n",
			p.File, Count(src.RecordCount()), p.Backend, Count(cur.RecordCount()), Count(p.Added), p.Backend, Count(out.RecordCount()))
	}
	if cur != nil && cur.Lineage != src.Lineage {
		fmt.Fprintf(w, "The backend keeps the lineage of the state it replaced (%s; %s had %s), so plans saved from either are refused as stale.\n", cur.Lineage, p.File, src.Lineage)
	}
}

// ForceUnlocked writes what force-unlock removed: the lock info a run
// left behind, whatever the file or row holds, shown escaped.
func ForceUnlocked(w io.Writer, info state.LockInfo) {
	fmt.Fprint(w, termtext.Lines(fmt.Sprintf("Removed lock %s (held by %s for %s, pid %d, since %s).\n"+
		"The lock itself was already released when that process ended: a lock cannot outlive its process\n"+
		"(or, with PostgreSQL, its connection), so this only cleared the lock info it left behind.\n",
		info.ID, info.Who, info.Operation, info.Pid, info.Created.UTC().Format(time.RFC3339))))
}
