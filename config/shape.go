package config

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"slices"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// The review promise: a reviewed apply accepts the whole evaluated shape of
// each message instance, and apply --scheduled releases only sends whose
// shape equals the accepted one (planner/review.go). The shape is every
// attribute and nested block of the message's block, evaluated for the
// instance (content, variants, static targets, schedule, repeat_after,
// rollout and its gate, weights, holdout, salt, local time, tags, ... and
// whatever the language adds later), the attributes and nested blocks of
// its campaign block, and the top-level blocks that apply to every
// message (frequency_cap, time_zones, quiet_hours, ...). Message.Shape is
// its fingerprint: a SHA-256 of a canonical encoding of those values
// (shapeWriter), so equal values give equal fingerprints whatever the
// files' layout, and any other value another one.
//
// What the shape leaves out is listed here, and nowhere else:
//
//   - Values read from a data source at run time. The shape is evaluated
//     in shapeContext, where every data source is unknown, and each
//     attribute's part of it names the sources it reads (dataSources): a
//     value computed from one is fingerprinted as "unknown, read from
//     data.recipients.NAME", never as the ids it holds, together with how
//     it is computed (exprShape: every part that reads no data source by
//     its value). So what a data source holds may change unreviewed (an
//     audience may grow or shrink), and only that: switching to another
//     source, or editing a literal beside it, changes the shape; a static
//     list is in the shape id by id.
//   - The meta-arguments in metaArguments: for_each says which instances
//     exist, and each instance is an address of its own, with a shape of
//     its own (a new one awaits review as a new address). Its each.value
//     is in the shape of every attribute that uses it.
//   - The top-level blocks in notSettings, for the reasons given there.
//     Every other top-level block is in the shape of every message.
//   - Per-person values: the attributes of user_data and device_data
//     blocks (perPersonValues), which each person's text is filled in
//     from at plan time, as a recipients list is read at run time. The
//     templates that read them are in the shape, as their canonical text
//     (evalWalk): a changed template is a changed shape, a changed
//     person is not.

// metaArguments are the message attributes that are not in its shape.
var metaArguments = map[string]string{
	"for_each": "says which instances exist; each instance is an address with a shape of its own",
}

// perPersonValues says which attributes of a block of type t are
// per-person values, left out of the walk (nil: none): the attributes of
// user_data and device_data, read per person at plan time. The secret
// check reads what is filled in from them instead (config.Template).
func perPersonValues(t string) skipFunc {
	if t != "user_data" && t != "device_data" {
		return nil
	}
	return func(name string, b *hclsyntax.Block) bool { return b == nil && name == "attributes" }
}

// notSettings are the top-level blocks that are in no message's shape,
// and why. Every other top-level block applies to every message and is in
// every shape: a block added to the language later is, unless it is added
// here.
var notSettings = map[string]string{
	"variable":     "an input: its value is in the shape of every attribute that uses it",
	"locals":       "named values: each is in the shape of every attribute that uses it",
	"data":         "read at run time: an audience read from a data source may grow unreviewed",
	"topic":        "declares a topic; the topics a message sends to are in its shape",
	"moved":        "renames recorded addresses: a move awaits review by itself",
	"service":      "says where to send, not what: the state refuses another service",
	"backend":      "says where the state is kept",
	"campaign":     "in the shape of its own messages only",
	"notification": "a message, with a shape of its own",
	"badge":        "a message, with a shape of its own",
	"policy":       "checks a plan and sends nothing; a policy directory's are not in the configuration at all",
}

// shapeContext is the root context the walk evaluates in: that of the
// configuration with every data source unknown, and the locals that read
// one evaluated again with it (ctx is the configuration's, which is that
// already when no recipients were given to Load).
func (e *evaluation) shapeContext(ctx *hcl.EvalContext, recipientsGiven bool) *hcl.EvalContext {
	if !recipientsGiven {
		return ctx
	}
	unknown, _ := e.dataContext(nil) // the locals' errors were reported
	return unknown
}

