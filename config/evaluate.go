package config

import (
	"runtime"
	"sort"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"

	"pushform/secret"
)

// evaluation is what one Load evaluated, kept so that Resolve can fill in
// recipients without reading or evaluating anything that does not depend
// on them.
type evaluation struct {
	mod    *module
	funcs  map[string]function.Function
	vars   map[string]cty.Value
	locals map[string]cty.Value
	// dataLocals are the locals that read a data source.
	dataLocals map[string]bool
	blocks     []*blockResult
	cfg        *Config
	// blockScope is what the message blocks were decoded with.
	blockScope *scope
	// root is the context every block is evaluated in (Loader.Scope).
	root *hcl.EvalContext
	// resolved are the recipients of the last Resolve (nil before one),
	// and scope the root context with them (see resolvedScope).
	resolved map[string][]string
	scope    *hcl.EvalContext
	// reported are the diagnostics of the Load.
	reported map[diagKey]bool
	// known are the secrets the Load knew of; secrets redacts them all.
	known   []knownSecret
	secrets *secret.Redactor
}

// blockResult is one message block as Load evaluated it.
type blockResult struct {
	mb       *messageBlock
	settings blockSettings
	messages []*Message // in instance order; nil when for_each failed
	// dataDependent blocks read a data source other than through a bare
	// user_ids = data.recipients.NAME.user_ids; Resolve evaluates them again
	// with their instances.
	dataDependent bool
	instances     []instance
}

// evaluate turns a decoded module into a Config, in Packer's order:
// variable values, then the context (topics, data), then locals, then
// every block that may use them.
func evaluate(mod *module, opts Options, types BackendTypes) (*evaluation, []varFile, hcl.Diagnostics) {
	cfg := &Config{Dir: mod.dir, Topics: map[string]Topic{}, Campaigns: map[string]Campaign{}}
	e := &evaluation{mod: mod, cfg: cfg, funcs: functions(mod.dir, mod.budget), dataLocals: dataLocals(mod.locals)}
	vars, varFiles, diags := variableValues(mod, opts)
	diags = append(diags, checkValidations(mod, vars, e.funcs)...)
	e.vars = vars
	for name, tb := range mod.topics {
		cfg.Topics[name] = tb.topic
	}
	recipients := recipientsValue(mod, opts.Recipients)
	locals, d := evalLocals(mod.locals, e.context(recipients, nil), nil)
	diags = append(diags, d...)
	e.locals = locals
	ctx := e.context(recipients, locals)
	e.root = ctx

	if mod.service != nil {
		cfg.Service, d = evalService(mod.service, ctx, mod.dir)
		diags = append(diags, d...)
	}
	if mod.backend != nil {
		cfg.Backend = mod.backend.backend
	}
	if mod.freqCap != nil {
		cfg.FrequencyCap, d = evalFrequencyCap(mod.freqCap, ctx)
		diags = append(diags, d...)
	}
	cfg.TimeZones, cfg.QuietHours, d = mod.local.eval(ctx)
	diags = append(diags, d...)
	persons, d := mod.persons.eval(ctx, mod.dir)
	diags = append(diags, d...)
	cfg.UserData, cfg.DeviceData, cfg.Locales = persons.user, persons.device, persons.locales
	cfg.Policies, d = mod.evalPolicies(ctx)
	diags = append(diags, d...)
	for _, name := range mod.campaignNames {
		c, d := evalCampaign(mod.campaigns[name], ctx, mod.dir)
		diags = append(diags, d...)
		cfg.Campaigns[name] = c
	}
	// The secrets and the walk of the evaluated configuration (see
	// evaluated.go) need only the service and backend blocks.
	e.known = knownSecrets(cfg, opts, types)
	e.secrets = redactorOf(e.known)
	walk := e.startWalk(e.known, ctx, opts.Recipients != nil)
	sc := &scope{data: mod.data, topics: cfg.Topics, recipients: opts.Recipients, campaigns: cfg.Campaigns,
		timeZones: cfg.TimeZones, quietHours: cfg.QuietHours, persons: persons, campaignBlocks: mod.campaigns,
		env: &templateEnv{known: e.known, reads: mod.reads, lift: func() {
			if mod.budget != nil {
				mod.budget.unlimited()
			}
		}}}
	e.blockScope = sc
	for _, mb := range mod.messages {
		br := &blockResult{mb: mb, dataDependent: e.readsData(mb)}
		br.settings, d = evalBlockSettings(mb, ctx)
		diags = append(diags, d...)
		insts, ok, d := forEachInstances(mb, ctx)
		if !ok && e.forEachReadsFailedLocal(mb) {
			d = nil // the local's own error says it: "not known" would only echo it
		}
		diags = append(diags, d...)
		if ok {
			contexts := walk.contexts(ctx, len(insts))
			br.messages, d = expandMessage(br, insts, ctx, sc, contexts)
			diags = append(diags, d...)
			walk.messages(br, insts, contexts)
			if br.dataDependent {
				br.instances = insts
			}
		}
		e.blocks = append(e.blocks, br)
		if !mb.duplicate {
			cfg.Messages = append(cfg.Messages, br.messages...)
		}
	}

	diags = append(diags, e.checkAudience(cfg, nil)...)
	diags = append(diags, e.checkSharedTags(cfg)...)
	diags = append(diags, walk.leaks.diagnostics()...)
	if opts.Recipients != nil {
		diags = append(diags, e.checkDataSecrets(ctx)...)
	}
	for _, mb := range mod.moved {
		cfg.Moved = append(cfg.Moved, Moved{From: mb.from.String(), To: mb.to.String(), Pos: posOf(mb.block.DefRange)})
	}
	if d := checkMoves(mod.moved); d.HasErrors() {
		diags = append(diags, d...) // targets of conflicting moves mean nothing
	} else {
		diags = append(diags, checkMoveTargets(mod.moved, cfg, e.blocks)...)
	}
	for name := range mod.data {
		cfg.DataSources = append(cfg.DataSources, name)
	}
	sort.Strings(cfg.DataSources)
	sortMessages(cfg.Messages)
	return e, varFiles, dropDependents(mod, diags)
}

