package config

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// dataSource is a data "recipients" block: it has no arguments, and stands
// for the user ids of GET /push-notifications/recipients.
type dataSource struct {
	name string
	decl hcl.Range
}

// decodeDataBlock decodes a data block; nil when it cannot be used.
func decodeDataBlock(b *hcl.Block) (*dataSource, hcl.Diagnostics) {
	if b.Labels[0] != "recipients" {
		return nil, hcl.Diagnostics{errDiag("Unsupported data source",
			fmt.Sprintf("There is no data source %q; the only one is \"recipients\" (GET /push-notifications/recipients).", b.Labels[0]),
			b.LabelRanges[0].Ptr())}
	}
	if !hclsyntax.ValidIdentifier(b.Labels[1]) {
		return nil, hcl.Diagnostics{invalidName("data source", b.Labels[1], b.LabelRanges[1])}
	}
	_, diags := b.Body.Content(&hcl.BodySchema{})
	return &dataSource{name: b.Labels[1], decl: b.DefRange}, diags
}
