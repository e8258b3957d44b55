package command

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/hcl/v2"

	"pushform/sandbox"
	"pushform/views"
)

// sandboxHelp is the help of sandbox; its flags come from the flag set it parses.
func sandboxHelp() helpDoc {
	return helpDoc{
		usage: []string{"sandbox --seed FILE [options]", "sandbox show [options] DEVICE_ID"},
		text: "Serves a local Push Notification Service under http://ADDR/v1, seeded with API keys, users, " +
			"devices and topics from an HCL file, and prints \"listening on http://ADDR/v1\" once it accepts " +
			"connections. It runs until interrupted. Inspection endpoints (no key): /_sandbox/devices[/ID], " +
			"/_sandbox/log/REQUEST_ID, /_sandbox/stats. Point a configuration at it with PUSHFORM_BASE_URL.\n\n" +
			"A configuration whose service block says sandbox = \"FILE\" runs the same sandbox in-process " +
			"instead; 'pushform sandbox show' prints what one of its devices received.",
		examples: []string{
			"pushform sandbox -seed=examples/quickstart/sandbox.hcl -addr=127.0.0.1:8787",
			"pushform sandbox -seed=sandbox.hcl -fail-rate=0.2 -latency=50ms",
		},
	}
}

func runSandbox(ctx context.Context, m *Meta, args []string) int {
	if len(args) > 0 && args[0] == "show" {
		return runSandboxShow(ctx, m, args[1:])
	}
	fs := m.FlagSet("sandbox")
	addr := fs.String("addr", "127.0.0.1:8787", "listen on `ADDR` (a loopback address; port 0 picks one)")
	seedPath := fs.String("seed", "", "seed `FILE` (HCL) with api_key, user, device, topic and user_range blocks (required)")
	var opts sandbox.Options
	fs.DurationVar(&opts.Latency, "latency", 0, "delay every API request by `D` (e.g. 50ms)")
	fs.Float64Var(&opts.FailRate, "fail-rate", 0, "fraction `F` of send requests answered 5xx (half 503 before, half 500 after processing)")
	fs.Float64Var(&opts.FailTargets, "fail-targets", 0, "fraction `F` of user and device targets answered failed (207), chosen by a hash of the id and --fault-seed")
	fs.Float64Var(&opts.DropRate, "drop-rate", 0, "fraction `F` of send requests whose connection is closed without an answer")
	fs.IntVar(&opts.RateLimit, "rate-limit", 0, "admit `N` API requests per second, 429 with Retry-After beyond (0: no limit)")
	fs.BoolVar(&opts.Empty200, "empty-200", false, "answer a fully delivered send with an empty 200 body")
	fs.IntVar(&opts.MaxLength, "max-length", 0, "reject title, body, tag or openToUrl longer than `N` characters with 400 (0: no bound)")
	fs.StringVar(&opts.RecipientsShape, "recipients-shape", "array", "recipients body: `array` (all at once) or object (paged with a next cursor)")
	fs.StringVar(&opts.IssuesShape, "issues-shape", sandbox.IssuesPath, "how a 400 locates each issue: `path` ([index, \"field\"]), index (index and field), pointer (\"/1/title\") or message (\"[1] title: ...\")")
	fs.StringVar(&opts.TopicResults, "topic-results", sandbox.TopicResultsEcho, "results for a topics object: `echo` (one entry echoing its array) or per-topic (one entry per topic)")
	fs.StringVar(&opts.RecipientsPaging, "recipients-paging", "", "page the recipients list and name the next page by: `cursor` (next in the body), link (a Link header), links-next (links.next in the body, an absolute URL), "+
		"header (X-Next-Cursor and X-Total-Count), has-more (hasMore, false on the last page beside a stale nextCursor), offset (offset, limit, total), page (page, per_page, total_count), or total-only (X-Total-Count and no way on)")
	recFaults := fs.StringArray("recipients-fault", nil, "answer the first request (or TIMES requests) for recipients page N with STATUS (429 or 503, Retry-After: 1): `STATUS[xTIMES]@N`, repeatable")
	checkShapes := bindSpecShapes(fs, &opts.SpecShapes)
	fs.StringVar(&opts.ResultsOrder, "results-order", sandbox.OrderRequest, "order of a send answer's results: `request`, reverse or shuffle")
	fs.StringVar(&opts.OKBody, "ok-body", sandbox.OKBodyFull, "body of a fully delivered 200: `full` (the results), empty, object ({}) or results ({\"results\":[]})")
	fs.StringVar(&opts.SinceFormat, "since-format", sandbox.SinceRFC3339, "how unreachableSince is written: `rfc3339`, epoch-s, epoch-ms, pg (\"2026-11-01 11:00:00+00\"), space-z (\"2026-11-01 11:00:00Z\") or words (no time a client reads)")
	fs.StringVar(&opts.MaxLengthAnswer, "max-length-answer", "400", "answer to a notification over --max-length: `400` (the request refused) or 207 (its targets failed, the rest delivered)")
	fs.Int64Var(&opts.FaultSeed, "fault-seed", 1, "seed `N` of the fault draws, for reproducible runs")
	quiet := fs.Bool("quiet", false, "do not log requests to stderr")
	if err := m.parse(fs, args); err != nil {
		return m.usageError("sandbox", err)
	}
	usage := func(format string, args ...any) int { return m.usageError("sandbox", fmt.Errorf(format, args...)) }
	if fs.NArg() > 0 {
		return usage("unexpected argument %s", quoteArg(fs.Arg(0)))
	}
	if *seedPath == "" {
		return usage("--seed FILE is required: the seed declares the API keys, users, devices and topics the sandbox serves")
	}
	switch {
	case !(opts.FailTargets >= 0 && opts.FailTargets <= 1):
		return usage("--fail-targets must be between 0 and 1, not %v", opts.FailTargets)
	case opts.FailRate < 0 || opts.FailRate > 1:
		return usage("--fail-rate must be between 0 and 1, not %v", opts.FailRate)
	case opts.DropRate < 0 || opts.DropRate > 1:
		return usage("--drop-rate must be between 0 and 1, not %v", opts.DropRate)
	case opts.FailRate+opts.DropRate > 1:
		return usage("--fail-rate and --drop-rate add up to more than 1")
	case opts.RateLimit < 0:
		return usage("--rate-limit must not be negative")
	case opts.Latency < 0:
		return usage("--latency must not be negative")
	case opts.RecipientsShape != "array" && opts.RecipientsShape != "object":
		return usage("--recipients-shape must be array or object, not %q", opts.RecipientsShape)
	case !slices.Contains([]string{sandbox.IssuesPath, sandbox.IssuesIndex, sandbox.IssuesPointer, sandbox.IssuesPointerDetail, sandbox.IssuesMessage}, opts.IssuesShape):
		return usage("--issues-shape must be path, index, pointer, pointer-detail or message, not %q", opts.IssuesShape)
	case !slices.Contains([]string{"", sandbox.PagingCursor, sandbox.PagingLink, sandbox.PagingLinksNext, sandbox.PagingHeader, sandbox.PagingHasMore,
		sandbox.PagingOffset, sandbox.PagingPage, sandbox.PagingTotalOnly}, opts.RecipientsPaging):
		return usage("--recipients-paging must be cursor, link, links-next, header, has-more, offset, page or total-only, not %q", opts.RecipientsPaging)
	case !slices.Contains([]string{sandbox.OrderRequest, sandbox.OrderReverse, sandbox.OrderShuffle}, opts.ResultsOrder):
		return usage("--results-order must be request, reverse or shuffle, not %q", opts.ResultsOrder)
	case !slices.Contains([]string{sandbox.OKBodyFull, sandbox.OKBodyEmpty, sandbox.OKBodyObject, sandbox.OKBodyResults}, opts.OKBody):
		return usage("--ok-body must be full, empty, object or results, not %q", opts.OKBody)
	case !slices.Contains([]string{sandbox.SinceRFC3339, sandbox.SinceEpochS, sandbox.SinceEpochMS, sandbox.SincePG, sandbox.SinceSpaceZ, sandbox.SinceWords}, opts.SinceFormat):
		return usage("--since-format must be rfc3339, epoch-s, epoch-ms, pg, space-z or words, not %q", opts.SinceFormat)
	case opts.MaxLengthAnswer != "400" && opts.MaxLengthAnswer != "207":
		return usage("--max-length-answer must be 400 or 207, not %q", opts.MaxLengthAnswer)
	case opts.TopicResults != sandbox.TopicResultsEcho && opts.TopicResults != sandbox.TopicResultsPerTopic:
		return usage("--topic-results must be echo or per-topic, not %q", opts.TopicResults)
	}
	if err := checkShapes(); err != nil {
		return usage("%s", err)
	}
	faults, err := parseRecipientsFaults(*recFaults)
	if err != nil {
		return usage("%s", err)
	}
	opts.RecipientsFaults = faults
	path := *seedPath
	if !filepath.IsAbs(path) {
		path = filepath.Join(m.ConfigDir(), path)
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return m.Errorf("cannot read the sandbox seed: %s", err)
	}
	// Diagnostics name the file as the user gave it.
	seed, diags := sandbox.ParseSeed(*seedPath, src)
	if diags.HasErrors() {
		w := hcl.NewDiagnosticTextWriter(m.Stderr, map[string]*hcl.File{*seedPath: {Bytes: src}}, 78, m.Color())
		w.WriteDiagnostics(diags)
		return ExitError
	}
	if !*quiet {
		var mu sync.Mutex
		opts.Logf = func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(m.Stderr, time.Now().Format("15:04:05.000")+" "+format+"\n", args...)
		}
	}
	start := time.Now()
	srv := sandbox.New(seed, opts)
	base, stop, err := srv.Start(*addr)
	if err != nil {
		return m.Errorf("%s", err)
	}
	fmt.Fprintf(m.Stdout, "listening on %s\n", base)
	if opts.Logf != nil {
		opts.Logf("sandbox: seeded from %s in %s; keys: %s", *seedPath, time.Since(start).Round(time.Millisecond), seedKeySummary(seed))
	}
	<-ctx.Done()
	if err := stop(); err != nil {
		return m.Errorf("stopping the sandbox: %s", err)
	}
	return ExitOK
}

