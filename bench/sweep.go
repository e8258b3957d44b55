package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The latency sweep: at each sandbox latency, the whole apply
// command and the bare Go sender (peer.go) send the big campaign against
// the same sandbox in the same run, alternately, each as a process of its
// own, so wall time and CPU time (rusage) are the kernel's accounting of
// that process alone. Wall-clock ratios taken this way are much less
// sensitive to a busy machine than absolute times; CPU per target is not
// sensitive to it at all.

// peerChildEnv makes the bench binary run as the bare Go sender: its value
// is "BASE_URL TARGETS"; the key is apiKey.
const peerChildEnv = "PUSHFORM_BENCH_PEER"

// runPeerChild is the bench binary run as the peer process.
func runPeerChild(spec string) int {
	base, n, ok := strings.Cut(spec, " ")
	targets, err := strconv.Atoi(n)
	if !ok || err != nil || targets < 1 {
		fmt.Fprintf(os.Stderr, "bench: %s=%q: want \"BASE_URL TARGETS\"\n", peerChildEnv, spec)
		return 2
	}
	if _, err := runPeer(context.Background(), base, apiKey, targets, batchLimit, peerWorkers); err != nil {
		fmt.Fprintln(os.Stderr, "bench: peer:", err)
		return 1
	}
	return 0
}

// parseLatencies parses -latency: durations separated by commas, where a
// bare 0 is zero.
func parseLatencies(s string) ([]time.Duration, error) {
	var out []time.Duration
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		d, err := time.ParseDuration(f)
		if err != nil {
			return nil, fmt.Errorf("-latency: %w", err)
		}
		if d < 0 {
			return nil, fmt.Errorf("-latency: %s is negative", f)
		}
		out = append(out, d)
	}
	if len(out) == 0 {
		return nil, errors.New("-latency: no latency given")
	}
	return out, nil
}

// sweepRow is what the sweep measured at one latency: medians over the
// runs of each contender.
type sweepRow struct {
	latency          time.Duration
	targets          int
	apply, peer      procRun
	base             *procRun // -base-bin's apply, when given
	load             string   // one-minute load average after the row
	applyMaxRSS      int64
	applyFirstReqSec float64
}

// procRun is a process's median wall and CPU time over the runs.
type procRun struct {
	wall, cpu time.Duration
}

func medianRun(walls, cpus []float64) procRun {
	return procRun{wall: time.Duration(median(sortedCopy(walls)) * float64(time.Second)),
		cpu: time.Duration(median(sortedCopy(cpus)) * float64(time.Second))}
}

// sweep runs the latency sweep: a sandbox per latency, then -runs rounds
// of pushform apply (and -base-bin's apply) and the peer, alternately.
func (b *bench) sweep(ctx context.Context) ([]sweepRow, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	var rows []sweepRow
	for _, lat := range b.o.latencies {
		b.o.latency = lat
		stop, err := b.startSandbox(ctx)
		if err != nil {
			return rows, err
		}
		row, err := b.sweepAt(ctx, self, lat)
		stop()
		if err != nil {
			return rows, fmt.Errorf("latency %s: %w", lat, err)
		}
		rows = append(rows, *row)
	}
	return rows, nil
}

