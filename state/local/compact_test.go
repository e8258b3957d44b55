package local_test

import (
	"bytes"
	"testing"

	"pushform/state"
	"pushform/state/local"
	"pushform/state/statefile"
	"pushform/state/statetest"
)

// compactFile reads through ReadCompact, checks it gives what Read gives,
// and hands the tests a state with maps, which they index.
type compactFile struct {
	*local.File
	t *testing.T
}

func (c compactFile) Read() (*state.State, error) {
	cs, err := c.File.ReadCompact()
	ms, merr := c.File.Read()
	if (err == nil) != (merr == nil) {
		c.t.Fatalf("ReadCompact: %v; Read: %v", err, merr)
	}
	if err != nil || cs == nil {
		if (cs == nil) != (ms == nil) {
			c.t.Fatalf("ReadCompact gave %v, Read %v", cs, ms)
		}
		return cs, err
	}
	if !cs.Compact {
		c.t.Fatal("ReadCompact gave a state that is not compact")
	}
	var a, b bytes.Buffer
	if err := statefile.Encode(&a, cs); err != nil {
		c.t.Fatal(err)
	}
	if err := statefile.Encode(&b, ms); err != nil {
		c.t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		c.t.Fatal("ReadCompact and Read disagree")
	}
	for _, m := range cs.Messages {
		targets := make(map[string]*state.Target, m.TargetCount())
		for id, t := range m.AllTargets() {
			targets[id] = t
		}
		*m = state.Message{Address: m.Address, Kind: m.Kind, TargetKind: m.TargetKind, Fingerprint: m.Fingerprint,
			Content: m.Content, EarlierTags: m.EarlierTags, Targets: targets}
	}
	cs.Compact = false
	return cs, nil
}

// TestFileManagerCompact runs the backend's tests reading compact states.
func TestFileManagerCompact(t *testing.T) {
	statetest.TestManager(t, func(t *testing.T) state.Manager { return compactFile{newFile(t), t} })
}