// dataSources returns the data sources expr reads, directly or through
// locals, sorted: data.recipients.NAME. An attribute's part of the shape
// names them, so that reading another source is another shape.
func (e *evaluation) dataSources(expr hcl.Expression) []string {
	seen := map[string]bool{}
	var visit func(expr hcl.Expression)
	visitedLocals := map[string]bool{}
	visit = func(expr hcl.Expression) {
		for _, t := range expr.Variables() {
			switch t.RootName() {
			case "data":
				name := "data"
				for _, step := range t[1:min(len(t), 3)] {
					if a, ok := step.(hcl.TraverseAttr); ok {
						name += "." + a.Name
					}
				}
				seen[name] = true
			case "local":
				if len(t) < 2 {
					continue
				}
				a, ok := t[1].(hcl.TraverseAttr)
				if !ok || !e.dataLocals[a.Name] || visitedLocals[a.Name] {
					continue
				}
				visitedLocals[a.Name] = true
				if la, ok := e.mod.locals[a.Name]; ok {
					visit(la.Expr)
				}
			}
		}
	}
	visit(expr)
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// digestSize is the size of the digests the shape is made of.
const digestSize = sha256.Size

// shapeWriter writes values in a canonical encoding into a SHA-256: a
// tag per kind of value, lengths before contents, collections element by
// element, maps and objects by key, sets by their elements' digests in
// order. A list and a tuple of the same elements are the same value, as
// are a map and an object: conversions the decoders make anyway.
type shapeWriter struct {
	h   hash.Hash
	buf []byte
}

func (w *shapeWriter) tag(c byte) { w.buf = append(w.buf, c) }

func (w *shapeWriter) uvarint(n uint64) { w.buf = binary.AppendUvarint(w.buf, n) }

func (w *shapeWriter) str(s string) {
	w.uvarint(uint64(len(s)))
	w.buf = append(w.buf, s...)
	if len(w.buf) >= 32<<10 {
		w.flush()
	}
}

func (w *shapeWriter) bytes(b []byte) {
	w.buf = append(w.buf, b...)
	if len(w.buf) >= 32<<10 {
		w.flush()
	}
}

func (w *shapeWriter) flush() {
	if w.h == nil {
		w.h = sha256.New()
	}
	w.h.Write(w.buf)
	w.buf = w.buf[:0]
}

// sum returns the digest of what was written, and starts again.
func (w *shapeWriter) sum() [digestSize]byte {
	w.flush()
	var out [digestSize]byte
	w.h.Sum(out[:0])
	w.h.Reset()
	return out
}

// value writes v.
func (w *shapeWriter) value(v cty.Value) {
	if v.IsMarked() { // no configuration value is marked
		v, _ = v.Unmark()
	}
	switch ty := v.Type(); {
	case !v.IsKnown():
		w.tag('?')
	case v.IsNull():
		w.tag('0')
	case ty == cty.String:
		w.tag('s')
		w.str(v.AsString())
	case ty == cty.Number:
		w.tag('#')
		w.str(v.AsBigFloat().Text('g', -1))
	case ty == cty.Bool:
		if v.True() {
			w.tag('t')
		} else {
			w.tag('f')
		}
	case ty.IsListType() || ty.IsTupleType():
		w.tag('[')
		w.uvarint(uint64(v.LengthInt()))
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			w.value(e)
		}
	case ty.IsMapType() || ty.IsObjectType():
		// cty iterates both by key, in order.
		w.tag('{')
		w.uvarint(uint64(v.LengthInt()))
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			w.str(k.AsString())
			w.value(e)
		}
	case ty.IsSetType():
		var sums [][digestSize]byte
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			sums = append(sums, valueDigest(e))
		}
		slices.SortFunc(sums, func(a, b [digestSize]byte) int { return strings.Compare(string(a[:]), string(b[:])) })
		w.tag('<')
		w.uvarint(uint64(len(sums)))
		for _, s := range sums {
			w.bytes(s[:])
		}
	default: // a capsule: no configuration value is one
		w.tag('c')
		w.str(ty.FriendlyName())
	}
}

