package config

import (
	"encoding/hex"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// The evaluated configuration, as the review fingerprint (shape.go) and
// the secret check (leak.go) read it: every attribute of every block and
// nested block, whatever its schema says, evaluated in the context its
// block is evaluated in. Neither reads a list of attributes, so an
// attribute or block added to the language is in both as soon as it
// parses. The typed decoders (message.go, ...) evaluate the same
// attributes for their own use; this walk evaluates them once more, in a
// context of its own (see shapeContext), with its own allowance of the
// budget.

// node is one block's body laid out for the walk: its attributes by name,
// then its nested blocks in source order (their order can matter:
// variants are laid out over the audience in it).
type node struct {
	attrs  []*walkAttr
	blocks []childNode
}

type childNode struct {
	block *hclsyntax.Block
	node  *node
}

// walkAttr is one attribute of a node. An attribute that is the same in
// every instance of its block (without for_each, or one that uses no
// each) is evaluated, hashed and checked once, before the instances.
type walkAttr struct {
	attr *hclsyntax.Attribute
	// path names the attribute in diagnostics: title, variant "a".title.
	path string
	// sources are the data sources it reads (see dataSources).
	sources []string
	// person is set when it reads a person: a template (evalWalk).
	person bool
	shared bool
	digest [digestSize]byte // of a shared attribute's value
}

// skipFunc says which attributes (b nil) and nested blocks of a body the
// walk leaves out.
type skipFunc func(name string, b *hclsyntax.Block) bool

// layout lays out body; prefix is the path of the block it belongs to
// ("" for the walked block itself).
func layout(body *hclsyntax.Body, prefix string, skip skipFunc) *node {
	n := &node{}
	names := make([]string, 0, len(body.Attributes))
	for name := range body.Attributes {
		if skip == nil || !skip(name, nil) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		a := body.Attributes[name]
		n.attrs = append(n.attrs, &walkAttr{attr: a, path: prefix + name, person: len(personRefs(a.Expr)) > 0})
	}
	for _, b := range body.Blocks {
		if skip != nil && skip(b.Type, b) {
			continue
		}
		// Nested blocks keep no skip: only the walked block's own
		// attributes and blocks are left out (and per-person values).
		n.blocks = append(n.blocks, childNode{b, layout(b.Body, prefix+blockPath(b)+".", perPersonValues(b.Type))})
	}
	return n
}

// blockPath names a nested block in a path: rollout, variant "a".
func blockPath(b *hclsyntax.Block) string {
	s := b.Type
	for _, l := range b.Labels {
		s += " " + strconv.Quote(l)
	}
	return s
}

// each calls f for every attribute of n and its nested blocks, depth
// first.
func (n *node) each(f func(*walkAttr)) {
	for _, a := range n.attrs {
		f(a)
	}
	for _, c := range n.blocks {
		c.node.each(f)
	}
}

// evalWalk evaluates an attribute for the walk. An attribute that cannot
// be evaluated is unknown: its block's decoder reports why, and a
// configuration with errors is never planned. An attribute that reads a
// person (user.*, device.*) is a template: its value is its canonical
// text (canonical.go), and template is set.
func evalWalk(wa *walkAttr, ctx *hcl.EvalContext) (v cty.Value, template bool) {
	a := wa.attr
	if wa.person {
		canon, diags := canonicalTemplate(a.Expr, ctx)
		if diags.HasErrors() {
			return cty.DynamicVal, true
		}
		return cty.StringVal(canon), true
	}
	v, diags := a.Expr.Value(ctx)
	if diags.HasErrors() {
		return cty.DynamicVal, false
	}
	return v, false
}

// walkValue writes the digest of an attribute's value for the shape: a
// template's canonical text is told from a string of the same text.
func (w *shapeWriter) walkValue(v cty.Value, template bool) {
	if template {
		w.tag('T')
	}
	w.value(v)
}

// blockWalk is one block walked in every instance of it: its layout, the
// shared attributes evaluated, the secrets found.
type blockWalk struct {
	where string // the block, as diagnostics name it: notification.n, campaign.c
	root  *node
	leaks *leaks
	e     *evaluation
}

// newBlockWalk lays out body and evaluates, hashes and checks the
// attributes every instance shares (all of them when keyed is false).
func (cw *configWalk) newBlockWalk(where string, body *hclsyntax.Body, skip skipFunc, keyed bool) *blockWalk {
	w := &blockWalk{where: where, root: layout(body, "", skip), leaks: cw.leaks, e: cw.e}
	w.root.each(func(a *walkAttr) {
		a.sources = cw.e.dataSources(a.attr.Expr)
		if keyed && usesEach(a.attr.Expr) {
			return
		}
		v, tmpl := evalWalk(a, cw.ctx)
		a.shared, a.digest = true, cw.e.attrDigest(a, v, tmpl, cw.ctx)
		w.leaks.check(where, a.path, a.attr.Expr.Range(), v)
	})
	return w
}

// shape returns the fingerprint of a message in one instance of the
// block (ctx: its context; prefix writes the digests of its settings and
// campaign, see shapePrefix), checking the attributes of its own for
// secrets. s is scratch space, for one goroutine at a time.
func (w *blockWalk) shape(ctx *hcl.EvalContext, s *walkScratch, prefix func(*shapeWriter)) string {
	prefix(&s.inst)
	s.inst.node(w.root, func(a *walkAttr) [digestSize]byte {
		if a.shared {
			return a.digest
		}
		v, tmpl := evalWalk(a, ctx)
		w.leaks.check(w.where, a.path, a.attr.Expr.Range(), v)
		if len(a.sources) > 0 {
			return w.e.attrDigest(a, v, tmpl, ctx)
		}
		s.val.walkValue(v, tmpl)
		return s.val.sum()
	})
	sum := s.inst.sum()
	return hex.EncodeToString(sum[:16])
}

// walkScratch is what walking an instance writes into, kept from one
// instance to the next.
type walkScratch struct{ inst, val shapeWriter }

// inParallel calls f(i) for i in [0, n), on every core when n is large
// enough to gain from it (as expandMessage does).
func inParallel(n int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n/parallelFrom)
	if workers < 2 {
		for i := range n {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w * n / workers; i < (w+1)*n/workers; i++ {
				f(i)
			}
		})
	}
	wg.Wait()
}

// topBlockName names a top-level block in diagnostics: service,
// campaign.spring, topic.deals, variable.k.
func topBlockName(b *hclsyntax.Block) string {
	return strings.Join(append([]string{b.Type}, b.Labels...), ".")
}
