package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSlowLorisTimesOut: a service that trickles its answer a byte at a
// time is given up on after --request-timeout, with the request id, and
// the targets are left unknown (held, being untagged), never delivered.
func TestSlowLorisTimesOut(t *testing.T) {
	h := startHostile(t)
	w := newWorkspace(t, h.base(), `
notification "n" {
  user_ids = ["alice", "bob"]
  title    = "T"
  body     = "B"
}
`)
	h.setMode("trickle")
	start := time.Now()
	r := w.mustRun(1, "apply", "--auto-approve", "--request-timeout", "1s")
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("apply took %s against a trickling service", took)
	}
	for _, want := range []string{"request id req-[redacted]", "deadline exceeded", "may have been processed"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if !strings.Contains(r.stdout, "2 unknown") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	for id, tg := range w.readState().Messages["notification.n"].Targets {
		if tg.Outcome != "unknown" {
			t.Errorf("%s: %s, want unknown", id, tg.Outcome)
		}
	}
	p := w.planJSON()
	if _, tg := p.action("notification.n"); tg["held"] != 2 || p.Summary["requests"] != 0 {
		t.Errorf("plan after the timeout: %v %v", tg, p.Summary)
	}
}

// TestHostileConfigurations: files no one should feed pushform give
// diagnostics through validate, plan and apply, never a crash or a hang.
func TestHostileConfigurations(t *testing.T) {
	sb := startSandbox(t, seed)
	nested := strings.Repeat("[", 5000) + strings.Repeat("]", 5000)
	bigList := func(n int) string {
		var b strings.Builder
		b.WriteString(`notification "big" {
  title = "T"
  body  = "B"
  user_ids = [`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`"u`)
			b.WriteString(itoa(i))
			b.WriteByte('"')
		}
		b.WriteString("]\n}\n")
		return b.String()
	}
	tests := []struct {
		name, file, content string
		want                []string
	}{
		{"oversized", "big.hcl", "# " + strings.Repeat("x", 33<<20) + "\n", []string{"big.hcl is larger than 32 MiB"}},
		{"binary", "bin.hcl", "\x7fELF\x02\x01\x01\x00\x00\x00\x00" + strings.Repeat("\x00\xff", 1000), []string{"NUL byte", "bin.hcl"}},
		{"deep nesting", "deep.hcl", "locals {\n  x = " + nested + "\n}\n", []string{"nested too deeply", "deep.hcl"}},
		{"deep object nesting", "deepobj.hcl", "locals {\n  x = " + strings.Repeat("{a=", 5000) + "1" + strings.Repeat("}", 5000) + "\n}\n", []string{"nested too deeply"}},
		{"invalid UTF-8", "utf.hcl", "notification \"n\" {\n  title = \"\xff\xfe\"\n  body = \"b\"\n  user_ids = [\"alice\"]\n}\n", []string{"utf.hcl"}},
		{"unterminated", "open.hcl", "notification \"n\" {\n  title = \"T\n", []string{"open.hcl"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorkspace(t, sb, "")
			if err := os.WriteFile(filepath.Join(w.dir, tt.file), []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			cmds := [][]string{{"validate"}, {"plan"}, {"apply", "--auto-approve"}}
			if tt.name == "oversized" {
				cmds = cmds[:1] // reading 33 MiB three times proves nothing more
			}
			for _, args := range cmds {
				start := time.Now()
				r := w.mustRun(1, args...)
				if took := time.Since(start); took > 20*time.Second {
					t.Errorf("%v took %s", args, took)
				}
				if strings.Contains(r.stderr, "panic") || strings.Contains(r.stderr, "goroutine ") {
					t.Fatalf("%v crashed:\n%.3000s", args, r.stderr)
				}
				for _, want := range tt.want {
					if !strings.Contains(r.stderr, want) {
						t.Errorf("%v: stderr lacks %q:\n%.2000s", args, want, r.stderr)
					}
				}
				if len(r.stderr) > 64<<10 {
					t.Errorf("%v: %d bytes of diagnostics", args, len(r.stderr))
				}
			}
			if sb.stats().SendRequests != 0 {
				t.Fatal("something was sent")
			}
		})
	}
	// A huge list is not an error: it validates and plans in requests of 500.
	t.Run("huge list", func(t *testing.T) {
		w := newWorkspace(t, sb, bigList(50000))
		start := time.Now()
		w.mustRun(0, "validate")
		p := w.planJSON()
		if p.Summary["targets"] != 50000 || p.Summary["requests"] != 100 {
			t.Errorf("summary %v", p.Summary)
		}
		if took := time.Since(start); took > 30*time.Second {
			t.Errorf("took %s", took)
		}
	})
}
