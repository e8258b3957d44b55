package state

import (
	"fmt"
	"slices"
	"time"

	"pushform/message"
)

// Overrides of deny policies: an apply that went ahead although a deny
// policy failed (--override-policy with --override-reason) records which
// policy, why and for which addresses, before it sends anything, so
// history can say who let what through.

// EntryOverride records the deny policies an apply overrode, one item per
// policy: Items[].Address is the policy's name, Items[].Targets the
// addresses the apply sends under the override, and Items[].Content.Body
// the reason (a content, so every journal encoding carries it as it is).
// Nothing is sent.
const EntryOverride EntryType = "override"

// Override is one deny policy an apply overrode.
type Override struct {
	Time   time.Time `json:"time"`
	Policy string    `json:"policy"`
	Reason string    `json:"reason"`
	// Addresses are those the apply sends: the changes the policy failed
	// for, or every change that sends for a policy on the whole plan.
	Addresses []string `json:"addresses"`
}

// OverrideEntry is the journal entry recording overrides at time t.
func OverrideEntry(t time.Time, overrides []Override) Entry {
	e := Entry{Type: EntryOverride, Time: t}
	for _, o := range overrides {
		e.Items = append(e.Items, Item{Address: o.Policy, Targets: o.Addresses, Content: &message.Content{Body: o.Reason}})
	}
	return e
}

// recordOverrides applies an override entry.
func (s *State) recordOverrides(e Entry) error {
	for _, it := range e.Items {
		if it.Address == "" || it.Content == nil {
			return fmt.Errorf("journal: override entry without a policy or a reason")
		}
	}
	s.Overrides = slices.Clip(s.Overrides) // a fork shares the array
	for _, it := range e.Items {
		s.Overrides = append(s.Overrides, Override{Time: e.Time, Policy: it.Address, Reason: it.Content.Body, Addresses: slices.Clone(it.Targets)})
	}
	return nil
}

// OverridesOf returns the overrides that let addr through, oldest first.
func (s *State) OverridesOf(addr string) []Override {
	var out []Override
	for _, o := range s.Overrides {
		if slices.Contains(o.Addresses, addr) {
			out = append(out, o)
		}
	}
	return out
}
