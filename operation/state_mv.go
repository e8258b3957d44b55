package operation

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"pushform/backend"
	"pushform/message"
	"pushform/planner"
	"pushform/state"
)

// MoveResult is what StateMove moved.
type MoveResult struct {
	// Items are the moves, each from Address to To, by address.
	Items []state.Item
	// Serial is the state's serial after.
	Serial uint64
}

// StateMove is state mv FROM TO: what a moved block does, without one. It
// renames addresses in the state under the lock; nothing is sent. The
// result is set once the state is saved, even when releasing the lock
// then failed.
func StateMove(ctx context.Context, o Options, from, to string) (*MoveResult, error) {
	be, err := o.openState(ctx)
	if err != nil {
		return nil, err
	}
	var res *MoveResult
	err = o.locked(ctx, nil, be, false, func(sess *backend.Session) error {
		var err error
		res, err = o.move(sess, from, to)
		return err
	})
	return res, err
}

func (o *Options) move(sess *backend.Session, from, to string) (*MoveResult, error) {
	s := sess.State
	if s == nil {
		return nil, fmt.Errorf("no state at %s", sess.Backend)
	}
	items, err := planMove(s, from, to)
	if err != nil {
		return nil, fmt.Errorf("%w; nothing was moved", err)
	}
	e := state.Entry{Type: state.EntryMove, Time: o.clock()().UTC(), Items: items}
	if err := s.ApplyEntry(e); err != nil {
		return nil, err
	}
	if err := sess.Persist(); err != nil {
		return nil, err
	}
	return &MoveResult{Items: items, Serial: s.Serial}, nil
}

// planMove works out the moves of state mv FROM TO: FROM recorded as
// given, or, when neither has an instance key, every recorded instance of
// the block FROM (notification.a["k"] to notification.b["k"]), as a moved
// block moves them, with their variants and holdout. It refuses an
// address not recorded, a new address already recorded or not an address
// of a notification or badge, and a move across kinds.
func planMove(s *state.State, from, to string) ([]state.Item, error) {
	fromAddr, err := parseAddress(from)
	if err != nil {
		return nil, fmt.Errorf("FROM: %w", err)
	}
	toAddr, err := parseAddress(to)
	if err != nil {
		return nil, fmt.Errorf("TO: %w", err)
	}
	if fromAddr.String() == toAddr.String() {
		return nil, fmt.Errorf("%s and %s are the same address", from, to)
	}
	var items []state.Item
	if s.Messages[fromAddr.String()] != nil {
		items = []state.Item{{Address: fromAddr.String(), To: toAddr.String()}}
	} else if fromAddr.key == "" && toAddr.key == "" {
		for addr := range s.Messages {
			if rest, ok := strings.CutPrefix(addr, fromAddr.block+"["); ok {
				items = append(items, state.Item{Address: addr, To: toAddr.block + "[" + rest})
			}
		}
	}
	// The variants and the holdout of a notification move with it.
	for addr := range s.Messages {
		base, ok := planner.NotificationOf(addr)
		switch {
		case !ok:
		case base == fromAddr.String():
			items = append(items, state.Item{Address: addr, To: toAddr.String() + addr[len(base):]})
		case fromAddr.key == "" && toAddr.key == "" && strings.HasPrefix(base, fromAddr.block+"["):
			items = append(items, state.Item{Address: addr, To: toAddr.block + addr[len(fromAddr.block):]})
		}
	}
	sort.Slice(items, func(i, j int) bool { return items[i].Address < items[j].Address })
	if len(items) == 0 {
		return nil, fmt.Errorf("no address %s in the state; 'pushform state list' lists them", from)
	}
	for _, it := range items {
		if k := s.Messages[it.Address].Kind; k != "" && k != toAddr.kind {
			return nil, fmt.Errorf("%s is a %s and %s names a %s: a notification moves to a notification, a badge to a badge", it.Address, k, it.To, toAddr.kind)
		}
		if s.Messages[it.To] != nil {
			return nil, fmt.Errorf("%s already has state: a move cannot merge two addresses (remove one first with 'pushform state rm %s')", it.To, it.To)
		}
	}
	return items, nil
}

// address is a message address: block and optional instance key.
type address struct {
	block string // notification.a, campaign.c.badge.b
	kind  message.Kind
	key   string // `["k"]`, or ""
}

func (a address) String() string { return a.block + a.key }

// parseAddress reads a notification or badge address as plan shows it:
// notification.welcome, campaign.onboarding.notification.welcome,
// notification.order["A-1"].
func parseAddress(s string) (address, error) {
	bad := fmt.Errorf("%s is not the address of a notification or badge, such as notification.welcome, campaign.onboarding.notification.welcome or notification.order[\"A-1\"]", strconv.Quote(s))
	t, diags := hclsyntax.ParseTraversalAbs([]byte(s), "", hcl.InitialPos)
	if diags.HasErrors() {
		return address{}, bad
	}
	var names []string
	key := ""
	for i, step := range t {
		switch st := step.(type) {
		case hcl.TraverseRoot:
			names = append(names, st.Name)
		case hcl.TraverseAttr:
			names = append(names, st.Name)
		case hcl.TraverseIndex:
			if i != len(t)-1 || st.Key.IsNull() || !st.Key.IsKnown() || st.Key.Type() != cty.String {
				return address{}, bad
			}
			key = "[" + strconv.Quote(st.Key.AsString()) + "]"
		default:
			return address{}, bad
		}
	}
	switch {
	case len(names) == 2 && (names[0] == "notification" || names[0] == "badge"):
		return address{block: strings.Join(names, "."), kind: message.Kind(names[0]), key: key}, nil
	case len(names) == 4 && names[0] == "campaign" && (names[2] == "notification" || names[2] == "badge"):
		return address{block: strings.Join(names, "."), kind: message.Kind(names[2]), key: key}, nil
	}
	return address{}, bad
}
