package planner

import (
	"fmt"

	"pushform/config"
	"pushform/message"
	"pushform/state"
)

// The service gives no map from users to devices, nor from topics to
// them: content the ledger says reached targets of one kind, planned for
// targets of another (users, devices, topics), may show twice on the
// devices behind both, and no plan can tell which. Such a send is warned
// about and apply refuses it without --allow-resend, as it refuses a
// rename without a moved block. Once an address has sent the content to
// targets of its kind, its later sends (to targets added) are not asked
// about again: the decision was made.

// KindChange is a change that sends content which reached targets of
// another kind before.
type KindChange struct {
	Address    string             `json:"address"`
	TargetKind message.TargetKind `json:"target_kind"`
	// Earlier is the other kind, EarlierAddress an address the content
	// reached it under, and EarlierTargets how many targets of that kind
	// received it (or may have), under any address.
	Earlier        message.TargetKind `json:"earlier_target_kind"`
	EarlierAddress string             `json:"earlier_address"`
	EarlierTargets int                `json:"earlier_targets"`
	// Targets is how many targets the change sends to.
	Targets int `json:"targets"`
	// Edited is set when what reached the other kind is an earlier
	// version of this address's content: devices may show both.
	Edited bool `json:"edited"`
}

// detectKindChanges returns the changes of notifications that send
// content the ledger holds as received by targets of another kind, and
// adds the warning to each. st is the state as moved blocks rename it.
func detectKindChanges(ix *ledgerIndex, st *state.State, changes []*Change) []KindChange {
	if ix == nil {
		return nil
	}
	var out []KindChange
	for _, c := range changes {
		if c.Kind != message.KindNotification || len(c.Send) == 0 {
			continue
		}
		v := visibleOf(c.Kind, c.Content)
		own := st.Messages[c.Address]
		if own != nil && own.TargetKind == c.TargetKind && visibleOf(own.Kind, own.Content) == v {
			continue // this address sent it to its kind before
		}
		found := false
		for _, k := range targetKinds {
			if k == c.TargetKind {
				continue
			}
			n, addr := receivedBy(ix.byVisible[vkey{k, v}], v)
			if n == 0 {
				continue
			}
			kc := KindChange{Address: c.Address, TargetKind: c.TargetKind, Earlier: k, EarlierAddress: addr, EarlierTargets: n, Targets: len(c.Send)}
			out = append(out, kc)
			c.Warnings = append(c.Warnings, kc.warning())
			found = true
		}
		// The address itself (or the one a move renames) sent an earlier
		// version to another kind: the same notification, edited, to
		// devices that may already show it.
		if !found && own != nil && own.Kind == message.KindNotification && own.TargetKind != c.TargetKind {
			n := 0
			for _, t := range own.AllTargets() {
				if received(t) {
					n++
				}
			}
			if n > 0 {
				kc := KindChange{Address: c.Address, TargetKind: c.TargetKind, Earlier: own.TargetKind, EarlierAddress: c.Address,
					EarlierTargets: n, Targets: len(c.Send), Edited: true}
				out = append(out, kc)
				c.Warnings = append(c.Warnings, kc.warning())
			}
		}
	}
	return out
}

// otherKind reports whether the ledger holds m's content for targets of
// another kind than m's (nil: no ledger).
func (ix *ledgerIndex) otherKind(m *config.Message) bool {
	if ix == nil || m.Kind != message.KindNotification {
		return false
	}
	v := visibleOf(m.Kind, m.Content)
	for _, k := range targetKinds {
		if k != m.Targets.Kind && len(ix.byVisible[vkey{k, v}]) > 0 {
			return true
		}
	}
	return false
}

var targetKinds = []message.TargetKind{message.TargetUsers, message.TargetDevices, message.TargetTopics}

// receivedBy counts the targets the sources' records say received (or
// may have) content v, and names the address of the first.
func receivedBy(sources []*ledgerSource, v visible) (n int, addr string) {
	for _, src := range sources {
		for _, t := range src.m.AllTargets() {
			if received(t) && src.vfps[t.Fingerprint] == v {
				if n == 0 {
					addr = src.m.Address
				}
				n++
			}
		}
	}
	return n, addr
}

// warning says what the change risks and what apply does about it.
func (kc KindChange) warning() string {
	return kc.risk() + ". Apply refuses it unless given --allow-resend"
}

// risk says what the change risks.
func (kc KindChange) risk() string {
	if kc.Edited {
		return fmt.Sprintf("an earlier version of this notification reached %s (under %s), and its content, changed, is planned here for %s: devices may show both (the service gives no map from %s to %s, so no plan can tell which)",
			countOf(kc.EarlierTargets, kc.Earlier), kc.EarlierAddress, countOf(kc.Targets, kc.TargetKind), targetNoun(kc.Earlier), targetNoun(kc.TargetKind))
	}
	return fmt.Sprintf("this content reached %s before (under %s), and is planned here for %s: devices may show it twice (the service gives no map from %s to %s, so no plan can tell which)",
		countOf(kc.EarlierTargets, kc.Earlier), kc.EarlierAddress, countOf(kc.Targets, kc.TargetKind), targetNoun(kc.Earlier), targetNoun(kc.TargetKind))
}

// countOf says "1 user" or "20 devices".
func countOf(n int, k message.TargetKind) string {
	noun := targetNoun(k)
	if n == 1 {
		noun = noun[:len(noun)-1]
	}
	return fmt.Sprintf("%d %s", n, noun)
}
