package operation

import (
	"context"

	"pushform/planner"
)

// FetchInto streams the recipients list into s and finishes its plan (see
// Run.Stream); a failure stops the stream. Command's streamed apply calls
// it until apply moves here.
func (r *Run) FetchInto(ctx context.Context, s *planner.Stream) { r.fetchInto(ctx, s) }
