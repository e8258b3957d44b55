package command

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"pushform/internal/testutil"
	"pushform/sandbox"
)

const sandboxCmdSeed = `api_key "k-test" { environment = "test" }
device "kiosk-1" { environment = "test" }
user "alice" {
  device "alice-phone" {
    environment = "test"
    online      = false
  }
}
`

// sandboxOutput is a bytes.Buffer safe for a command writing while the test
// reads.
type sandboxOutput struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *sandboxOutput) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *sandboxOutput) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func runSandboxCmd(t *testing.T, dir string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb sandboxOutput
	code = Run(context.Background(), args, Env{Stdout: &out, Stderr: &errb, Dir: dir})
	return code, out.String(), errb.String()
}

func TestSandboxCommand(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "sandbox.hcl"), []byte(sandboxCmdSeed), 0o600)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var stderr sandboxOutput
	exit := make(chan int, 1)
	go func() {
		exit <- Run(ctx, []string{"sandbox", "--chdir", dir, "--seed", "sandbox.hcl", "--addr", "127.0.0.1:0", "--latency", "1ms"},
			Env{Stdout: pw, Stderr: &stderr, Dir: "/"})
		pw.Close()
	}()
	rd := bufio.NewReader(pr)
	line, err := rd.ReadString('\n')
	if err != nil {
		t.Fatalf("no line: %v; stderr %s", err, stderr.String())
	}
	m := regexp.MustCompile(`^listening on (http://127\.0\.0\.1:\d+/v1)\n$`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("line %q", line)
	}
	base := m[1]
	req, _ := http.NewRequest("POST", base+"/push-notifications/send",
		strings.NewReader(`[{"deviceIds":["kiosk-1","alice-phone"],"title":"Spring sale","body":"Everything 20% off","tag":"sale","badgeCount":2}]`))
	req.Header.Set("x-api-key", "k-test")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("x-request-id") == "" {
		t.Fatalf("send: %d", resp.StatusCode)
	}

	for _, addr := range []string{base, strings.TrimSuffix(strings.TrimPrefix(base, "http://"), "/v1")} {
		code, out, errOut := runSandboxCmd(t, dir, "sandbox", "show", "kiosk-1", "--addr", addr)
		if code != 0 {
			t.Fatalf("show: %d %s", code, errOut)
		}
		for _, want := range []string{"kiosk-1", "Badge", "2", "Received", "Spring sale", "sale", "req-"} {
			if !strings.Contains(out, want) {
				t.Errorf("show output lacks %q:\n%s", want, out)
			}
		}
	}
	code, out, _ := runSandboxCmd(t, dir, "sandbox", "show", "alice-phone", "--addr", base)
	if code != 0 || !strings.Contains(out, "offline") || !strings.Contains(out, "Pending until the device comes online (1, oldest first)") ||
		!regexp.MustCompile(`User\s+alice`).MatchString(out) {
		t.Errorf("show alice-phone:\n%s", out)
	}
	code, out, _ = runSandboxCmd(t, dir, "sandbox", "show", "kiosk-1", "--addr", base, "--json")
	if code != 0 || !strings.Contains(out, `"received":1`) || !strings.HasPrefix(out, `{"format_version":"1",`) || strings.Count(out, "\n") != 1 {
		t.Errorf("show --json: %s", out)
	}
	if code, _, errOut := runSandboxCmd(t, dir, "sandbox", "show", "nope", "--addr", base); code != 1 || !strings.Contains(errOut, "unknown device") {
		t.Errorf("show of an unknown device: %d %s", code, errOut)
	}

	cancel()
	select {
	case code := <-exit:
		if code != 0 {
			t.Errorf("exit %d: %s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the sandbox did not stop")
	}
	rest, _ := io.ReadAll(rd)
	if len(rest) != 0 {
		t.Errorf("more on stdout: %q", rest)
	}
	if !strings.Contains(stderr.String(), "POST /v1/push-notifications/send 200") {
		t.Errorf("stderr lacks the request log:\n%s", stderr.String())
	}
	if strings.Contains(stderr.String(), "k-test") {
		t.Errorf("stderr shows a key:\n%s", stderr.String())
	}
}

