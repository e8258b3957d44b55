package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"pushform/state"
	"pushform/state/local"
)

// proc is a pushform process started in a workspace whose stdout is read
// line by line as it comes.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	lines  chan string // stdout lines; closed at EOF
	stderr *lockedBuffer
	start  time.Time
	stdout *lockedBuffer
	done   chan struct{}
	err    error // of Wait, set before done closes
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startProc starts pushform with args in w's directory and environment.
func (w *workspace) startProc(args ...string) *proc {
	w.t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = w.dir
	cmd.Env = w.env
	p := &proc{t: w.t, cmd: cmd, lines: make(chan string, 1024), stderr: &lockedBuffer{}, stdout: &lockedBuffer{}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		w.t.Fatal(err)
	}
	p.start = time.Now()
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	var readDone sync.WaitGroup
	readDone.Add(1)
	go func() {
		defer readDone.Done()
		defer close(p.lines)
		r := bufio.NewReader(out)
		for {
			line, err := r.ReadString('\n')
			if line != "" {
				p.stdout.Write([]byte(line))
				select {
				case p.lines <- strings.TrimRight(line, "\n"):
				default: // nobody reads: keep the text only
				}
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		readDone.Wait()
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p
}

// kill sends SIGKILL (or sig) and waits; killed reports whether the signal
// ended the process (false: it had already exited by itself).
func (p *proc) kill(sig syscall.Signal) (killed bool) {
	p.cmd.Process.Signal(sig)
	<-p.done
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return ws.Signal() == sig
		}
	}
	return false
}

// wait waits for the process to exit by itself, at most d, and returns its
// exit code.
func (p *proc) wait(d time.Duration) int {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(d):
		p.cmd.Process.Kill()
		<-p.done
		p.t.Fatalf("%v did not exit within %s\nstdout:\n%s\nstderr:\n%s", p.cmd.Args, d, p.stdout, p.stderr)
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ExitCode()
	}
	if p.err != nil {
		p.t.Fatal(p.err)
	}
	return 0
}

// waitLine waits for a stdout line containing substr, at most d; false at
// EOF or timeout.
func (p *proc) waitLine(substr string, d time.Duration) (string, bool) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				return "", false
			}
			if strings.Contains(line, substr) {
				return line, true
			}
		case <-timer.C:
			return "", false
		}
	}
}

// readState reads the workspace's state as pushform does: the snapshot with
// the journal replayed over it.
func (w *workspace) readState() *state.State {
	w.t.Helper()
	if w.pg != nil {
		return w.pg.read(w.t)
	}
	s, err := local.NewFile(filepath.Join(w.dir, "pushform.state")).Read()
	if err != nil {
		w.t.Fatalf("reading the state: %v", err)
	}
	if s == nil {
		w.t.Fatal("no state")
	}
	return s
}

// devices fetches the sandbox views of ids, a few requests at a time.
func (s *sandbox) devices(ids []string) map[string]deviceView {
	s.t.Helper()
	out := make(map[string]deviceView, len(ids))
	var mu sync.Mutex
	work := make(chan string)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}, Timeout: 10 * time.Second}
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range work {
				v, err := getDevice(client, s.root, id)
				if err != nil {
					select {
					case errs <- err:
					default:
					}
					continue
				}
				mu.Lock()
				out[id] = v
				mu.Unlock()
			}
		}()
	}
	for _, id := range ids {
		work <- id
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		s.t.Fatal(err)
	default:
	}
	return out
}

func getDevice(c *http.Client, root, id string) (deviceView, error) {
	var v deviceView
	resp, err := c.Get(root + "/_sandbox/devices/" + id)
	if err != nil {
		return v, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		return v, fmt.Errorf("GET device %s: %d %s", id, resp.StatusCode, b)
	}
	return v, json.NewDecoder(resp.Body).Decode(&v)
}

// jsonEvents decodes apply --json output.
func jsonEvents(t *testing.T, out string) []map[string]any {
	t.Helper()
	var evs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var e map[string]any
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("apply --json line %q: %v", line, err)
		}
		evs = append(evs, e)
	}
	return evs
}