// node writes a body: each attribute's name, the digest of its value
// (attr gives it) and the data sources it reads, then each nested block's
// type, labels and body.
func (w *shapeWriter) node(n *node, attr func(*walkAttr) [digestSize]byte) {
	w.tag('{')
	for _, a := range n.attrs {
		w.tag('a')
		w.str(a.attr.Name)
		d := attr(a)
		w.bytes(d[:])
		w.uvarint(uint64(len(a.sources)))
		for _, s := range a.sources {
			w.str(s)
		}
	}
	for _, c := range n.blocks {
		w.tag('b')
		w.str(c.block.Type)
		w.uvarint(uint64(len(c.block.Labels)))
		for _, l := range c.block.Labels {
			w.str(l)
		}
		w.node(c.node, attr)
	}
	w.tag('}')
}

// valueDigest is the digest of v's encoding.
func valueDigest(v cty.Value) [digestSize]byte {
	var w shapeWriter
	w.value(v)
	return w.sum()
}

// shapePrefix writes what comes before a message block's own part of
// its shape: the digests of the top-level settings and of the campaign
// block (nil when the message is in none). Message.Shape is the first 16
// bytes of the SHA-256 of the whole, in hex.
func shapePrefix(w *shapeWriter, settings [digestSize]byte, campaign *[digestSize]byte) {
	w.str("pushform shape 1")
	w.bytes(settings[:])
	if campaign != nil {
		w.tag(1)
		w.bytes(campaign[:])
	} else {
		w.tag(0)
	}
}

// configWalk walks the evaluated configuration once per Load: it checks
// every string of every block for the known secrets (leak.go) and gives
// every message its Shape.
type configWalk struct {
	e         *evaluation
	ctx       *hcl.EvalContext // shapeContext
	budget    *budget
	counts    budgetCounts // what the walk spent, kept apart from the decoders'
	off       bool         // the decoders spent the budget: the load fails anyway
	settings  [digestSize]byte
	campaigns map[string]*[digestSize]byte
	leaks     *leaks
	scratch   sync.Pool // of *walkScratch
}

// startWalk walks the top-level blocks: their secrets, the settings every
// message's shape holds, and each campaign's part of its messages' shapes.
// It runs once the blocks besides the messages are evaluated; messages
// walks each message block after it.
func (e *evaluation) startWalk(known []knownSecret, ctx *hcl.EvalContext, recipientsGiven bool) *configWalk {
	w := &configWalk{e: e, budget: e.mod.budget, leaks: newLeaks(known), campaigns: map[string]*[digestSize]byte{}}
	w.scratch.New = func() any { return new(walkScratch) }
	if w.budget != nil && (w.budget.spent() || w.budget.bytesSpent()) {
		w.off = true // the decoders spent the budget: the load fails anyway
		return w
	}
	w.swap()
	defer w.swap()
	w.ctx = e.shapeContext(ctx, recipientsGiven)
	type setting struct {
		key    string // type and labels, for a stable order
		digest [digestSize]byte
	}
	var settings []setting
	for _, body := range e.mod.bodies {
		for _, b := range body.Blocks {
			w.leaks.checkLabels(b.Type, b)
			where := topBlockName(b)
			switch b.Type {
			case "notification", "badge":
				continue // walked per instance (messages)
			case "locals":
				// Evaluated already, with their errors reported.
				for name, a := range b.Body.Attributes {
					if v, ok := e.locals[name]; ok {
						w.leaks.check(where, name, a.Expr.Range(), v)
					}
				}
				continue
			case "variable":
				// Its value, however given (--var, a var file, the
				// environment), used or not: a saved plan keeps the
				// --var values.
				if v, ok := e.vars[b.Labels[0]]; ok {
					w.leaks.check(where, "var."+b.Labels[0], b.DefRange(), v)
				}
			}
			skip := perPersonValues(b.Type)
			if b.Type == "campaign" {
				skip = func(name string, nb *hclsyntax.Block) bool {
					return nb != nil && (name == "notification" || name == "badge")
				}
			}
			root := w.newBlockWalk(where, b.Body, skip, false).root
			var sw shapeWriter
			sw.node(root, func(a *walkAttr) [digestSize]byte { return a.digest })
			d := sw.sum()
			switch {
			case b.Type == "campaign":
				// A campaign that sets nothing applies nothing: its
				// messages have the shape they would have outside it.
				if _, dup := w.campaigns[b.Labels[0]]; !dup && (len(root.attrs) > 0 || len(root.blocks) > 0) {
					w.campaigns[b.Labels[0]] = &d
				}
			case notSettings[b.Type] == "":
				settings = append(settings, setting{strings.Join(append([]string{b.Type}, b.Labels...), "\x00"), d})
			}
		}
	}
	slices.SortStableFunc(settings, func(a, b setting) int { return strings.Compare(a.key, b.key) })
	var sw shapeWriter
	sw.uvarint(uint64(len(settings)))
	for _, s := range settings {
		sw.str(s.key)
		sw.bytes(s.digest[:])
	}
	w.settings = sw.sum()
	return w
}

