package config

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

var movedSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "from", Required: true},
		{Name: "to", Required: true},
	},
}

// moveEndpoint is one side of a moved block.
type moveEndpoint struct {
	block string // block address: notification.a, campaign.c.badge.b
	kind  Kind
	key   string // instance key as written in addresses, `["k"]` or `[0]`; "" for none
}

func (ep moveEndpoint) String() string { return ep.block + ep.key }

// movedBlock is a decoded moved block.
type movedBlock struct {
	block    *hcl.Block
	from, to moveEndpoint
	// whole is true when neither side has an instance key: the block moves
	// with all its instances, keys kept.
	whole bool
}

func (mb *movedBlock) at() string { return rangePos(mb.block.DefRange) }

// decodeMovedBlock decodes a moved block; nil when it is unusable.
func decodeMovedBlock(b *hcl.Block) (*movedBlock, hcl.Diagnostics) {
	content, diags := b.Body.Content(movedSchema)
	if diags.HasErrors() {
		return nil, diags
	}
	from, d := parseMoveEndpoint(content.Attributes["from"])
	diags = append(diags, d...)
	to, d := parseMoveEndpoint(content.Attributes["to"])
	diags = append(diags, d...)
	if diags.HasErrors() {
		return nil, diags
	}
	if from.kind != to.kind {
		return nil, append(diags, errDiag("Invalid moved block",
			fmt.Sprintf("%s is a %s and %s a %s: a notification moves to a notification, a badge to a badge.", from, from.kind, to, to.kind),
			b.DefRange.Ptr()))
	}
	if from == to {
		return nil, append(diags, errDiag("Redundant moved block",
			fmt.Sprintf("This block moves %s to itself; remove it.", from), b.DefRange.Ptr()))
	}
	return &movedBlock{block: b, from: from, to: to, whole: from.key == "" && to.key == ""}, diags
}

// parseMoveEndpoint reads from or to: a message address written as a
// reference, not a string, as in Terraform.
func parseMoveEndpoint(a *hcl.Attribute) (moveEndpoint, hcl.Diagnostics) {
	bad := func(detail string) (moveEndpoint, hcl.Diagnostics) {
		return moveEndpoint{}, hcl.Diagnostics{errDiag("Invalid moved address",
			fmt.Sprintf("%s must be the address of a notification or badge, such as notification.welcome, campaign.onboarding.notification.welcome or notification.order[\"A-1\"], written without quotes; %s", a.Name, detail),
			a.Expr.Range().Ptr())}
	}
	t, d := hcl.AbsTraversalForExpr(a.Expr)
	if d.HasErrors() {
		return bad("this is not an address.")
	}
	var names []string
	var key string
	var numeric hcl.Range // where a numeric key is, if any
	for i, step := range t {
		switch s := step.(type) {
		case hcl.TraverseRoot:
			names = append(names, s.Name)
		case hcl.TraverseAttr:
			if key != "" {
				return bad("the instance key comes last.")
			}
			names = append(names, s.Name)
		case hcl.TraverseIndex:
			if key != "" || i != len(t)-1 {
				return bad("an address has at most one instance key, at its end.")
			}
			switch k := s.Key; {
			case k.IsNull() || !k.IsKnown():
				return bad("the instance key must be a string.")
			case k.Type() == cty.String:
				key = "[" + strconv.Quote(k.AsString()) + "]"
			case k.Type() == cty.Number:
				bf := k.AsBigFloat()
				n, acc := bf.Int64()
				if !bf.IsInt() || acc != 0 || n < 0 {
					return bad("the instance key must be a string.")
				}
				key = "[" + strconv.FormatInt(n, 10) + "]"
				numeric = s.SrcRange
			default:
				return bad("the instance key must be a string.")
			}
		default:
			return bad("this is not an address.")
		}
	}
	var ep moveEndpoint
	switch {
	case len(names) == 2 && (names[0] == "notification" || names[0] == "badge"):
		ep = moveEndpoint{block: names[0] + "." + names[1], kind: Kind(names[0]), key: key}
	case len(names) == 4 && names[0] == "campaign" && (names[2] == "notification" || names[2] == "badge"):
		ep = moveEndpoint{block: strings.Join(names, "."), kind: Kind(names[2]), key: key}
	default:
		return bad("only notifications and badges move.")
	}
	if numeric.Filename != "" {
		k := key[1 : len(key)-1]
		return ep, hcl.Diagnostics{warnDiag("Numeric instance key",
			fmt.Sprintf("for_each keys are strings, so %s matches no address; write %s[%q] for the key %q.", ep, ep.block, k, k),
			numeric.Ptr())}
	}
	return ep, nil
}

// overlaps reports whether two endpoints can name the same address: the
// same address, or a whole block and one of its instances.
func overlaps(a moveEndpoint, aWhole bool, b moveEndpoint, bWhole bool) bool {
	if a.block != b.block {
		return false
	}
	return aWhole || bWhole || a.key == b.key
}