// parseRecipientsFaults reads the --recipients-fault values:
// STATUS[xTIMES]@PAGE.
func parseRecipientsFaults(values []string) ([]sandbox.RecipientsFault, error) {
	var out []sandbox.RecipientsFault
	for _, f := range values {
		status, page, ok := strings.Cut(f, "@")
		status, times, many := strings.Cut(status, "x")
		st, err1 := strconv.Atoi(status)
		pg, err2 := strconv.Atoi(page)
		n, err3 := 1, error(nil)
		if many {
			n, err3 = strconv.Atoi(times)
		}
		if !ok || err1 != nil || err2 != nil || err3 != nil || pg < 1 || n < 1 || st != http.StatusTooManyRequests && st != http.StatusServiceUnavailable {
			return nil, fmt.Errorf("--recipients-fault takes STATUS[xTIMES]@PAGE with STATUS 429 or 503 and PAGE from 1 (e.g. 429@2, 503x5@3), not %q", f)
		}
		out = append(out, sandbox.RecipientsFault{Page: pg, Status: st, Times: n})
	}
	return out, nil
}

// seedKeySummary names the environments the seed has keys for, never a key.
func seedKeySummary(seed *sandbox.Seed) string {
	n := map[string]int{}
	for _, k := range seed.APIKeys {
		n[k.Environment]++
	}
	return fmt.Sprintf("%d test, %d production", n[sandbox.EnvTest], n[sandbox.EnvProduction])
}

