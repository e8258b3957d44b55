package config

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

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
		{Type: "time_zones"},
		{Type: "quiet_hours"},
		{Type: "user_data"},
		{Type: "device_data"},
		{Type: "locales"},
		{Type: "policy", LabelNames: []string{"name"}},
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
	local     []*hcl.Block // time_zones and quiet_hours
	persons   []*hcl.Block // user_data, device_data and locales
	policies  []*policyBlock
	body      *hclsyntax.Body
}

// decodeFile splits a file's body into its blocks and decodes each. Every
// problem is reported; a block that cannot be used is left out.
func decodeFile(f *hcl.File) (*file, hcl.Diagnostics) {
	out := &file{}
	out.body, _ = f.Body.(*hclsyntax.Body)
	content, diags := f.Body.Content(rootSchema)
	for _, b := range content.Blocks {
		switch b.Type {
		case "service":
			keep(&out.services, &diags)(decodeAttrBlock(b, serviceSchema))
		case "variable":
			keep(&out.variables, &diags)(decodeVariableBlock(b))
		case "locals":
			attrs, d := decodeLocalsBlock(b)
			diags = append(diags, d...)
			out.locals = append(out.locals, attrs...)
		case "data":
			keep(&out.data, &diags)(decodeDataBlock(b))
		case "topic":
			keep(&out.topics, &diags)(decodeTopicBlock(b))
		case "campaign":
			keep(&out.campaigns, &diags)(decodeCampaignBlock(b))
		case "frequency_cap":
			keep(&out.freqCaps, &diags)(decodeAttrBlock(b, frequencyCapSchema))
		case "backend":
			keep(&out.backends, &diags)(decodeBackendBlock(b))
		case "moved":
			keep(&out.moved, &diags)(decodeMovedBlock(b))
		case "time_zones", "quiet_hours":
			out.local = append(out.local, b)
		case "user_data", "device_data", "locales":
			out.persons = append(out.persons, b)
		case "policy":
			keep(&out.policies, &diags)(decodePolicyBlock(b))
		case "notification", "badge":
			keep(&out.messages, &diags)(decodeMessageBlock(b, ""))
		}
	}
	return out, diags
}

// keep returns what takes a decodeXBlock's results: the diagnostics go to
// diags, the block (unless nil: unusable) to list.
func keep[T any](list *[]*T, diags *hcl.Diagnostics) func(*T, hcl.Diagnostics) {
	return func(v *T, d hcl.Diagnostics) {
		*diags = append(*diags, d...)
		if v != nil {
			*list = append(*list, v)
		}
	}
}
