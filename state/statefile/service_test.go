package statefile

import (
	"bytes"
	"testing"

	"pushform/state"
)

// TestServiceInHeader: the service a state's deliveries went to is in the
// snapshot's header from format 6 on, under the checksum, and read back;
// a format-5 snapshot (written before it) reads with none.
func TestServiceInHeader(t *testing.T) {
	for name, rec := range map[string]*state.ServiceRecord{
		"sandbox":  {Kind: state.KindSandbox},
		"base_url": {Kind: state.KindBaseURL, Host: "push.example.com"},
	} {
		t.Run(name, func(t *testing.T) {
			s := fidelityState()
			s.Service = rec
			data := encodeStateBytes(t, s)
			back, err := Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if !back.Service.Same(rec) {
				t.Fatalf("service read back as %+v, want %+v", back.Service, rec)
			}
			edited := bytes.Replace(data, []byte(`"kind":"`+string(rec.Kind)+`"`), []byte(`"kind":"other"`), 1)
			if bytes.Equal(edited, data) {
				t.Fatalf("no service in the header %q", data[:bytes.IndexByte(data, '\n')])
			}
			if _, err := Decode(bytes.NewReader(edited)); err == nil {
				t.Fatal("an edited service was read: it is not under the checksum")
			}
		})
	}
	s := fidelityState()
	s.Service = &state.ServiceRecord{Kind: state.KindSandbox}
	var buf bytes.Buffer
	if err := encode(&buf, s, 5); err != nil {
		t.Fatal(err)
	}
	back, err := Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if back.Service != nil || back.Version != 5 {
		t.Fatalf("format 5 read as version %d with service %+v, want none", back.Version, back.Service)
	}
}