// sandboxShowHelp is the help of sandbox show; its flags come from the flag set it parses.
func sandboxShowHelp() helpDoc {
	return helpDoc{
		usage: []string{"sandbox show [options] DEVICE_ID"},
		text: "Prints what a sandbox device has shown: badge, received count and inbox. It reads the file " +
			"the embedded sandbox saves next to the state (pushform.sandbox.json in the configuration " +
			"directory, or --file when --state puts the state elsewhere) or, with --addr, asks a running " +
			"'pushform sandbox'.",
		examples: []string{
			"pushform -chdir=examples/quickstart sandbox show alice-phone",
			"pushform sandbox show kiosk-1 -addr=127.0.0.1:8787 -json",
		},
	}
}

func runSandboxShow(ctx context.Context, m *Meta, args []string) int {
	flags := m.FlagSet("sandbox show")
	file := flags.String("file", "", "devices `FILE` saved by the embedded sandbox (default: "+sandbox.DefaultDevicesFile+" beside the state: in the configuration directory, or the --state file's)")
	addr := flags.String("addr", "", "ask the sandbox running at `ADDR` (e.g. 127.0.0.1:8787) instead of reading a file")
	var sf stateFlags
	sf.bind(flags, false)
	var jf jsonFlags
	jf.bind(flags, "the device")
	if err := m.parse(flags, args); err != nil {
		return m.usageError("sandbox show", err)
	}
	if flags.NArg() != 1 {
		return m.usageError("sandbox show", errors.New("sandbox show takes exactly one argument, a device ID"))
	}
	id := flags.Arg(0)
	var v sandbox.DeviceView
	var err error
	switch {
	case *addr != "" && *file != "":
		return m.usageError("sandbox show", errors.New("give --file or --addr, not both"))
	case *file != "" && sf.file != "":
		return m.usageError("sandbox show", errors.New("give --file or --state, not both"))
	case *addr != "":
		v, err = fetchSandboxDevice(ctx, *addr, id)
	default:
		// The embedded sandbox keeps its devices beside the state (see
		// backend.Session), so --state finds them where apply --state put them.
		path := *file
		switch {
		case path != "":
			path = m.path(path)
		case sf.file != "":
			path = filepath.Join(filepath.Dir(m.path(sf.file)), sandbox.DefaultDevicesFile)
		default:
			path = filepath.Join(m.ConfigDir(), sandbox.DefaultDevicesFile)
		}
		v, err = sandbox.ReadDevice(path, id)
		if errors.Is(err, fs.ErrNotExist) {
			err = fmt.Errorf("no sandbox devices file at %s: the embedded sandbox writes it beside the state after apply (after apply --state FILE, use sandbox show --state FILE); for a running 'pushform sandbox' use --addr", path)
		}
	}
	if err != nil {
		return m.Errorf("%s", err)
	}
	if err := views.NewSandboxDevice(jf.format(), m.view(jf.indent)).Device(v); err != nil {
		return m.fail(err)
	}
	return ExitOK
}

// fetchSandboxDevice asks a running sandbox for a device. addr may be host:port
// or the base URL the sandbox printed.
func fetchSandboxDevice(ctx context.Context, addr, id string) (sandbox.DeviceView, error) {
	base := strings.TrimSuffix(strings.TrimSuffix(addr, "/"), "/v1")
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/_sandbox/devices/"+url.PathEscape(id), nil)
	if err != nil {
		return sandbox.DeviceView{}, fmt.Errorf("sandbox address %q: %w", addr, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return sandbox.DeviceView{}, fmt.Errorf("asking the sandbox at %s: %w", base, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return sandbox.DeviceView{}, fmt.Errorf("reading the sandbox's answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct{ Message string }
		if json.Unmarshal(body, &e) != nil || e.Message == "" {
			e.Message = strings.TrimSpace(string(body[:min(len(body), 200)]))
		}
		return sandbox.DeviceView{}, fmt.Errorf("the sandbox at %s answered %d: %s", base, resp.StatusCode, e.Message)
	}
	var v sandbox.DeviceView
	if err := json.Unmarshal(body, &v); err != nil {
		return v, fmt.Errorf("the sandbox at %s gave an unreadable device: %w", base, err)
	}
	return v, nil
}