func (b *bench) sweepAt(ctx context.Context, self string, lat time.Duration) (*sweepRow, error) {
	var aw, ac, pw, pc, bw, bc, rss []float64
	var first []float64
	for i := range b.o.runs {
		for _, bin := range b.contenders() {
			dir, err := b.campaign(fmt.Sprintf("sweep-%s-%d-%s", lat, i, filepath.Base(bin)), announceHCL)
			if err != nil {
				return nil, err
			}
			b.logf("sweep: latency %s, run %d: %s apply, %s targets", lat, i+1, filepath.Base(bin), group(int64(b.n)))
			ev := eventTimes{start: time.Now()}
			saved := b.bin
			b.bin = bin
			r, err := b.applyEvery(ctx, dir, ev.line)
			b.bin = saved
			if err != nil {
				return nil, err
			}
			if bin == b.bin {
				aw, ac = append(aw, r.wall.Seconds()), append(ac, r.cpu.Seconds())
				rss = append(rss, float64(r.maxRSS))
				first = append(first, ev.first.Sub(ev.start).Seconds())
			} else {
				bw, bc = append(bw, r.wall.Seconds()), append(bc, r.cpu.Seconds())
			}
			os.RemoveAll(dir) // the sandbox keeps what it received; the disk need not
		}
		b.logf("sweep: latency %s, run %d: the bare Go sender, %s targets", lat, i+1, group(int64(b.n)))
		wall, cpu, err := b.peerProcess(ctx, self)
		if err != nil {
			return nil, err
		}
		pw, pc = append(pw, wall.Seconds()), append(pc, cpu.Seconds())
	}
	row := &sweepRow{latency: lat, targets: b.n, apply: medianRun(aw, ac), peer: medianRun(pw, pc), load: loadAverage(),
		applyMaxRSS: int64(sortedCopy(rss)[len(rss)-1]), applyFirstReqSec: median(sortedCopy(first))}
	if len(bw) > 0 {
		base := medianRun(bw, bc)
		row.base = &base
	}
	return row, nil
}

// contenders are the pushform binaries the sweep runs: this one, then
// -base-bin's.
func (b *bench) contenders() []string {
	if b.o.baseBin == "" {
		return []string{b.bin}
	}
	return []string{b.bin, b.o.baseBin}
}

// peerProcess runs the bench binary as the bare Go sender (peerChildEnv)
// against the sandbox and returns the process's wall and CPU time.
func (b *bench) peerProcess(ctx context.Context, self string) (wall, cpu time.Duration, err error) {
	cmd := exec.CommandContext(ctx, self)
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %d", peerChildEnv, b.base, b.n))
	cmd.Stdout = io.Discard
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, 0, fmt.Errorf("the bare Go sender: %w\n%s", err, stderr.String())
	}
	wall = time.Since(start)
	if _, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); !ok {
		return 0, 0, errors.New("the bare Go sender: no rusage on this system")
	}
	return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
}

// WriteSweep prints the sweep as docs/benchmarks.md's table: per latency, the
// whole apply and the bare sender (wall, CPU), the ratio of their wall
// times (sender / apply: 1 is as fast as the sender) and CPU per target.
func WriteSweep(w io.Writer, rows []sweepRow) error {
	withBase := len(rows) > 0 && rows[0].base != nil
	head := "| sandbox latency | pushform apply (CPU) | bare Go sender (CPU) | ratio | CPU per target, pushform / sender |"
	sep := "|---|---|---|---|---|"
	if withBase {
		head += " -base-bin apply (CPU) | its ratio | its CPU per target |"
		sep += "---|---|---|"
	}
	fmt.Fprintln(w, head+" load |")
	fmt.Fprintln(w, sep+"---|")
	for _, r := range rows {
		perTarget := func(p procRun) float64 { return float64(p.cpu.Microseconds()) / float64(r.targets) }
		line := fmt.Sprintf("| %s | %s (%s) | %s (%s) | %.2f | %.2f us / %.2f us = %.1fx |",
			latencyName(r.latency), secs(r.apply.wall), secs(r.apply.cpu), secs(r.peer.wall), secs(r.peer.cpu),
			ratio(r.peer.wall, r.apply.wall), perTarget(r.apply), perTarget(r.peer), ratio(r.apply.cpu, r.peer.cpu))
		if withBase {
			line += fmt.Sprintf(" %s (%s) | %.2f | %.2f us = %.1fx |", secs(r.base.wall), secs(r.base.cpu),
				ratio(r.peer.wall, r.base.wall), perTarget(*r.base), ratio(r.base.cpu, r.peer.cpu))
		}
		fmt.Fprintln(w, line+" "+r.load+" |")
	}
	return nil
}

func latencyName(d time.Duration) string {
	if d == 0 {
		return "0 ms"
	}
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', -1, 64) + " ms"
}

func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return a.Seconds() / b.Seconds()
}
