// Command bench measures pushform at scale against the goals that
// docs/benchmarks.md states and prints them as a table: figure, goal,
// measured, ratio.
//
//	go run ./bench              # the full run: a million users (a few minutes)
//	go run ./bench -scale 0.1   # a tenth of every size, for a quick look
//	go run ./bench -scale 10    # ten million users (-targets 10000000 too)
//	go run ./bench -only apply,peer   # some steps only
//	go run ./bench -latency 0,5ms,20ms,50ms   # the latency sweep
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
	"slices"
	"strings"
	"time"

	"pushform/config"
	"pushform/planner"
)

// Goals of issues 7 and 15.
const (
	goalThroughputShare = 0.90    // send phase, of the service-latency bound
	goalWholeShare      = 0.90    // the whole apply command, of the same bound
	goalPeerShare       = 0.95    // send phase, of the bare Go sender's rate
	goalPlanTime        = 1.5     // seconds, no-op plan over 1M targets
	goalPlanTimeLarge   = 3.0     // seconds, no-op plan over 10M targets
	goalRSS             = 1 << 30 // bytes, apply and plan at any size
	goalPlanGrowth      = 11.0    // N vs N/10 plan time
	goalPackedRequests  = 20      // for 10,000 one-user notifications
	goalStateBytes      = 5.0     // per target, on disk
	goalWriteAmp        = 3.0     // bytes written during apply / final state
	goalForEachTime     = 3.0     // seconds, plan of a for_each over 100,000 CSV rows
	batchLimit          = planner.DefaultBatchLimit
	apiKey              = "k-bench"
	keyEnv              = "PUSHFORM_API_KEY"
	packedNotifications = 10_000
	forEachRows         = 100_000
	bigMapRows          = 500_000 // 13 MiB of CSV: file() reads at most 16 MiB
	peerWorkers         = 10
	peerMaxTargets      = 2_000_000
)

type options struct {
	scale       float64
	targets     int
	latency     time.Duration   // the sandbox's, for the steps
	latencies   []time.Duration // -latency: several make a sweep
	baseBin     string          // another pushform binary the sweep runs too
	parallelism int
	runs        int
	seqRequests int
	peerTargets int
	only        string
	keep        string
	verbose     bool
	pgURL       string // the PostgreSQL server for the pg rows; "" skips them
}

