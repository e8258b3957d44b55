package config

import "github.com/hashicorp/hcl/v2"

// rootSchema is the schema of a configuration file. The schemas are
// constant package-level values, as in Terraform's configs; each block
// kind's own schema is in the file that decodes it.
var rootSchema = &hcl.BodySchema{
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "service"},
		{Type: "variable", LabelNames: []string{"name"}},
		{Type: "locals"},
		{Type: "data", LabelNames: []string{"type", "name"}},
		{Type: "topic", LabelNames: []string{"name"}},
		{Type: "campaign", LabelNames: []string{"name"}},
		{Type: "notification", LabelNames: []string{"name"}},
		{Type: "badge", LabelNames: []string{"name"}},
		{Type: "frequency_cap"},
		{Type: "backend", LabelNames: []string{"type"}},
		{Type: "moved"},
	},
}

// file is the blocks of one configuration file, decoded but not evaluated,
// in source order.
type file struct {
	services  []*serviceBlock
	variables []*variable
	locals    []*hcl.Attribute
	data      []*dataSource
	topics    []*topicBlock
	campaigns []*campaignBlock
	messages  []*messageBlock
	freqCaps  []*frequencyCapBlock
	backends  []*backendBlock
	moved     []*movedBlock
}

// decodeFile splits a file's body into its blocks and decodes each. Every
// problem is reported; a block that cannot be used is left out.
func decodeFile(f *hcl.File) (*file, hcl.Diagnostics) {
	out := &file{}
	content, diags := f.Body.Content(rootSchema)
	for _, b := range content.Blocks {
		switch b.Type {
		case "service":
			sb, d := decodeServiceBlock(b)
			diags = append(diags, d...)
			out.services = append(out.services, sb)
		case "variable":
			v, d := decodeVariableBlock(b)
			diags = append(diags, d...)
			if v != nil {
				out.variables = append(out.variables, v)
			}
		case "locals":
			attrs, d := decodeLocalsBlock(b)
			diags = append(diags, d...)
			out.locals = append(out.locals, attrs...)
		case "data":
			ds, d := decodeDataBlock(b)
			diags = append(diags, d...)
			if ds != nil {
				out.data = append(out.data, ds)
			}
		case "topic":
			t, d := decodeTopicBlock(b)
			diags = append(diags, d...)
			if t != nil {
				out.topics = append(out.topics, t)
			}
		case "campaign":
			cb, d := decodeCampaignBlock(b)
			diags = append(diags, d...)
			if cb != nil {
				out.campaigns = append(out.campaigns, cb)
			}
		case "frequency_cap":
			fb, d := decodeFrequencyCapBlock(b)
			diags = append(diags, d...)
			out.freqCaps = append(out.freqCaps, fb)
		case "backend":
			bb, d := decodeBackendBlock(b)
			diags = append(diags, d...)
			out.backends = append(out.backends, bb)
		case "moved":
			mb, d := decodeMovedBlock(b)
			diags = append(diags, d...)
			if mb != nil {
				out.moved = append(out.moved, mb)
			}
		case "notification", "badge":
			mb, d := decodeMessageBlock(b, "")
			diags = append(diags, d...)
			if mb != nil {
				out.messages = append(out.messages, mb)
			}
		}
	}
	return out, diags
}
