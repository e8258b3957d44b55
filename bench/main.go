// Command bench measures pushform at scale against the figures of issue 7
// and prints them as a table: figure, goal, measured, ratio.
//
//	go run ./bench              # the full run: a million users (a few minutes)
//	go run ./bench -scale 0.1   # a tenth of every size, for a quick look
//
// It builds the pushform binary and runs both the sandbox and every
// pushform command as separate processes, as a user would: the sandbox
// then has its own heap and scheduler (it must not be the bottleneck), and
// each command's wall time, peak memory (max RSS) and disk writes come from
// the operating system's accounting of that process alone.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"pushform/config"
	"pushform/planner"
	"pushform/state"
	"pushform/state/local"
)

// Goals of issue 7.
const (
	goalThroughputShare = 0.90    // of the service-latency bound
	goalPlanTime        = 1.5     // seconds, no-op plan over 1M targets
	goalPlanRSS         = 1 << 30 // bytes
	goalPlanGrowth      = 11.0    // 1M vs 100k plan time
	goalPackedRequests  = 20      // for 10,000 one-user notifications
	goalStateBytes      = 64.0    // per target, on disk
	goalWriteAmp        = 3.0     // bytes written during apply / final state
	batchLimit          = planner.DefaultBatchLimit
	apiKey              = "k-bench"
	keyEnv              = "PUSHFORM_API_KEY"
	packedNotifications = 10_000
)

type options struct {
	scale       float64
	latency     time.Duration
	parallelism int
	runs        int
	seqRequests int
	keep        string
	verbose     bool
	pgURL       string // the PostgreSQL server for the pg rows; "" skips them
}

func main() {
	var o options
	flag.Float64Var(&o.scale, "scale", 1, "fraction of the issue's sizes to run (1 = a million users)")
	flag.DurationVar(&o.latency, "latency", 50*time.Millisecond, "sandbox --latency")
	flag.IntVar(&o.parallelism, "parallelism", 10, "apply --parallelism")
	flag.IntVar(&o.runs, "runs", 3, "repetitions of each plan measurement")
	flag.IntVar(&o.seqRequests, "seq-requests", 40, "requests the sequential sender sends (its rate does not depend on the campaign size)")
	flag.StringVar(&o.keep, "keep", "", "work in `DIR` and keep it (default: a temporary directory, removed)")
	flag.BoolVar(&o.verbose, "v", false, "log every command run")
	flag.StringVar(&o.pgURL, "pg", os.Getenv(pgURLEnv), "postgres:// `URL` of a server for the PostgreSQL backend rows (default $"+pgURLEnv+"; none: skipped)")
	flag.Parse()
	if o.scale <= 0 || o.scale > 10 || o.runs < 1 || o.parallelism < 1 || o.latency <= 0 || o.seqRequests < 1 {
		fmt.Fprintln(os.Stderr, "bench: -scale must be in (0, 10], -runs, -parallelism and -seq-requests at least 1, -latency positive")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	loadBefore := loadAverage()
	rows, err := run(ctx, o)
	if len(rows) > 0 {
		fmt.Printf("\npushform benchmarks, %s, scale %g, latency %s, parallelism %d, load average %s before, %s after\n\n",
			time.Now().Format("2006-01-02"), o.scale, o.latency, o.parallelism, loadBefore, loadAverage())
		WriteTable(os.Stdout, rows)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// loadAverage is the one-minute load average, which says how noisy the
// figures are: the machine may be shared.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Fields(string(data) + " unknown")[0]
}

type bench struct {
	o    options
	dir  string
	bin  string
	base string // the sandbox's base URL
	n    int    // users, and targets of the big campaign
	log  io.Writer
}

func run(ctx context.Context, o options) ([]Row, error) {
	b := &bench{o: o, n: int(1_000_000*o.scale + 0.5), log: os.Stderr}
	if b.n < 10*batchLimit {
		return nil, fmt.Errorf("-scale %g gives %d users; use at least %g", o.scale, b.n, float64(10*batchLimit)/1e6)
	}
	if o.keep != "" {
		b.dir = o.keep
		if err := os.MkdirAll(b.dir, 0o755); err != nil {
			return nil, err
		}
	} else {
		dir, err := os.MkdirTemp("", "pushform-bench-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		b.dir = dir
	}
	b.logf("building pushform into %s", b.dir)
	b.bin = filepath.Join(b.dir, "pushform")
	build := exec.CommandContext(ctx, "go", "build", "-o", b.bin, ".")
	build.Dir = moduleRoot()
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		return nil, fmt.Errorf("building pushform: %w", err)
	}
	stopSandbox, err := b.startSandbox(ctx)
	if err != nil {
		return nil, err
	}
	defer stopSandbox()

	var rows []Row
	steps := []func(context.Context) ([]Row, error){b.apply, b.plans, b.packing, b.pgApply}
	for _, step := range steps {
		r, err := step(ctx)
		rows = append(rows, r...)
		if err != nil {
			return rows, err
		}
	}
	return rows, nil
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.log, "bench: "+format+"\n", args...)
}

// moduleRoot is the directory of go.mod, so the bench runs from anywhere
// inside the module.
func moduleRoot() string {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil || len(bytes.TrimSpace(out)) == 0 {
		return "."
	}
	return filepath.Dir(string(bytes.TrimSpace(out)))
}

// startSandbox runs `pushform sandbox` seeded with a user_range of b.n
// users and waits for its address.
func (b *bench) startSandbox(ctx context.Context) (stop func(), err error) {
	seed := fmt.Sprintf(`api_key %q { environment = "test" }
user_range "u%%07d" {
  count       = %d
  device      = "d%%07d"
  environment = "test"
}
`, apiKey, b.n)
	seedPath := filepath.Join(b.dir, "sandbox.hcl")
	if err := os.WriteFile(seedPath, []byte(seed), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(b.bin, "sandbox", "--addr", "127.0.0.1:0", "--seed", seedPath, "--latency", b.o.latency.String(), "--quiet")
	var sbErr bytes.Buffer // shown only if it fails to start
	cmd.Stderr = &sbErr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the sandbox: %w", err)
	}
	stop = func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		stop()
		return nil, fmt.Errorf("the sandbox did not start: %w\n%s", err, sbErr.String())
	}
	base, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if !ok {
		stop()
		return nil, fmt.Errorf("unexpected sandbox output %q", line)
	}
	go io.Copy(io.Discard, out)
	b.base = base
	b.logf("sandbox with %s users at %s, started in %s", group(int64(b.n)), base, time.Since(start).Round(time.Millisecond))
	return stop, nil
}