func main() {
	var o options
	flag.Float64Var(&o.scale, "scale", 1, "fraction of the issue's sizes to run (1 = a million users, 10 = ten million)")
	flag.IntVar(&o.targets, "targets", 0, "users of the big campaign `N` (default 1,000,000 x -scale); the other sizes follow -scale")
	flag.IntVar(&o.peerTargets, "peer-targets", 0, "targets the bare Go sender sends (default the big campaign's, at most 2,000,000: its rate does not depend on the size)")
	flag.StringVar(&o.only, "only", "", "run only these `STEPS`, comma-separated: "+strings.Join(stepNames, ","))
	latency := flag.String("latency", "50ms", "sandbox --latency; several, comma-separated (`0,5ms,20ms,50ms`), run the latency sweep instead of the steps")
	flag.StringVar(&o.baseBin, "base-bin", "", "in the sweep, also apply with this pushform `BINARY` (an older build), alternately with this one")
	flag.IntVar(&o.parallelism, "parallelism", 10, "apply --parallelism")
	flag.IntVar(&o.runs, "runs", 3, "repetitions of each plan measurement")
	flag.IntVar(&o.seqRequests, "seq-requests", 40, "requests the sequential sender sends (its rate does not depend on the campaign size)")
	flag.StringVar(&o.keep, "keep", "", "work in `DIR` and keep it (default: a temporary directory, removed)")
	flag.BoolVar(&o.verbose, "v", false, "log every command run")
	flag.StringVar(&o.pgURL, "pg", os.Getenv(pgURLEnv), "postgres:// `URL` of a server for the PostgreSQL backend rows (default $"+pgURLEnv+"; none: skipped)")
	flag.Parse()
	if spec := os.Getenv(peerChildEnv); spec != "" {
		os.Exit(runPeerChild(spec))
	}
	var err error
	if o.latencies, err = parseLatencies(*latency); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	o.latency = o.latencies[0]
	if o.sweeping() && o.only != "" && o.only != "sweep" {
		fmt.Fprintln(os.Stderr, "bench: the sweep (several -latency values or -only sweep) runs no other step")
		os.Exit(2)
	}
	if o.scale <= 0 || o.scale > 10 || o.runs < 1 || o.parallelism < 1 || (o.latency <= 0 && !o.sweeping()) || o.seqRequests < 1 || o.targets < 0 || o.targets > 10_000_000 || o.peerTargets < 0 {
		fmt.Fprintln(os.Stderr, "bench: -scale must be in (0, 10], -targets at most 10,000,000, -runs, -parallelism and -seq-requests at least 1, -latency positive (but in the sweep), -peer-targets not negative")
		os.Exit(2)
	}
	for _, name := range strings.Split(o.only, ",") {
		if name != "" && name != "sweep" && !slices.Contains(stepNames, name) {
			fmt.Fprintf(os.Stderr, "bench: unknown step %q in -only; the steps are %s\n", name, strings.Join(stepNames, ","))
			os.Exit(2)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	loadBefore := loadAverage()
	if o.sweeping() {
		rows, err := runSweep(ctx, o)
		if len(rows) > 0 {
			fmt.Printf("\npushform latency sweep, %s, %s targets, --parallelism %d, %d run(s) each (medians), load average %s before\n\n",
				time.Now().Format("2006-01-02"), group(int64(o.size())), o.parallelism, o.runs, loadBefore)
			WriteSweep(os.Stdout, rows)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	rows, err := run(ctx, o)
	if len(rows) > 0 {
		fmt.Printf("\npushform benchmarks, %s, %s users, scale %g, latency %s, parallelism %d, load average %s before, %s after\n\n",
			time.Now().Format("2006-01-02"), group(int64(o.size())), o.scale, o.latency, o.parallelism, loadBefore, loadAverage())
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

// sweeping reports whether the run is the latency sweep.
func (o options) sweeping() bool { return len(o.latencies) > 1 || o.only == "sweep" }

// size is the number of users, and targets of the big campaign.
func (o options) size() int {
	if o.targets > 0 {
		return o.targets
	}
	return int(1_000_000*o.scale + 0.5)
}

// scaled is n times -scale, at most n (the for_each sizes are the issue's
// at scale 1 and above).
func (o options) scaled(n int) int {
	return int(float64(n)*min(o.scale, 1) + 0.5)
}

type bench struct {
	o    options
	dir  string
	bin  string
	base string // the sandbox's base URL
	n    int    // users, and targets of the big campaign
	log  io.Writer
	// sandbox is the sandbox process, for its memory and CPU.
	sandbox *os.Process
	// sent is pushform's send phase in the apply step: its rate is what
	// the peer is compared with.
	sent *sendPhase
}

// sendPhase is a measured send phase.
type sendPhase struct {
	targets int
	took    time.Duration
}

func (p *sendPhase) rate() float64 { return float64(p.targets) / p.took.Seconds() }

// stepNames are the steps, in the order they run.
var stepNames = []string{"apply", "peer", "plans", "packing", "foreach", "personal", "pg", "sandbox"}

func (b *bench) steps() map[string]func(context.Context) ([]Row, error) {
	return map[string]func(context.Context) ([]Row, error){
		"apply": b.apply, "peer": b.peer, "plans": b.plans, "packing": b.packing, "foreach": b.forEach, "personal": b.personal, "pg": b.pgApply, "sandbox": b.sandboxRows,
	}
}

func run(ctx context.Context, o options) ([]Row, error) {
	b, cleanup, err := newBench(ctx, o)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	stopSandbox, err := b.startSandbox(ctx)
	if err != nil {
		return nil, err
	}
	defer stopSandbox()

	var rows []Row
	steps := b.steps()
	for _, name := range stepNames {
		if o.only != "" && !slices.Contains(strings.Split(o.only, ","), name) {
			continue
		}
		r, err := steps[name](ctx)
		rows = append(rows, r...)
		if err != nil {
			return rows, fmt.Errorf("%s: %w", name, err)
		}
	}
	return rows, nil
}

// runSweep runs the latency sweep (sweep.go).
func runSweep(ctx context.Context, o options) ([]sweepRow, error) {
	b, cleanup, err := newBench(ctx, o)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	return b.sweep(ctx)
}

// newBench makes the work directory and builds the binary into it;
// cleanup removes the directory unless -keep named it.
func newBench(ctx context.Context, o options) (b *bench, cleanup func(), err error) {
	b = &bench{o: o, n: o.size(), log: os.Stderr}
	cleanup = func() {}
	if b.n < 10*batchLimit {
		return nil, nil, fmt.Errorf("-scale %g gives %d users; use at least %g", o.scale, b.n, float64(10*batchLimit)/1e6)
	}
	if o.keep != "" {
		b.dir = o.keep
		if err := os.MkdirAll(b.dir, 0o755); err != nil {
			return nil, nil, err
		}
	} else {
		dir, err := os.MkdirTemp("", "pushform-bench-")
		if err != nil {
			return nil, nil, err
		}
		cleanup = func() { os.RemoveAll(dir) }
		b.dir = dir
	}
	b.logf("building pushform into %s", b.dir)
	b.bin = filepath.Join(b.dir, "pushform")
	build := exec.CommandContext(ctx, "go", "build", "-o", b.bin, ".")
	build.Dir = moduleRoot()
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("building pushform: %w", err)
	}
	return b, cleanup, nil
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
	b.sandbox = cmd.Process
	b.logf("sandbox with %s users at %s, started in %s", group(int64(b.n)), base, time.Since(start).Round(time.Millisecond))
	return stop, nil
}

// sandboxRows says what the sandbox process used over the whole run, from
// the kernel's accounting of it (/proc): peak memory and CPU time.
func (b *bench) sandboxRows(context.Context) ([]Row, error) {
	hwm, cpu, err := procUsage(b.sandbox.Pid)
	if err != nil {
		return nil, err
	}
	return []Row{info(fmt.Sprintf("sandbox process (%s users: seeding, recipients lists, every send above)", group(int64(b.n))),
		fmt.Sprintf("%s max RSS, %s CPU", mib(hwm), secs(cpu)), "not the limit: see What limits each figure")}, nil
}

// procUsage reads a running process's peak resident memory and its CPU
// time (user and system) so far.
func procUsage(pid int) (hwm int64, cpu time.Duration, err error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), &kb)
			hwm = kb * 1024
		}
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// Fields after the command name, which is in parentheses: utime and
	// stime are the 12th and 13th of them, in clock ticks (100 a second).
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(f) < 13 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	var ut, st int64
	fmt.Sscan(f[11], &ut)
	fmt.Sscan(f[12], &st)
	return hwm, time.Duration(ut+st) * 10 * time.Millisecond, nil
}

// runResult is what one pushform process did.
type runResult struct {
	code   int
	start  time.Time
	wall   time.Duration
	cpu    time.Duration // user and system time: what wall time is on a quiet machine
	maxRSS int64         // bytes
	disk   int64         // bytes the process caused to be written to storage
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
	r.maxRSS, r.disk = usage(cmd.ProcessState)
	r.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
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
	ev := eventTimes{start: time.Now()}
	r, err := b.applyEvery(ctx, dir, ev.line)
	w.stop()
	if err != nil {
		return nil, err
	}
	sendTime := ev.last.Sub(ev.first)
	par := float64(b.n) / sendTime.Seconds()
	bound := float64(b.o.parallelism*batchLimit) / b.o.latency.Seconds()
	b.sent = &sendPhase{targets: b.n, took: sendTime}
	// The latency bound of the whole command: its requests, parallelism at
	// a time, each taking the service's latency.
	requests := (b.n + batchLimit - 1) / batchLimit
	wholeBound := time.Duration((requests + b.o.parallelism - 1) / b.o.parallelism * int(b.o.latency))

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
	share := wholeBound.Seconds() / r.wall.Seconds()
	return []Row{
		atLeast(fmt.Sprintf("apply throughput, %s targets, --parallelism %d (send phase)", group(int64(b.n)), b.o.parallelism),
			fmt.Sprintf(">= %.0f%% of %s", goalThroughputShare*100, rate(bound)),
			fmt.Sprintf("%s = %.0f%% of the bound (%s for %s requests)", rate(par), 100*par/bound, secs(sendTime), group(int64(ev.responses))),
			par, goalThroughputShare*bound),
		atLeast("whole apply command (config, recipients fetched by it, plan, send, final snapshot)",
			fmt.Sprintf(">= %.2f of the latency bound (%s)", goalWholeShare, secs(wholeBound)),
			fmt.Sprintf("%s wall = %.2f of the bound; first request after %s; %s after the last response", secs(r.wall), share, secs(ev.first.Sub(ev.start)), secs(ev.end.Sub(ev.last))),
			share, goalWholeShare),
		atMost("  its peak memory (max RSS)", "<= 1 GiB", mib(r.maxRSS), float64(r.maxRSS), goalRSS),
		info("  its CPU time (user + system)", secs(r.cpu), fmt.Sprintf("%.0f%% of its wall time", 100*r.cpu.Seconds()/r.wall.Seconds())),
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
// runs from the first request event to the last response. start is set
// by the caller when it starts the process; end is the last line.
type eventTimes struct {
	start, end  time.Time
	first, last time.Time
	responses   int
}

func (e *eventTimes) line(l []byte) {
	now := time.Now()
	e.end = now
	switch {
	case bytes.HasPrefix(l, []byte(`{"type":"request"`)):
		if e.first.IsZero() {
			e.first = now
		}
	case bytes.HasPrefix(l, []byte(`{"type":"response"`)):
		e.last = now
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

// applyEvery runs `apply --auto-approve --json` over the campaign in dir
// and checks that it exits 0 having delivered every target.
func (b *bench) applyEvery(ctx context.Context, dir string, onLine func([]byte)) (*runResult, error) {
	r, err := b.pushform(ctx, dir, onLine, "apply", "--auto-approve", "--json", "--parallelism", fmt.Sprint(b.o.parallelism))
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
	return r, nil
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

// peer runs the bare Go sender (peer.go) against the same sandbox and
// compares pushform's send phase with it.
func (b *bench) peer(ctx context.Context) ([]Row, error) {
	n := b.o.peerTargets
	if n == 0 {
		n = min(b.n, peerMaxTargets)
	}
	n = min(n, b.n)
	b.logf("peer: a bare Go sender, %s targets, %d goroutines", group(int64(n)), peerWorkers)
	p, err := runPeer(ctx, b.base, apiKey, n, batchLimit, peerWorkers)
	if err != nil {
		return nil, err
	}
	pr := float64(p.targets) / p.took.Seconds()
	rows := []Row{info(fmt.Sprintf("bare Go sender (bench/peer.go: net/http, %d goroutines, requests of %d, nothing recorded)", peerWorkers, batchLimit),
		fmt.Sprintf("%s (%s targets in %s)", rate(pr), group(int64(p.targets)), secs(p.took)), "the floor a hand-written script reaches")}
	if b.sent != nil {
		rows = append(rows, atLeast("pushform's send phase / the bare Go sender's (same run, same sandbox)", fmt.Sprintf(">= %.2f", goalPeerShare),
			fmt.Sprintf("%s / %s = %.2f", rate(b.sent.rate()), rate(pr), b.sent.rate()/pr), b.sent.rate()/pr, goalPeerShare))
	}
	return rows, nil
}

// forEach plans a notification per row of a CSV file, with for_each
// written as a map and with toset, and a map of a million rows.
func (b *bench) forEach(ctx context.Context) ([]Row, error) {
	rows := b.o.scaled(forEachRows)
	forms := []struct{ name, hcl string }{
		{"a map ({ for o in ... : o.order_id => o })", `
locals {
  orders = { for o in csvdecode(file("orders.csv")) : o.order_id => o }
}
notification "order_shipped" {
  for_each = local.orders
  user_ids = [each.value.user_id]
  title    = "Order ${each.key} shipped"
  body     = "It arrives ${each.value.eta}."
  tag      = "order-${each.key}"
}
`},
		{"toset(...)", `
notification "order_shipped" {
  for_each = toset([for o in csvdecode(file("orders.csv")) : o.order_id])
  user_ids = ["u${substr(each.key, 2, 7)}"]
  title    = "Order ${each.key} shipped"
  body     = "It arrives soon."
  tag      = "order-${each.key}"
}
`},
	}
	s := func(x float64) string { return fmt.Sprintf("%.2f s", x) }
	var out []Row
	for i, f := range forms {
		dir, err := b.forEachDir(fmt.Sprintf("foreach-%d", i), f.hcl, rows)
		if err != nil {
			return out, err
		}
		b.logf("for_each over %s CSV rows, %s, %d runs", group(int64(rows)), f.name, b.o.runs)
		t, err := b.timePlans(ctx, dir, "for_each plan", "plan", "--refresh=false")
		if err != nil {
			return out, err
		}
		out = append(out, atMost(fmt.Sprintf("plan, for_each over %s CSV rows written as %s", group(int64(rows)), f.name),
			fmt.Sprintf("<= %.0f s", goalForEachTime), spread(t.wall, s)+", "+mib(int64(t.peak()))+" max RSS", median(sortedCopy(t.wall)), goalForEachTime))
	}
	big := b.o.scaled(bigMapRows)
	dir, err := b.forEachDir("foreach-big", forms[0].hcl, big)
	if err != nil {
		return out, err
	}
	b.logf("for_each over a map of %s rows", group(int64(big)))
	t, err := b.timePlans(ctx, dir, "for_each plan", "plan", "--refresh=false")
	if err != nil {
		return out, err
	}
	return append(out, info(fmt.Sprintf("plan, for_each over a map of %s CSV rows", group(int64(big))),
		fmt.Sprintf("%s, %s max RSS", spread(t.wall, s), mib(int64(t.peak()))), fmt.Sprintf("%s CPU", s(median(sortedCopy(t.cpu)))))), nil
}

// forEachDir writes a configuration of notifications with src and a CSV
// file of n orders, one per user.
func (b *bench) forEachDir(name, src string, n int) (string, error) {
	dir, err := b.campaign(name, src)
	if err != nil {
		return "", err
	}
	var csv bytes.Buffer
	csv.WriteString("order_id,user_id,eta\n")
	for i := range n {
		fmt.Fprintf(&csv, "A-%07d,%s,Tuesday\n", i, userID(i))
	}
	return dir, os.WriteFile(filepath.Join(dir, "orders.csv"), csv.Bytes(), 0o644)
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