// swap makes the budget count what the walk spends, or again what the
// decoders spend (see budget.swap).
func (w *configWalk) swap() {
	if w.budget != nil {
		w.budget.swap(&w.counts)
	}
}

// contexts returns where expandMessage keeps the instances' contexts for
// messages, when the walk evaluates in the configuration's context (ctx):
// made once, they serve both. Nil otherwise.
func (w *configWalk) contexts(ctx *hcl.EvalContext, n int) []*hcl.EvalContext {
	if w.off || w.ctx != ctx {
		return nil
	}
	return make([]*hcl.EvalContext, n)
}

// messages walks a message block in each of its instances, in parallel
// when they are many: checks it and sets the Shape of br.messages, which
// parallel insts (and contexts, their contexts, when not nil).
func (w *configWalk) messages(br *blockResult, insts []instance, contexts []*hcl.EvalContext) {
	body, ok := br.mb.block.Body.(*hclsyntax.Body)
	if w.budget != nil && (w.budget.spent() || w.budget.bytesSpent()) {
		w.off = true // the decoders spent the budget: the load fails anyway
	}
	if w.off || !ok || len(insts) == 0 {
		return
	}
	w.swap()
	defer w.swap()
	where := br.mb.address() // never an instance key, which may be what holds a secret
	keyed := insts[0].keyed
	if a, ok := body.Attributes["for_each"]; ok && keyed {
		// Its keys name addresses; its values reach the attributes
		// that use each.value.
		for _, in := range insts {
			w.leaks.check(where, "for_each", a.Expr.Range(), cty.StringVal(in.key))
			w.leaks.check(where, "for_each", a.Expr.Range(), in.value)
		}
	}
	skip := func(name string, b *hclsyntax.Block) bool { return b == nil && metaArguments[name] != "" }
	bw := w.newBlockWalk(where, body, skip, keyed)
	campaign := w.campaigns[br.mb.campaign]
	prefix := func(sw *shapeWriter) { shapePrefix(sw, w.settings, campaign) }
	inParallel(len(insts), func(i int) {
		if i >= len(br.messages) || br.messages[i] == nil {
			return
		}
		var ictx *hcl.EvalContext
		if contexts != nil {
			ictx = contexts[i]
		} else {
			ictx = instanceContext(w.ctx, insts[i])
		}
		s := w.scratch.Get().(*walkScratch)
		br.messages[i].Shape = bw.shape(ictx, s, prefix)
		w.scratch.Put(s)
	})
}
