package config

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// module is every block of a configuration directory, decoded but not
// evaluated, with names checked for duplicates.
type module struct {
	dir       string
	budget    *budget       // what for expressions may walk, templatefile's included
	service   *serviceBlock // the first; nil when there is none
	variables map[string]*variable
	varNames  []string // in declaration order
	locals    map[string]*hcl.Attribute
	data      map[string]*dataSource
	topics    map[string]*topicBlock
	campaigns map[string]*campaignBlock
	// campaignNames are in declaration order.
	campaignNames []string
	// messages are every notification and badge block, top level and in
	// campaigns, in declaration order.
	messages []*messageBlock
	freqCap  *frequencyCapBlock // top level; nil when none
	local    localBlocks        // top-level time_zones and quiet_hours
	persons  personBlocks       // top-level user_data, device_data and locales
	backend  *backendBlock      // nil when none
	moved    []*movedBlock      // in source order
	policies []*policyBlock     // the configuration's, then the policy directories'
	// policyObjects are the Loader's (nil: policies' attributes unchecked).
	policyObjects *PolicyObjects
	// bodies are the files' bodies, in name order, for the walk of the
	// evaluated configuration (evaluated.go).
	bodies []*hclsyntax.Body
	// reads are the person roots of the bodies' attributes.
	reads personReads
	// names maps campaign/kind/name to its first block, to report duplicates.
	names map[string]*hcl.Block
}

func newModule(dir string) *module {
	return &module{
		dir:       dir,
		variables: map[string]*variable{},
		locals:    map[string]*hcl.Attribute{},
		data:      map[string]*dataSource{},
		topics:    map[string]*topicBlock{},
		campaigns: map[string]*campaignBlock{},
		names:     map[string]*hcl.Block{},
		reads:     personReads{},
	}
}

// addFile merges one file's blocks, reporting names declared twice. The
// first declaration wins.
func (m *module) addFile(f *file) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, sb := range f.services {
		if m.service != nil {
			diags = append(diags, errDiag("Duplicate service block",
				fmt.Sprintf("A configuration has exactly one service block; the first is at %s.", rangePos(m.service.block.DefRange)),
				sb.block.DefRange.Ptr()))
			continue
		}
		m.service = sb
	}
	for _, v := range f.variables {
		if prev, ok := m.variables[v.name]; ok {
			diags = append(diags, errDiag("Duplicate variable block",
				fmt.Sprintf("var.%s is already declared at %s.", v.name, rangePos(prev.decl)), v.decl.Ptr()))
			continue
		}
		m.variables[v.name] = v
		m.varNames = append(m.varNames, v.name)
	}
	for _, a := range f.locals {
		if prev, ok := m.locals[a.Name]; ok {
			diags = append(diags, errDiag("Duplicate local value",
				fmt.Sprintf("local.%s is already defined at %s.", a.Name, rangePos(prev.NameRange)), a.NameRange.Ptr()))
			continue
		}
		m.locals[a.Name] = a
	}
	for _, ds := range f.data {
		if prev, ok := m.data[ds.name]; ok {
			diags = append(diags, errDiag("Duplicate data source",
				fmt.Sprintf("data.recipients.%s is already declared at %s.", ds.name, rangePos(prev.decl)), ds.decl.Ptr()))
			continue
		}
		m.data[ds.name] = ds
	}
	for _, t := range f.topics {
		if prev, ok := m.topics[t.topic.Name]; ok {
			diags = append(diags, duplicateBlock("topic", t.topic.Name, prev.decl, t.decl))
			continue
		}
		m.topics[t.topic.Name] = t
	}
	for _, cb := range f.campaigns {
		if prev, ok := m.campaigns[cb.name]; ok {
			// Its messages are left out too: their addresses would clash.
			diags = append(diags, duplicateBlock("campaign", cb.name, prev.block.DefRange, cb.block.DefRange))
			continue
		}
		m.campaigns[cb.name] = cb
		m.campaignNames = append(m.campaignNames, cb.name)
		for _, mb := range cb.messages {
			diags = append(diags, m.addMessage(mb)...)
		}
	}
	for _, mb := range f.messages {
		diags = append(diags, m.addMessage(mb)...)
	}
	for _, bb := range f.backends {
		if m.backend != nil {
			diags = append(diags, errDiag("Duplicate backend block",
				fmt.Sprintf("A configuration has at most one backend block, saying where its state is kept; the first is at %s.", rangePos(m.backend.block.DefRange)),
				bb.block.DefRange.Ptr()))
			continue
		}
		m.backend = bb
	}
	m.moved = append(m.moved, f.moved...)
	if f.body != nil {
		m.bodies = append(m.bodies, f.body)
		m.reads.add(f.body)
	}
	for _, fb := range f.freqCaps {
		if m.freqCap != nil {
			diags = append(diags, duplicateSingle("A configuration", "frequency_cap", m.freqCap.block, fb.block))
			continue
		}
		m.freqCap = fb
	}
	for _, b := range f.local {
		_, d := m.local.add(b, "A configuration")
		diags = append(diags, d...)
	}
	for _, b := range f.persons {
		_, d := m.persons.add(b, "A configuration")
		diags = append(diags, d...)
	}
	diags = append(diags, m.addPolicies(f.policies)...)
	return diags
}

// addMessage adds a message block; a second block with the same address is
// marked duplicate, still checked, and left out of the Config.
func (m *module) addMessage(mb *messageBlock) hcl.Diagnostics {
	b := mb.block
	key := mb.campaign + "/" + b.Type + "/" + b.Labels[0]
	m.messages = append(m.messages, mb)
	if prev, ok := m.names[key]; ok {
		mb.duplicate = true
		return hcl.Diagnostics{errDiag("Duplicate "+b.Type+" block",
			fmt.Sprintf("%s is already defined at %s; each address must be unique.", mb.address(), rangePos(prev.DefRange)),
			b.DefRange.Ptr())}
	}
	m.names[key] = b
	return nil
}

func duplicateBlock(what, name string, prev, this hcl.Range) *hcl.Diagnostic {
	return errDiag("Duplicate "+what+" block",
		fmt.Sprintf("A %s named %q is already declared at %s.", what, name, rangePos(prev)), this.Ptr())
}
