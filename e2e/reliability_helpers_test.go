package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"pushform/state"
	"pushform/state/local"
	"pushform/state/statefile"
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

// lockedBuffer collects a process's output and signals every write, so a
// test can wait for a line instead of sleeping.
type lockedBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{} // one pending signal after a write
}

func newLockedBuffer() *lockedBuffer { return &lockedBuffer{changed: make(chan struct{}, 1)} }

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.b.Write(p)
	select {
	case l.changed <- struct{}{}:
	default:
	}
	return n, err
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startProc starts pushform with args in w's directory and environment.
func (w *workspace) startProc(args ...string) *proc {
	w.t.Helper()
	return w.startProcEnv(nil, args...)
}

// startProcEnv is startProc with env added to w's environment.
func (w *workspace) startProcEnv(env []string, args ...string) *proc {
	w.t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = w.dir
	cmd.Env = append(append([]string{}, w.env...), env...)
	p := &proc{t: w.t, cmd: cmd, lines: make(chan string, 1024), stderr: newLockedBuffer(), stdout: newLockedBuffer(), done: make(chan struct{})}
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

// exited reports whether the process has exited.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// waitPause waits until the process stops at the phase local.PauseEnv
// named, or exits (it had nothing to do there); d guards against a hang.
func (p *proc) waitPause(d time.Duration) {
	p.t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for !strings.Contains(p.stderr.String(), "pushform-test: paused at ") {
		select {
		case <-p.stderr.changed:
		case <-p.done:
			return
		case <-timer.C:
			p.cmd.Process.Kill()
			<-p.done
			p.t.Fatalf("%v neither paused nor exited within %s\nstdout:\n%s\nstderr:\n%s", p.cmd.Args, d, p.stdout, p.stderr)
		}
	}
}

// waitStderr waits until stderr contains substr. It fails the test when
// the process exits without writing it, or after d (a guard against a
// hang, not a bound on how fast the process is).
func (p *proc) waitStderr(substr string, d time.Duration) {
	p.t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		if strings.Contains(p.stderr.String(), substr) {
			return
		}
		select {
		case <-p.stderr.changed:
		case <-p.done:
			if strings.Contains(p.stderr.String(), substr) {
				return
			}
			p.t.Fatalf("%v exited without writing %q to stderr\nstdout:\n%s\nstderr:\n%s", p.cmd.Args, substr, p.stdout, p.stderr)
		case <-timer.C:
			p.cmd.Process.Kill()
			<-p.done
			p.t.Fatalf("%v did not write %q to stderr within %s\nstdout:\n%s\nstderr:\n%s", p.cmd.Args, substr, d, p.stdout, p.stderr)
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
	path := filepath.Join(w.dir, "pushform.state")
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		// A configuration with its own backend block (an example): ask
		// pushform for the state in the local file format.
		r := w.mustRun(0, "state", "pull")
		s, err := statefile.Decode(strings.NewReader(r.stdout))
		if err != nil {
			w.t.Fatalf("decoding state pull: %v", err)
		}
		return s
	}
	s, err := local.NewFile(path).Read()
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

// gate is a proxy on loopback between pushform and the sandbox. It turns
// the progress of send requests into events a test waits for, instead of
// latencies it races against: it reports each send as it arrives, can hold
// sends until the test releases them, and can refuse chosen sends itself
// with a 503 (chosen by body, so whatever order they arrive in). Held sends are forwarded even when pushform has died
// meanwhile, as a request already on the wire would be processed.
type gate struct {
	*httptest.Server
	t  *testing.T
	up string // the sandbox root

	mu      sync.Mutex
	n       int                    // sends seen
	hold    bool                   // hold new sends until release closes
	release chan struct{}          // closed: held sends go on
	refuse  func(body []byte) bool // answer this send 503 itself
	log     []*gateSend            // sends since the last reset
	pending int                    // sends not yet done with
	idle    *sync.Cond             // on mu: signalled when pending drops to 0
	arrived chan int               // the number of each send as it arrives
	// splitList, when set, is taken by the next recipients answer: the
	// gate passes on its first half, then the rest once splitList is
	// closed (releaseList), so sends can be seen while the list arrives.
	splitList chan struct{}
	listCut   bool          // the split answer is cut after its first half (cutList)
	closed    chan struct{} // the test is over: held sends give up
}

// gateSend is one send request that reached the gate.
type gateSend struct {
	N        int
	Body     []byte
	Answered bool // the answer was handed back to pushform
}

func startGate(t *testing.T, sb *sandbox) *gate {
	t.Helper()
	g := &gate{t: t, up: sb.root, release: make(chan struct{}), arrived: make(chan int, 1<<16), closed: make(chan struct{})}
	// Every field is set before the server starts: the race detector does
	// not see the hand-off of the URL through a socket.
	g.idle = sync.NewCond(&g.mu)
	g.Server = httptest.NewUnstartedServer(g)
	g.Start()
	t.Cleanup(g.Close)
	t.Cleanup(func() { close(g.closed) }) // runs first: unblocks held sends
	return g
}

// base is a sandbox value pointing pushform at the gate.
func (g *gate) base() *sandbox { return &sandbox{t: g.t, base: g.URL + "/v1", root: g.URL} }

// holdSends makes the gate hold every new send until releaseSends.
func (g *gate) holdSends() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.hold = true
	g.release = make(chan struct{})
}

// releaseSends lets held sends go on and stops holding new ones.
func (g *gate) releaseSends() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.hold {
		g.hold = false
		close(g.release)
	}
}