// runResult is what one pushform process did.
type runResult struct {
	code   int
	start  time.Time
	wall   time.Duration
	maxRSS int64 // bytes
	disk   int64 // bytes the process caused to be written to storage
	stdout []byte
	stderr []byte
}

// pushform runs the binary in dir; each stdout line is passed to onLine
// (when set) as it arrives.
func (b *bench) pushform(ctx context.Context, dir string, onLine func([]byte), args ...string) (*runResult, error) {
	if b.o.verbose {
		b.logf("pushform %s (in %s)", strings.Join(args, " "), filepath.Base(dir))
	}
	cmd := exec.CommandContext(ctx, b.bin, append([]string{"--chdir", dir, "--no-color"}, args...)...)
	cmd.Env = append(os.Environ(), keyEnv+"="+apiKey, pgConnEnv+"="+b.o.pgURL)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	var stdout bytes.Buffer
	sc := bufio.NewScanner(pipe)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if onLine != nil {
			onLine(sc.Bytes())
		}
		stdout.Write(sc.Bytes())
		stdout.WriteByte('\n')
	}
	werr := cmd.Wait()
	r := &runResult{start: start, wall: time.Since(start), stdout: stdout.Bytes(), stderr: stderr.Bytes()}
	var exit *exec.ExitError
	switch {
	case werr == nil:
	case errors.As(werr, &exit):
		r.code = exit.ExitCode()
	default:
		return nil, werr
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.maxRSS = ru.Maxrss * 1024 // kilobytes on Linux
		r.disk = ru.Oublock * 512
	}
	return r, nil
}

func (r *runResult) check(want int, what string) error {
	if r.code != want {
		return fmt.Errorf("%s exited %d (want %d):\n%s%s", what, r.code, want, tail(r.stdout), tail(r.stderr))
	}
	return nil
}

