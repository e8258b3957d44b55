package config

import "github.com/hashicorp/hcl/v2"

// The schemas are constant: package-level values, as in Terraform's configs.

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
	},
}

var serviceSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "base_url"},
		{Name: "api_key_env"},
		{Name: "environment"},
		{Name: "sandbox"},
		// Accepted only to explain why a key does not belong here.
		{Name: "api_key"},
	},
}

var variableSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "type"},
		{Name: "default"},
		{Name: "description"},
		{Name: "sensitive"},
	},
}

var topicSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "description"}},
}

var campaignSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "description"}},
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "notification", LabelNames: []string{"name"}},
		{Type: "badge", LabelNames: []string{"name"}},
	},
}

// messageSchema serves both notification and badge blocks, so that a title
// in a badge block gets a diagnostic that says why, not just "unsupported".
var messageSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "for_each"},
		{Name: "user_ids"},
		{Name: "device_ids"},
		{Name: "topics"},
		{Name: "title"},
		{Name: "body"},
		{Name: "open_to_url"},
		{Name: "badge_count"},
		{Name: "silent_in_foreground"},
		{Name: "tag"},
		{Name: "send_after"},
	},
}

// targetAttrs are the target attributes in the order they are reported.
var targetAttrs = []TargetKind{TargetUsers, TargetDevices, TargetTopics}

// badgeForbidden are the message attributes a badge block must not set.
var badgeForbidden = []string{"title", "body", "open_to_url", "tag", "silent_in_foreground"}
