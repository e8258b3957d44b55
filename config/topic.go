package config

import "github.com/hashicorp/hcl/v2"

var topicSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "description"}},
}

// topicBlock is a decoded topic block. Its description is a literal, so
// the Topic is known as soon as it is decoded.
type topicBlock struct {
	topic Topic
	decl  hcl.Range
}

// decodeTopicBlock decodes a topic block; nil when its name is invalid.
func decodeTopicBlock(b *hcl.Block) (*topicBlock, hcl.Diagnostics) {
	diags := checkLabel(b, "topic")
	if diags.HasErrors() {
		return nil, diags
	}
	tb := &topicBlock{topic: Topic{Name: b.Labels[0], Pos: posOf(b.DefRange)}, decl: b.DefRange}
	t := &tb.topic
	content, d := b.Body.Content(topicSchema)
	diags = append(diags, d...)
	if a, ok := content.Attributes["description"]; ok {
		s, set, d := literalString(a)
		diags = append(diags, d...)
		if set {
			t.Description = s
		}
	}
	return tb, diags
}