func tail(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// campaign writes a configuration directory holding the big campaign.
func (b *bench) campaign(name, notifications string) (string, error) {
	dir := filepath.Join(b.dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	src := fmt.Sprintf(`service {
  base_url    = %q
  api_key_env = %q
  environment = "test"
}

data "recipients" "all" {}
%s`, b.base, keyEnv, notifications)
	return dir, os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(src), 0o644)
}

// The big campaign's content; syntheticState records it as delivered.
var announce = config.Content{Title: "Launch", Body: "It is here", Tag: "launch-2026"}

const announceHCL = `
notification "announce" {
  user_ids = data.recipients.all.user_ids
  title    = "Launch"
  body     = "It is here"
  tag      = "launch-2026"
}
`

// apply sends the big campaign with --parallelism and a short one with
// --parallelism 1, and measures throughput and the state's size and
// writes.
func (b *bench) apply(ctx context.Context) ([]Row, error) {
	dir, err := b.campaign("apply", announceHCL)
	if err != nil {
		return nil, err
	}
	statePath := filepath.Join(dir, "pushform.state")
	w := watchJournal(statePath)
	b.logf("apply: %s targets, --parallelism %d", group(int64(b.n)), b.o.parallelism)
	var ev eventTimes
	r, err := b.pushform(ctx, dir, ev.line, "apply", "--auto-approve", "--json", "--parallelism", fmt.Sprint(b.o.parallelism))
	w.stop()
	if err != nil {
		return nil, err
	}
	if err := r.check(0, "apply"); err != nil {
		return nil, err
	}
	sum, err := applySummary(r.stdout)
	if err != nil {
		return nil, err
	}
	if sum.Counts.Delivered != b.n {
		return nil, fmt.Errorf("apply delivered %d of %d targets", sum.Counts.Delivered, b.n)
	}
	sendTime := ev.last.Sub(ev.first)
	par := float64(b.n) / sendTime.Seconds()
	bound := float64(b.o.parallelism*batchLimit) / b.o.latency.Seconds()

	// The sequential sender: the same pushform, one request at a time, over
	// the first users (its rate does not depend on the campaign size).
	seqN := min(b.o.seqRequests*batchLimit, b.n)
	seqDir, err := b.campaign("sequential", `
notification "sequential" {
  user_ids = jsondecode(file("ids.json"))
  title    = "One at a time"
  body     = "Sequential sender"
  tag      = "sequential"
}
`)
	if err != nil {
		return nil, err
	}
	if err := writeIDs(filepath.Join(seqDir, "ids.json"), seqN); err != nil {
		return nil, err
	}
	b.logf("sequential: %s targets, --parallelism 1", group(int64(seqN)))
	var sev eventTimes
	sr, err := b.pushform(ctx, seqDir, sev.line, "apply", "--auto-approve", "--json", "--parallelism", "1")
	if err != nil {
		return nil, err
	}
	if err := sr.check(0, "sequential apply"); err != nil {
		return nil, err
	}
	seq := float64(seqN) / sev.last.Sub(sev.first).Seconds()

	fi, err := os.Stat(statePath)
	if err != nil {
		return nil, err
	}
	stateSize := fi.Size()
	written := w.initial + w.journalSize() + stateSize
	perTarget := float64(stateSize) / float64(b.n)
	return []Row{
		atLeast(fmt.Sprintf("apply throughput, %s targets, --parallelism %d (send phase)", group(int64(b.n)), b.o.parallelism),
			fmt.Sprintf(">= %.0f%% of %s", goalThroughputShare*100, rate(bound)),
			fmt.Sprintf("%s = %.0f%% of the bound (%s for %s requests)", rate(par), 100*par/bound, secs(sendTime), group(int64(ev.responses))),
			par, goalThroughputShare*bound),
		info("whole apply command (config, recipients, plan, send, final snapshot)",
			fmt.Sprintf("%s wall, %s max RSS", secs(r.wall), mib(r.maxRSS)), fmt.Sprintf("%s end to end", rate(float64(b.n)/r.wall.Seconds()))),
		info("sequential sender (--parallelism 1)", fmt.Sprintf("%s (%s targets)", rate(seq), group(int64(seqN))),
			fmt.Sprintf("parallel/sequential %.1fx", par/seq)),
		atMost("state on disk per target (after the apply)", fmt.Sprintf("<= %.0f bytes", goalStateBytes),
			fmt.Sprintf("%.1f bytes (%s)", perTarget, mib(stateSize)), perTarget, goalStateBytes),
		atMost("bytes written during the apply / final state", fmt.Sprintf("<= %.0fx", goalWriteAmp),
			fmt.Sprintf("%s (journal %s + snapshots %s)", mib(written), mib(w.journalSize()), mib(w.initial+stateSize)),
			float64(written)/float64(stateSize), goalWriteAmp),
		info("  same, as the kernel counts page writes (rusage)", mib(r.disk), fmt.Sprintf("%.1fx final state", float64(r.disk)/float64(stateSize))),
	}, nil
}

// eventTimes timestamps apply --json events as they arrive: the send phase
// runs from the first request event to the last response.
type eventTimes struct {
	first, last time.Time
	responses   int
}

func (e *eventTimes) line(l []byte) {
	switch {
	case bytes.HasPrefix(l, []byte(`{"type":"request"`)):
		if e.first.IsZero() {
			e.first = time.Now()
		}
	case bytes.HasPrefix(l, []byte(`{"type":"response"`)):
		e.last = time.Now()
		e.responses++
	}
}

type summary struct {
	Type   string `json:"type"`
	Counts struct {
		Delivered int `json:"delivered"`
		Failed    int `json:"failed"`
		Unknown   int `json:"unknown"`
	} `json:"counts"`
	Seconds float64 `json:"seconds"`
}

func applySummary(out []byte) (*summary, error) {
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	var s summary
	if err := json.Unmarshal(lines[len(lines)-1], &s); err != nil || s.Type != "summary" {
		return nil, fmt.Errorf("apply printed no summary: %s", tail(out))
	}
	return &s, nil
}

// journalWatch keeps a hard link to the journal apply writes, so its full
// size is known after the final snapshot has removed it.
type journalWatch struct {
	done    chan struct{}
	stopped chan struct{}
	keep    string
	initial int64 // size of the snapshot when the journal appeared
}

func watchJournal(statePath string) *journalWatch {
	w := &journalWatch{done: make(chan struct{}), stopped: make(chan struct{}), keep: statePath + ".journal.kept"}
	os.Remove(w.keep)
	go func() {
		defer close(w.stopped)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			if err := os.Link(statePath+".journal", w.keep); err == nil {
				if fi, err := os.Stat(statePath); err == nil {
					w.initial = fi.Size()
				}
				return
			}
			select {
			case <-w.done:
				return
			case <-t.C:
			}
		}
	}()
	return w
}

