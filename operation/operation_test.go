package operation

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"pushform/backend"
	"pushform/config"
	"pushform/executor"
	"pushform/internal/testutil"
	"pushform/planner"
	"pushform/pushapi"
	"pushform/sandbox"
	"pushform/views"
)

const opSeed = `api_key "k-test" { environment = "test" }
user "ann" {
  device "ann-phone" { environment = "test" }
}
user "ben" {
  device "ben-phone" { environment = "test" }
}
user "zed" {
  device "zed-phone" { environment = "test" }
}
`

// options are an operation's options for the configuration in dir, with
// the API key the seed accepts and no command line.
func options(op, dir string) Options {
	getenv := func(k string) string {
		if k == "PF_KEY" {
			return "k-test"
		}
		return ""
	}
	return Options{
		Operation: op, Dir: dir, Getenv: getenv, Refresh: true,
		Service: backend.ServiceOptions{Getenv: getenv, RequestTimeout: pushapi.DefaultTimeout, RecipientsTimeout: pushapi.DefaultRecipientsTimeout},
		Planner: planner.Options{MaxUnknownResends: planner.DefaultMaxUnknownResends},
	}
}

func openRun(t *testing.T, o Options) *Run {
	t.Helper()
	r, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	})
	return r
}

// TestPlanAndApply drives plan and apply in-process against a sandbox,
// without the command line: streamed (no confirmation, a bare reference
// to the list), confirmed (the whole list first), and resolved (an
// expression reads the list: the second evaluation). After the apply the
// plan has no changes, and the devices received what the plan said.
func TestPlanAndApply(t *testing.T) {
	for _, tt := range []struct {
		name    string
		targets string
		confirm bool
		streams bool // Run.Stream offers a stream (Apply takes it without Confirm)
		want    []string
	}{
		{"streamed", "data.recipients.all.user_ids", false, true, []string{"ann-phone", "ben-phone", "zed-phone"}},
		{"confirmed", "data.recipients.all.user_ids", true, true, []string{"ann-phone", "ben-phone", "zed-phone"}},
		{"resolved", `[for u in data.recipients.all.user_ids : u if u != "zed"]`, false, false, []string{"ann-phone", "ben-phone"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base, srv := testutil.StartSandbox(t, opSeed, sandbox.Options{})
			dir := testutil.WriteFiles(t, map[string]string{"main.hcl": testutil.ServiceAt(base) +
				"data \"recipients\" \"all\" {}\nnotification \"hello\" {\n  user_ids = " + tt.targets + "\n  title = \"Hi\"\n  body = \"B\"\n}\n"})
			ctx := context.Background()

			pr := openRun(t, options("plan", dir))
			p, err := pr.Plan(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !p.HasChanges() || len(p.Changes) != 1 || p.Changes[0].Address != "notification.hello" {
				t.Fatalf("plan: %+v, want one change to notification.hello", p.Changes)
			}
			if err := pr.Close(); err != nil {
				t.Fatal(err)
			}
			if got := srv.ReceivedDevices(); len(got) != 0 {
				t.Fatalf("plan sent to %v", got)
			}

			ar := openRun(t, options("apply", dir))
			var stdout, stderr bytes.Buffer
			asked := false
			ao := ApplyOptions{
				View:     views.NewApply(views.JSON, &views.View{Stdout: &stdout, Stderr: &stderr}),
				Executor: executor.Options{Parallelism: 2, MaxAttempts: 1, BaseDelay: executor.DefaultBaseDelay, MaxDelay: executor.DefaultMaxDelay, MaxRetryAfter: executor.DefaultMaxRetryAfter},
			}
			if tt.confirm {
				ao.Confirm = func() (bool, error) { asked = true; return true, nil }
			}
			if s := ar.Stream() != nil; s != tt.streams {
				t.Errorf("Stream() != nil is %v, want %v", s, tt.streams)
			}
			res, err := ar.Apply(ctx, ao)
			if err != nil {
				t.Fatal(err)
			}
			if asked != tt.confirm {
				t.Errorf("asked for confirmation: %v, want %v", asked, tt.confirm)
			}
			if res.Plan == nil || !res.Sent || res.Err != nil || res.PersistErr != nil {
				t.Fatalf("apply result %+v", res)
			}
			if res.Result.Counts.Delivered != len(tt.want) {
				t.Errorf("delivered %d, want %d", res.Result.Counts.Delivered, len(tt.want))
			}
			if got := srv.ReceivedDevices(); !slices.Equal(got, tt.want) {
				t.Errorf("devices that received: %v, want %v", got, tt.want)
			}
			if !bytes.Contains(stdout.Bytes(), []byte(`"notification.hello"`)) {
				t.Errorf("the view showed nothing about notification.hello:\n%s", stdout.String())
			}
			if err := ar.Close(); err != nil {
				t.Fatal(err)
			}

			again := openRun(t, options("plan", dir))
			p, err = again.Plan(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if p.HasChanges() {
				t.Errorf("plan after apply has changes: %+v", p.Changes)
			}
		})
	}
}

// TestApplyDeclined: a confirmation refused sends nothing and says why.
func TestApplyDeclined(t *testing.T) {
	base, srv := testutil.StartSandbox(t, opSeed, sandbox.Options{})
	dir := testutil.WriteFiles(t, map[string]string{"main.hcl": testutil.ServiceAt(base) +
		"notification \"hello\" {\n  user_ids = [\"ann\"]\n  title = \"Hi\"\n  body = \"B\"\n}\n"})
	r := openRun(t, options("apply", dir))
	no := errors.New("declined")
	var out bytes.Buffer
	_, err := r.Apply(context.Background(), ApplyOptions{
		View:    views.NewApply(views.Human, &views.View{Stdout: &out, Stderr: &out}),
		Confirm: func() (bool, error) { return false, no },
	})
	if !errors.Is(err, no) {
		t.Errorf("Apply = %v, want the confirmation's error", err)
	}
	if got := srv.ReceivedDevices(); len(got) != 0 {
		t.Errorf("a declined apply sent to %v", got)
	}
}

// TestOpenReportsDiagnostics: an invalid configuration is shown through
// Options.Diagnostics, with the loader that holds its sources, and Open
// returns ErrReported; nothing is locked or sent.
func TestOpenReportsDiagnostics(t *testing.T) {
	dir := testutil.WriteFiles(t, map[string]string{"main.hcl": testutil.ServiceTest + "notification \"x\" {\n  title = \n}\n"})
	o := options("plan", dir)
	var shown int
	o.Diagnostics = func(l *config.Loader, diags hcl.Diagnostics) error {
		if l == nil || !diags.HasErrors() {
			t.Errorf("diagnostics without a loader or errors")
		}
		shown++
		return nil
	}
	if _, err := Open(context.Background(), o); !errors.Is(err, ErrReported) {
		t.Errorf("Open = %v, want ErrReported", err)
	}
	if shown != 1 {
		t.Errorf("diagnostics shown %d times, want 1", shown)
	}
}

// TestTestSend: a test send reaches only the targets given, is recorded
// in the ledger, and leaves the plan as it was: apply still sends.
func TestTestSend(t *testing.T) {
	base, srv := testutil.StartSandbox(t, opSeed, sandbox.Options{})
	dir := testutil.WriteFiles(t, map[string]string{"main.hcl": testutil.ServiceAt(base) +
		"notification \"hello\" {\n  user_ids = [\"ann\", \"ben\"]\n  title = \"Hi\"\n  body = \"B\"\n}\n"})
	ctx := context.Background()
	r := openRun(t, options("test-send", dir))
	msg, res, err := r.TestSend(ctx, TestSendOptions{Address: "notification.hello", Devices: []string{"zed-phone"}})
	if err != nil {
		t.Fatal(err)
	}
	if msg.Address != "notification.hello" || len(res.Targets) != 1 || res.Targets[0].ID != "zed-phone" || res.RequestID == "" {
		t.Errorf("test send of %s: %+v", msg.Address, res)
	}
	if got := srv.ReceivedDevices(); !slices.Equal(got, []string{"zed-phone"}) {
		t.Errorf("devices that received: %v, want [zed-phone]", got)
	}
	if _, _, err := r.TestSend(ctx, TestSendOptions{Address: "notification.nope", Devices: []string{"zed-phone"}}); err == nil {
		t.Error("a test send of an address the configuration lacks succeeded")
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	p, err := openRun(t, options("plan", dir)).Plan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !p.HasChanges() {
		t.Error("no changes after a test send: it counted as a delivery")
	}
}
