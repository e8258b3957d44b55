package operation

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"pushform/state/statefile"
)

// StatePull writes the backend's current state (the snapshot with its
// journal replayed) to w in the local file format: the bytes a
// pushform.state holds. It does not lock: it only reads, in one
// consistent read.
func StatePull(ctx context.Context, o Options, w io.Writer) error {
	be, err := o.openState(ctx)
	if err != nil {
		return err
	}
	defer be.Close()
	// Compact: ten million targets take a few hundred MiB, not gigabytes.
	s, err := readCompact(be)
	if err != nil {
		return err
	}
	if s == nil {
		return fmt.Errorf("no state in %s", be)
	}
	var buf bytes.Buffer
	if err := statefile.Encode(&buf, s); err != nil {
		return fmt.Errorf("encoding the state: %v", err)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("writing the state: %v", err)
	}
	return nil
}