func (w *journalWatch) stop() {
	close(w.done)
	<-w.stopped
}

func (w *journalWatch) journalSize() int64 {
	fi, err := os.Stat(w.keep)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// writeIDs writes the first n user ids as a JSON array.
func writeIDs(path string, n int) error {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = userID(i)
	}
	data, err := json.Marshal(ids)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

func userID(i int) string { return fmt.Sprintf("u%07d", i) }

// plans measures no-op plans over states of n and n/10 delivered targets,
// made the same way, and the plan after the real apply.
func (b *bench) plans(ctx context.Context) ([]Row, error) {
	big, bigRSS, err := b.noopPlan(ctx, b.n)
	if err != nil {
		return nil, err
	}
	small, _, err := b.noopPlan(ctx, b.n/10)
	if err != nil {
		return nil, err
	}
	growth := median(sortedCopy(big)) / median(sortedCopy(small))
	rss := sortedCopy(bigRSS)
	peak := rss[len(rss)-1]

	// The state the real apply left, planned with and without fetching
	// the recipients again.
	dir := filepath.Join(b.dir, "apply")
	var after, refreshed []float64
	for range b.o.runs {
		r, err := b.pushform(ctx, dir, nil, "plan", "--refresh=false", "--detailed-exitcode")
		if err != nil {
			return nil, err
		}
		if err := r.check(0, "no-op plan after the apply"); err != nil {
			return nil, err
		}
		after = append(after, r.wall.Seconds())
		r, err = b.pushform(ctx, dir, nil, "plan", "--detailed-exitcode")
		if err != nil {
			return nil, err
		}
		if err := r.check(0, "refreshed no-op plan after the apply"); err != nil {
			return nil, err
		}
		refreshed = append(refreshed, r.wall.Seconds())
	}
	s := func(x float64) string { return fmt.Sprintf("%.2f s", x) }
	return []Row{
		atMost(fmt.Sprintf("no-op plan, %s delivered targets (--refresh=false)", group(int64(b.n))), fmt.Sprintf("<= %.1f s", goalPlanTime),
			spread(big, s), median(sortedCopy(big)), goalPlanTime),
		atMost("  its peak memory (max RSS)", "<= 1 GiB", mib(int64(peak)), peak, goalPlanRSS),
		atMost(fmt.Sprintf("no-op plan time, %s vs %s targets", group(int64(b.n)), group(int64(b.n/10))), fmt.Sprintf("<= %.0fx", goalPlanGrowth),
			fmt.Sprintf("%.1fx (%s: %s)", growth, group(int64(b.n/10)), spread(small, s)), growth, goalPlanGrowth),
		info("no-op plan over the applied state (--refresh=false)", spread(after, s), ""),
		info("  same, fetching the recipients from the sandbox", spread(refreshed, s), ""),
	}, nil
}

// noopPlan writes a state of n targets delivered with the big campaign's
// content and a configuration that wants exactly that, then times plan.
func (b *bench) noopPlan(ctx context.Context, n int) (times, rss []float64, err error) {
	dir, err := b.campaign(fmt.Sprintf("plan-%d", n), announceHCL)
	if err != nil {
		return nil, nil, err
	}
	if err := local.NewFile(filepath.Join(dir, "pushform.state")).Persist(syntheticState(n)); err != nil {
		return nil, nil, err
	}
	b.logf("no-op plan over %s targets, %d runs", group(int64(n)), b.o.runs)
	for range b.o.runs {
		r, err := b.pushform(ctx, dir, nil, "plan", "--refresh=false", "--detailed-exitcode")
		if err != nil {
			return nil, nil, err
		}
		if err := r.check(0, "no-op plan"); err != nil {
			return nil, nil, err
		}
		times = append(times, r.wall.Seconds())
		rss = append(rss, float64(r.maxRSS))
	}
	return times, rss, nil
}

// syntheticState is what applying the big campaign to n users records:
// every target delivered, in requests of 500 with their ids and times.
func syntheticState(n int) *state.State {
	s := state.New("test")
	t0 := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = userID(i)
	}
	s.Recipients = &state.Snapshot{FetchedAt: t0, UserIDs: ids}
	content := announce
	fp := planner.Fingerprint(config.KindNotification, content)
	m := &state.Message{Address: "notification.announce", Kind: config.KindNotification, TargetKind: config.TargetUsers,
		Fingerprint: fp, Content: content, Targets: make(map[string]*state.Target, n)}
	for i, id := range ids {
		batch := i / batchLimit
		m.Targets[id] = &state.Target{Outcome: state.Delivered, Fingerprint: fp, DeviceCount: 1,
			RequestID: fmt.Sprintf("req-%016x", batch), Time: t0.Add(time.Duration(batch) * 5 * time.Millisecond)}
	}
	s.Messages[m.Address] = m
	return s
}