// context is the evaluation context with the given recipients and locals.
func (e *evaluation) context(recipients cty.Value, locals map[string]cty.Value) *hcl.EvalContext {
	return newEvalContext(e.funcs, e.vars, e.cfg.Topics, recipients, locals)
}

// readsData reports whether any attribute of mb reads a data source, other
// than a bare recipients reference in user_ids (which needs no evaluation).
func (e *evaluation) readsData(mb *messageBlock) bool {
	for name, a := range mb.content.Attributes {
		if _, ok := recipientsRef(a.Expr); ok && name == string(TargetUsers) {
			continue
		}
		if refersToData(a.Expr, e.dataLocals) {
			return true
		}
	}
	return false
}

// expandMessage decodes every instance of a message block. When keep is
// not nil (it has a place per instance), it is given the context of each.
func expandMessage(br *blockResult, insts []instance, ctx *hcl.EvalContext, sc *scope, keep []*hcl.EvalContext) ([]*Message, hcl.Diagnostics) {
	msgs := make([]*Message, len(insts))
	instDiags := make([]hcl.Diagnostics, len(insts))
	decode := func(from, to int) {
		for i := from; i < to; i++ {
			ictx := instanceContext(ctx, insts[i])
			if keep != nil {
				keep[i] = ictx
			}
			msgs[i], instDiags[i] = decodeMessage(br.mb, br.settings, insts[i], ictx, sc)
		}
	}
	// Instances are independent (the block, the root context and the scope
	// are only read), so a large for_each is decoded on every core; the
	// results keep the instances' order.
	workers := min(runtime.GOMAXPROCS(0), len(insts)/parallelFrom)
	if workers < 2 {
		decode(0, len(insts))
	} else {
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() { decode(w*len(insts)/workers, (w+1)*len(insts)/workers) })
		}
		wg.Wait()
	}
	var diags hcl.Diagnostics
	for _, d := range instDiags {
		diags = append(diags, d...)
	}
	return msgs, diags
}

// parallelFrom is how many instances each worker of expandMessage gets at
// least: below that, goroutines cost more than they save.
const parallelFrom = 1000

func sortMessages(ms []*Message) {
	sort.Slice(ms, func(i, j int) bool { return ms[i].Address < ms[j].Address })
}

// forEachReadsFailedLocal reports whether mb's for_each reads a local
// whose evaluation failed (and was reported): one not known though it
// reads no data source.
func (e *evaluation) forEachReadsFailedLocal(mb *messageBlock) bool {
	a, ok := mb.content.Attributes["for_each"]
	if !ok {
		return false
	}
	for _, dep := range localDeps(a.Expr) {
		if v, declared := e.locals[dep.name]; declared && !e.dataLocals[dep.name] && !v.IsWhollyKnown() {
			return true
		}
	}
	return false
}