func TestSandboxCommandErrors(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "sandbox.hcl"), []byte(sandboxCmdSeed), 0o600)
	os.WriteFile(filepath.Join(dir, "bad.hcl"), []byte("device \"d\" {\n  environment = \"staging\"\n}\n"), 0o600)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no seed", []string{"sandbox"}, "--seed FILE is required"},
		{"missing seed", []string{"sandbox", "--seed", "none.hcl"}, "cannot read the sandbox seed"},
		{"bad seed", []string{"sandbox", "--seed", "bad.hcl"}, "on bad.hcl line 2"},
		{"bad shape", []string{"sandbox", "--seed", "sandbox.hcl", "--recipients-shape", "list"}, "array or object"},
		{"bad issues shape", []string{"sandbox", "--seed", "sandbox.hcl", "--issues-shape", "json"}, "path, index, pointer, pointer-detail or message"},
		{"bad topic results", []string{"sandbox", "--seed", "sandbox.hcl", "--topic-results", "each"}, "echo or per-topic"},
		{"bad paging", []string{"sandbox", "--seed", "sandbox.hcl", "--recipients-paging", "pages"}, "cursor, link, links-next, header, has-more, offset, page or total-only"},
		{"bad recipients fault", []string{"sandbox", "--seed", "sandbox.hcl", "--recipients-fault", "500@2"}, "STATUS[xTIMES]@PAGE with STATUS 429 or 503"},
		{"bad recipients fault times", []string{"sandbox", "--seed", "sandbox.hcl", "--recipients-fault", "503x0@2"}, "STATUS[xTIMES]@PAGE"},
		{"bad results order", []string{"sandbox", "--seed", "sandbox.hcl", "--results-order", "sorted"}, "request, reverse or shuffle"},
		{"bad ok body", []string{"sandbox", "--seed", "sandbox.hcl", "--ok-body", "none"}, "full, empty, object or results"},
		{"bad since format", []string{"sandbox", "--seed", "sandbox.hcl", "--since-format", "unix"}, "rfc3339, epoch-s, epoch-ms, pg, space-z or words"},
		{"bad body bound", []string{"sandbox", "--seed", "sandbox.hcl", "--max-body-bytes", "-1"}, "--max-body-bytes must not be negative"},
		{"bad too large answer", []string{"sandbox", "--seed", "sandbox.hcl", "--too-large-answer", "500"}, "413 or 400"},
		{"bad send fault", []string{"sandbox", "--seed", "sandbox.hcl", "--send-fault", "429x5,500"}, `429 or 503, comma-separated (e.g. 429x5,503x2), not "500"`},
		{"bad count format", []string{"sandbox", "--seed", "sandbox.hcl", "--device-count-format", "roman"}, "number or words"},
		{"bad max length answer", []string{"sandbox", "--seed", "sandbox.hcl", "--max-length-answer", "413"}, "400 or 207"},

		{"bad rate", []string{"sandbox", "--seed", "sandbox.hcl", "--fail-rate", "1.5"}, "between 0 and 1"},
		{"rates over 1", []string{"sandbox", "--seed", "sandbox.hcl", "--fail-rate", "0.6", "--drop-rate", "0.6"}, "more than 1"},
		{"not loopback", []string{"sandbox", "--seed", "sandbox.hcl", "--addr", "0.0.0.0:0"}, "loopback only"},
		{"extra argument", []string{"sandbox", "--seed", "sandbox.hcl", "extra"}, "unexpected argument"},
		{"show without id", []string{"sandbox", "show"}, "run 'pushform sandbox show -h' for usage"},
		{"show no file", []string{"sandbox", "show", "kiosk-1"}, "no sandbox devices file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runSandboxCmd(t, dir, tc.args...)
			if code != ExitError || out != "" || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant %q", code, out, errOut, tc.want)
			}
		})
	}
	if code, out, _ := runSandboxCmd(t, dir, "sandbox", "--help"); code != 0 || !strings.Contains(out, "--fault-seed") {
		t.Errorf("--help: %d %s", code, out)
	}
}

func TestSandboxShowFile(t *testing.T) {
	dir := t.TempDir()
	base, s := testutil.StartSandbox(t, sandboxCmdSeed, sandbox.Options{})
	req, _ := http.NewRequest("POST", base+"/push-notifications/send",
		strings.NewReader(`[{"deviceIds":["kiosk-1"],"title":"Order A-1001 shipped","body":"It arrives Tuesday","openToUrl":"https://shop.example.com/orders/A-1001"}]`))
	req.Header.Set("x-api-key", "k-test")
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatal(err)
	}
	if err := s.SaveDevices(filepath.Join(dir, sandbox.DefaultDevicesFile)); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runSandboxCmd(t, "/", "--chdir", dir, "sandbox", "show", "kiosk-1")
	if code != 0 {
		t.Fatalf("%d %s", code, errOut)
	}
	for _, want := range []string{`Device\s+kiosk-1`, `State\s+online, push token, permission granted`, `Received\s+1\n`,
		`Inbox \(1, oldest first\)`, `1\s+Order A-1001 shipped\s+It arrives Tuesday\s+-\s+-\s+https://shop.example.com/orders…\s+req-`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if code, _, errOut := runSandboxCmd(t, dir, "sandbox", "show", "alice-phone"); code != 1 || !strings.Contains(errOut, "received nothing yet") {
		t.Errorf("device not in the file: %d %s", code, errOut)
	}
	// After apply --state st/a.state the devices are beside that state.
	if err := os.MkdirAll(filepath.Join(dir, "st"), 0o700); err != nil {
		t.Fatal(err)
	}
	os.Rename(filepath.Join(dir, sandbox.DefaultDevicesFile), filepath.Join(dir, "st", sandbox.DefaultDevicesFile))
	if code, _, errOut := runSandboxCmd(t, dir, "sandbox", "show", "kiosk-1"); code != 1 || !strings.Contains(errOut, "sandbox show --state FILE") {
		t.Errorf("no devices file: %d %s", code, errOut)
	}
	if code, out, errOut := runSandboxCmd(t, dir, "sandbox", "show", "--state", "st/a.state", "kiosk-1"); code != 0 || !strings.Contains(out, "kiosk-1") {
		t.Errorf("--state: %d %s %s", code, out, errOut)
	}
	other := filepath.Join(t.TempDir(), "elsewhere.json")
	os.Rename(filepath.Join(dir, "st", sandbox.DefaultDevicesFile), other)
	if code, out, _ := runSandboxCmd(t, dir, "sandbox", "show", "--file", other, "kiosk-1", "--json"); code != 0 || !strings.Contains(out, `"deviceId":"kiosk-1"`) {
		t.Errorf("--file: %d %s", code, out)
	}
}