// packing plans 10,000 one-user notifications and counts the requests.
func (b *bench) packing(ctx context.Context) ([]Row, error) {
	dir, err := b.campaign("packing", `
notification "order" {
  for_each = toset(jsondecode(file("ids.json")))
  user_ids = [each.key]
  title    = "Order ${each.key} shipped"
  body     = "It arrives tomorrow"
  tag      = "order-${each.key}"
}
`)
	if err != nil {
		return nil, err
	}
	if err := writeIDs(filepath.Join(dir, "ids.json"), packedNotifications); err != nil {
		return nil, err
	}
	b.logf("packing: plan of %s one-user notifications", group(packedNotifications))
	r, err := b.pushform(ctx, dir, nil, "plan", "--json")
	if err != nil {
		return nil, err
	}
	if err := r.check(0, "packing plan"); err != nil {
		return nil, err
	}
	var p struct {
		Summary planner.Summary `json:"summary"`
	}
	if err := json.Unmarshal(r.stdout, &p); err != nil {
		return nil, fmt.Errorf("packing plan: %w", err)
	}
	if p.Summary.Targets != packedNotifications {
		return nil, fmt.Errorf("packing plan sends to %d targets, want %d", p.Summary.Targets, packedNotifications)
	}
	return []Row{
		atMost(fmt.Sprintf("packing: %s one-user notifications", group(packedNotifications)), fmt.Sprintf("<= %d requests", goalPackedRequests),
			fmt.Sprintf("%d requests (plan %s)", p.Summary.Requests, secs(r.wall)), float64(p.Summary.Requests), goalPackedRequests),
	}, nil
}