// checkMoves applies the rules between moved blocks: each address moves to
// one place and comes from one place, and chains end.
func checkMoves(moves []*movedBlock) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for j, b := range moves {
		for _, a := range moves[:j] {
			if a.from == b.from && a.to == b.to {
				continue // the same move twice says nothing new
			}
			if overlaps(a.from, a.whole, b.from, b.whole) {
				diags = append(diags, errDiag("Ambiguous moved blocks",
					fmt.Sprintf("The moved block at %s moves %s to %s, and this one moves %s to %s. An address can move to one place only; remove one of the blocks.", a.at(), a.from, a.to, b.from, b.to),
					b.block.DefRange.Ptr()))
			}
			if overlaps(a.to, a.whole, b.to, b.whole) {
				diags = append(diags, errDiag("Ambiguous moved blocks",
					fmt.Sprintf("The moved block at %s moves %s to %s, and this one moves %s there too. An address can come from one place only; remove one of the blocks.", a.at(), a.from, a.to, b.from),
					b.block.DefRange.Ptr()))
			}
		}
	}
	if diags.HasErrors() {
		return diags // a cycle report would only add noise
	}
	// next[i] are the blocks that move on what block i moved.
	next := make([][]int, len(moves))
	for i, a := range moves {
		for j, b := range moves {
			if i != j && overlaps(a.to, a.whole, b.from, b.whole) {
				next[i] = append(next[i], j)
			}
		}
	}
	const (
		unvisited = iota
		visiting
		done
	)
	state := make([]int, len(moves))
	var stack []int
	var visit func(i int)
	visit = func(i int) {
		state[i] = visiting
		stack = append(stack, i)
		for _, j := range next[i] {
			switch state[j] {
			case unvisited:
				visit(j)
			case visiting:
				k := len(stack) - 1
				for stack[k] != j {
					k--
				}
				cycle := stack[k:]
				var path, where []string
				for _, c := range cycle {
					path = append(path, moves[c].from.String())
					if c != i {
						where = append(where, moves[c].at())
					}
				}
				path = append(path, moves[j].from.String())
				diags = append(diags, errDiag("Cyclic moved blocks",
					fmt.Sprintf("This moved block and the one%s at %s form a cycle (%s), so there is no final address. A chain of moves must end at an address of the configuration.",
						plural(len(where)), strings.Join(where, ", "), strings.Join(path, " → ")),
					moves[i].block.DefRange.Ptr()))
			}
		}
		stack = stack[:len(stack)-1]
		state[i] = done
	}
	for i := range moves {
		if state[i] == unvisited {
			visit(i)
		}
	}
	return diags
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// checkMoveTargets checks moved blocks against the evaluated messages: a
// moved address is no longer declared, and every chain ends at one that is.
func checkMoveTargets(moves []*movedBlock, cfg *Config, blocks []*blockResult) hcl.Diagnostics {
	if len(moves) == 0 {
		return nil
	}
	declared := map[string]*blockResult{}
	for _, br := range blocks {
		if !br.mb.duplicate {
			declared[br.mb.address()] = br
		}
	}
	addrs := make(map[string]bool, len(cfg.Messages))
	for _, m := range cfg.Messages {
		addrs[m.Address] = true
	}
	// exists reports whether ep is in the configuration; known is false when
	// its block's instances could not be evaluated.
	exists := func(ep moveEndpoint, whole bool) (ok, known bool) {
		br, isBlock := declared[ep.block]
		switch {
		case whole:
			return isBlock, true
		case addrs[ep.String()]:
			return true, true
		default:
			return false, !isBlock || br.messages != nil
		}
	}
	var diags hcl.Diagnostics
	for _, mb := range moves {
		if ok, _ := exists(mb.from, mb.whole); ok {
			diags = append(diags, errDiag("Moved object still exists",
				fmt.Sprintf("This block moves %s to %s, but %s is still declared at %s. Rename the block in the configuration to %s, or remove this moved block.", mb.from, mb.to, mb.from, rangePos(declared[mb.from.block].mb.block.DefRange), mb.to),
				mb.block.DefRange.Ptr()))
		}
		end, _ := cfg.MovedTo(mb.to.String())
		if end != mb.to.String() {
			continue // the block that moves it on checks its own target
		}
		if ok, known := exists(mb.to, mb.whole); !ok && known {
			diags = append(diags, errDiag("Moved object missing",
				fmt.Sprintf("This block moves %s to %s, which is not in the configuration. A move must end at a declared notification or badge: declare %s, or correct to.", mb.from, mb.to, mb.to),
				mb.block.DefRange.Ptr()))
		}
	}
	return diags
}

// MovedTo maps an address recorded in state to where the moved blocks put
// it, following chains (A to B, B to C: A ends at C). A whole-block move
// carries the instance key over: notification.a["k"] becomes
// notification.b["k"] when notification.a moves to notification.b. ok is
// false when no moved block applies; the address is then returned as is.
func (c *Config) MovedTo(addr string) (string, bool) {
	moved := false
	// Validated moves have no cycles; the bound guards a hand-built Config.
	for range len(c.Moved) {
		step, ok := moveOnce(c.Moved, addr)
		if !ok {
			break
		}
		addr, moved = step, true
	}
	return addr, moved
}

// moveOnce applies the moved block whose from matches addr.
func moveOnce(moves []Moved, addr string) (string, bool) {
	for _, m := range moves {
		if addr == m.From {
			return m.To, true
		}
		whole := !strings.ContainsRune(m.From, '[') && !strings.ContainsRune(m.To, '[')
		if whole && strings.HasPrefix(addr, m.From+"[") {
			return m.To + addr[len(m.From):], true
		}
	}
	return addr, false
}