// splitNextList makes the gate pass on the next recipients answer in two
// halves, the second only at releaseList.
func (g *gate) splitNextList() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.splitList = make(chan struct{})
}

// releaseList lets the rest of a split recipients answer go, and stops
// splitting the next one.
func (g *gate) releaseList() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.splitList != nil {
		close(g.splitList)
		g.splitList = nil
	}
}

// cutList ends a split recipients answer after its first half: the
// connection is closed, as a server or proxy that fails mid-answer does.
func (g *gate) cutList() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.splitList != nil {
		g.listCut = true
		close(g.splitList)
		g.splitList = nil
	}
}

// settle waits until every send that reached the gate has been answered by
// the sandbox (and the answer passed on, or dropped when pushform is gone).
// A counter under mu rather than a WaitGroup: sends arrive through a
// socket, which the race detector does not see as synchronizing them with
// an earlier Wait.
func (g *gate) settle() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for g.pending > 0 {
		g.idle.Wait()
	}
}

// waitArrivals waits for n more sends to arrive; d guards against a hang.
func (g *gate) waitArrivals(n int, d time.Duration) {
	g.t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for range n {
		select {
		case <-g.arrived:
		case <-timer.C:
			g.t.Fatalf("fewer than %d send requests reached the gate within %s", n, d)
		}
	}
}

// reset returns the sends seen since the last reset, as they are now, and
// forgets them and their arrivals.
func (g *gate) reset() []gateSend {
	g.mu.Lock()
	defer g.mu.Unlock()
	// Copies, taken under mu: a handler still running may mark its send
	// answered later.
	log := make([]gateSend, len(g.log))
	for i, s := range g.log {
		log[i] = *s
	}
	g.log = nil
	for len(g.arrived) > 0 {
		<-g.arrived
	}
	return log
}

// answered counts the sends since the last reset whose answer reached pushform.
func (g *gate) answered() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, s := range g.log {
		if s.Answered {
			n++
		}
	}
	return n
}

var gateClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return // pushform went away mid-request: the service never got it whole
	}
	var s *gateSend
	if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/push-notifications/send") {
		g.mu.Lock()
		g.pending++
		defer func() {
			g.mu.Lock()
			g.pending--
			if g.pending == 0 {
				g.idle.Broadcast()
			}
			g.mu.Unlock()
		}()
		g.n++
		s = &gateSend{N: g.n, Body: body}
		g.log = append(g.log, s)
		refuse := g.refuse != nil && g.refuse(body)
		hold, release := g.hold, g.release
		g.mu.Unlock()
		g.arrived <- s.N
		if refuse {
			w.Header().Set("x-request-id", fmt.Sprintf("req-gate-%d", s.N))
			w.Header().Set("Retry-After", "1")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable) // a 429 would be a wait, not a try
			io.WriteString(w, `{"message":"refused by the test gate"}`)
			g.markAnswered(s, w)
			return
		}
		if hold {
			select {
			case <-release:
			case <-g.closed:
				return
			}
		}
	}
	// Forwarded whatever happens to pushform meanwhile: once sent, a
	// request is the service's to process.
	req, err := http.NewRequestWithContext(context.WithoutCancel(r.Context()), r.Method, g.up+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		g.t.Error(err)
		return
	}
	req.Header = r.Header.Clone()
	resp, err := gateClient.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/recipients") {
		g.mu.Lock()
		split := g.splitList
		g.mu.Unlock()
		if split != nil {
			half := len(out) / 2
			if _, err := w.Write(out[:half]); err != nil {
				return
			}
			if err := http.NewResponseController(w).Flush(); err != nil {
				return
			}
			select {
			case <-split:
			case <-g.closed:
				return
			}
			g.mu.Lock()
			cut := g.listCut
			g.listCut = false
			g.mu.Unlock()
			if cut {
				panic(http.ErrAbortHandler) // the connection is closed mid-answer
			}
			out = out[half:]
		}
	}
	if _, err := w.Write(out); err != nil {
		return
	}
	if s != nil {
		g.markAnswered(s, w)
	}
}

// markAnswered flushes the answer to pushform and records that it went.
func (g *gate) markAnswered(s *gateSend, w http.ResponseWriter) {
	if err := http.NewResponseController(w).Flush(); err != nil {
		return
	}
	g.mu.Lock()
	s.Answered = true
	g.mu.Unlock()
}
