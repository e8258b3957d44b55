package command

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"pushform/backend"
	"pushform/executor"
	"pushform/operation"
	"pushform/plandoc"
	"pushform/planner"
	"pushform/pushapi"
	"pushform/views"
)

// applyOptions are the inputs of apply.
type applyOptions struct {
	*Meta
	planFlags
	retryFlags
	planFile    string // a saved plan to apply; "" plans now
	autoApprove bool
	json        bool
	parallelism int
	// allowResend applies a plan that looks like renames (see
	// planner.Plan.ResendGuard).
	allowResend bool
	// scheduled sends only what a reviewed apply accepted (see
	// planner.Options.Scheduled).
	scheduled bool
}

// applyHelp is the help of apply; its flags come from the flag set it parses.
func applyHelp() helpDoc {
	return helpDoc{
		usage: []string{"apply [options] [PLANFILE]"},
		text: "Sends what a plan says through the service, in requests of at most 500 targets, and records " +
			"every request id and every target's outcome in the state, so the next apply sends nothing twice. " +
			"Without PLANFILE it plans first, prints the plan and asks for 'yes' (--auto-approve skips the " +
			"question; without a terminal it is required). With PLANFILE it sends exactly that saved plan " +
			"without asking, and refuses it if the state changed since it was made or it is older than max_plan_age. " +
			"A failed deny policy (unless --override-policy) and content require_test_send holds stop it before " +
			"anything is sent. A plan that forgets an address " +
			"and sends the same content to the same targets under another (a rename without a moved block) is " +
			"refused before anything is sent, unless --allow-resend. With --scheduled (a cron job) it sends, " +
			"without asking, only what a reviewed apply accepted: sends held back by send_after, send_rate, " +
			"a frequency_cap or a window, retries, and new recipients of content the state records; new " +
			"addresses, changed content, forgets and moves are listed and left for review, with exit code 4.",
		examples: []string{
			"pushform apply -auto-approve",
			"pushform apply spring.plan",
			"pushform apply --scheduled",
		},
	}
}

func cmdApply(ctx context.Context, m *Meta, args []string) int {
	o, err := parseApply(m, args)
	if err != nil {
		return m.usageError("apply", err)
	}
	return runApply(ctx, o)
}

func parseApply(m *Meta, args []string) (*applyOptions, error) {
	o := &applyOptions{Meta: m}
	fs := m.FlagSet("apply")
	o.planFlags.bind(fs)
	fs.BoolVar(&o.autoApprove, "auto-approve", false, "send without asking for confirmation")
	fs.BoolVar(&o.json, "json", false, "stream events as JSON lines")
	fs.IntVar(&o.parallelism, "parallelism", executor.DefaultParallelism, "send at most `N` requests at once")
	fs.BoolVar(&o.scheduled, "scheduled", false, "send only what a reviewed apply accepted (held-back sends, retries, new recipients of recorded content), without asking; list the other changes and exit 4")
	fs.BoolVar(&o.allowResend, "allow-resend", false, "apply a plan that forgets an address and sends to its targets under another (a rename without a moved block), and send content once more to targets that already received it: those devices show it again")
	o.retryFlags.bind(fs)
	if err := m.parse(fs, args); err != nil {
		return nil, err
	}
	switch {
	case fs.NArg() > 1:
		return nil, errors.New("apply takes at most one argument, a saved plan file")
	case o.parallelism < 1:
		return nil, errors.New("--parallelism must be at least 1")
	}
	if err := o.retryFlags.check(); err != nil {
		return nil, err
	}
	if _, err := o.planFlags.check(); err != nil {
		return nil, err
	}
	if fs.NArg() == 1 {
		if err := checkSavedPlanFlags(fs); err != nil {
			return nil, err
		}
		o.planFile = fs.Arg(0)
	}
	if o.scheduled {
		if err := operation.CheckScheduled(fs.Args(), fs.Changed); err != nil {
			return nil, err
		}
	}
	o.planFlags.allowResend, o.planFlags.scheduled = o.allowResend, o.scheduled
	// The recipients list a run fetches is retried within the same limits,
	// and waits out 429s within the same budget as the sends.
	o.planFlags.recipientsMaxAttempts, o.planFlags.maxRetryAfter = o.maxAttempts, o.maxRetryAfter
	o.planFlags.rateLimit = pushapi.NewRateLimit(o.rateLimitWait, nil)
	return o, nil
}

func runApply(ctx context.Context, o *applyOptions) int {
	m := o.Meta
	var saved *planner.Plan
	var madeAt time.Time
	overrides := o.overrideList()
	var reviewed []plandoc.Policy
	if o.planFile != "" {
		sp, err := readPlanFile(m.path(o.planFile))
		if err != nil {
			return m.fail(err)
		}
		saved, madeAt = sp.Plan, sp.MadeAt
		// The configuration is loaded (for its service and backend) as the
		// plan was made, and the plan's own choices apply: a plan made with
		// --now carries its time (see operation.Options.SavedAt).
		o.vars, o.varFiles, o.allowResend = sp.Vars, sp.VarFiles, sp.AllowResend
		if sp.Now != "" {
			o.savedAt = saved.CreatedAt
		}
		overrides, reviewed = sp.Overrides, sp.Policies // as reviewed
	}
	view := views.NewApply(jsonFormat(o.json), m.view(false))
	if ce, ok := view.(views.ConfigErrors); ok {
		o.configErrors = ce
	}
	r, err := m.openRun(ctx, &o.planFlags, "apply")
	if err != nil {
		return m.fail(err)
	}
	defer m.closeRun(r)
	sess := r.Session
	if saved != nil {
		if err := sess.CheckPlan(saved); err != nil { // a stale plan says so first
			return m.fail(err)
		}
		if err := checkPlanAge(o.planFile, madeAt, r.Clock.Real, maxPlanAge(sess.Config)); err != nil {
			return m.fail(err)
		}
	}

	if m.Sending != nil {
		m.Sending()
	}

	if j, ok := view.(*views.ApplyJSON); ok { // named once the session knows it
		j.WithService(sess.Which, sess.Config.Service.Environment)
	}
	ao := operation.ApplyOptions{
		Saved: saved, View: view,
		HoldEvents:  !o.json, // a human view shows the plan first
		AllowResend: o.allowResend,
		Overrides:   overrides,
		Reviewed:    reviewed,
		Executor: executor.Options{
			Parallelism: o.parallelism, MaxAttempts: o.maxAttempts, BaseDelay: o.baseDelay,
			MaxDelay: o.maxDelay, MaxRetryAfter: o.maxRetryAfter, RateLimit: o.planFlags.rateLimit,
		},
	}
	if saved == nil && !o.autoApprove && !o.scheduled {
		ao.Confirm = m.confirm
	}
	res, err := r.Apply(ctx, ao)
	m.noteRecordedService(sess)
	if err != nil {
		return m.fail(err)
	}
	switch {
	case res.Plan == nil:
		return o.brokenOff(ctx, sess, res)
	case !res.Sent:
		return o.awaitingReview(res.Plan, ExitOK)
	}
	return o.awaitingReview(res.Plan, o.finish(sess, res))
}

// brokenOff reports a streamed apply whose recipients list broke off (or
// that was interrupted) before the plan was whole: what was sent is
// recorded, nothing was shown as a plan.
func (o *applyOptions) brokenOff(ctx context.Context, sess *backend.Session, res *operation.ApplyResult) int {
	m := o.Meta
	if res.PersistErr != nil {
		return m.fail(fmt.Errorf("saving state (the journal of %s still holds every outcome): %w", sess.Backend, res.PersistErr))
	}
	if ctx.Err() != nil {
		res.Result.Interrupted = true
		return m.Errorf("%s", interruptedMessage(res.Result, backend.Name(sess.Backend)))
	}
	if res.Result.Sent == 0 {
		return m.fail(fmt.Errorf("%w; nothing was sent", res.Err))
	}
	c := res.Result.Counts
	verb := "were"
	if c.Total() == 1 {
		verb = "was"
	}
	return m.fail(fmt.Errorf("%w (before that, %s %s sent in %s and recorded in %s: %s; apply again to send the rest)",
		res.Err, plural(c.Total(), "target"), verb, plural(res.Result.Sent, "request"), sess.Backend, countsText(c)))
}

// finish reports how an apply that sent went, once the state is saved
// and the summary shown: the first error is the one reported, a failed
// save comes second.
func (o *applyOptions) finish(sess *backend.Session, r *operation.ApplyResult) int {
	m, res := o.Meta, r.Result
	if r.Err != nil {
		if res.JournalError != "" {
			m.fail(fmt.Errorf("%w\n%s", r.Err, journalFailureMessage(res, backend.Name(sess.Backend), r.PersistErr == nil, backend.IsLocal(sess.Backend))))
		} else {
			m.fail(r.Err)
		}
		if r.PersistErr != nil {
			m.Errorf("saving the state failed too: %v", r.PersistErr)
		}
		return ExitError
	}
	if r.PersistErr != nil {
		return m.fail(fmt.Errorf("saving state (the journal of %s still holds every outcome): %w", sess.Backend, r.PersistErr))
	}
	if res.Interrupted {
		return m.Errorf("%s", interruptedMessage(res, backend.Name(sess.Backend)))
	}
	if res.Counts.Failed > 0 || res.Counts.Unknown > 0 || len(res.Errors) > 0 {
		return ExitError
	}
	return ExitOK
}

// awaitingReview reports the changes a scheduled plan left for review:
// listed in JSON (the human plan view listed them), a line on stderr, and
// ExitReview when the run was otherwise a success.
func (o *applyOptions) awaitingReview(p *planner.Plan, code int) int {
	if len(p.AwaitingReview) == 0 {
		return code
	}
	m := o.Meta
	if o.json {
		if err := views.AwaitingReviewJSON(m.Stdout, p); err != nil {
			return m.fail(err)
		}
	}
	m.Warnf("%s", views.AwaitingReviewWarning(p, ExitReview))
	if code != ExitOK {
		return code
	}
	return ExitReview
}

// retryFlags are apply's retry limits.
type retryFlags struct {
	maxAttempts                        int
	baseDelay, maxDelay, maxRetryAfter time.Duration
	rateLimitWait                      time.Duration
}

func (rf *retryFlags) bind(fs *pflag.FlagSet) {
	fs.IntVar(&rf.maxAttempts, "max-attempts", executor.DefaultMaxAttempts,
		"try a request at most `N` times (1: never retry); an ambiguous failure is retried only when every notification in the request is tagged or a badge")
	fs.DurationVar(&rf.baseDelay, "retry-delay", executor.DefaultBaseDelay, "wait about `D` before the first retry, doubling each time (with jitter)")
	fs.DurationVar(&rf.maxDelay, "retry-max-delay", executor.DefaultMaxDelay, "wait at most `D` between two tries of a request")
	fs.DurationVar(&rf.maxRetryAfter, "max-retry-after", executor.DefaultMaxRetryAfter, "honour a Retry-After (429, 503) of at most `D`")
	fs.DurationVar(&rf.rateLimitWait, "rate-limit-wait", pushapi.DefaultRateLimitWait,
		"wait out the service's 429s (which use no try) for at most `D` in all, every request pausing together; then what is not sent is recorded not sent, for the next apply")
}

func (rf *retryFlags) check() error {
	switch {
	case rf.maxAttempts < 1:
		return fmt.Errorf("--max-attempts must be at least 1 (1 tries each request once), not %d", rf.maxAttempts)
	case rf.baseDelay <= 0:
		return fmt.Errorf("--retry-delay must be positive, not %s", rf.baseDelay)
	case rf.maxDelay < rf.baseDelay:
		return fmt.Errorf("--retry-max-delay (%s) must not be shorter than --retry-delay (%s)", rf.maxDelay, rf.baseDelay)
	case rf.maxRetryAfter <= 0:
		return fmt.Errorf("--max-retry-after must be positive, not %s", rf.maxRetryAfter)
	case rf.rateLimitWait <= 0:
		return fmt.Errorf("--rate-limit-wait must be positive, not %s", rf.rateLimitWait)
	}
	return nil
}

// interruptedMessage says what an interrupted apply did and did not do.
func interruptedMessage(res *executor.Result, where string) string {
	msg := "apply was interrupted: the requests in flight were finished and recorded in " + where
	if res.NotStarted > 0 {
		msg += "; " + plural(res.NotStarted, "target") + " were not sent"
	}
	if n := res.Counts.Unknown; n > 0 {
		msg += "; " + plural(n, "target") + " have an unknown outcome"
	}
	return msg + ". Run apply again to continue from there."
}

// journalFailureMessage says, after a failed journal write, which records
// are durable and what the next run does with the rest. saved says
// whether the state was saved after the failure (with the outcomes the
// journal missed: see operation.ApplyResult).
func journalFailureMessage(res *executor.Result, where string, saved, local bool) string {
	var b strings.Builder
	if saved {
		fmt.Fprintf(&b, "  Recorded: %s was saved after the failure with every outcome this run received, those the journal missed included.\n", where)
	} else {
		fmt.Fprintf(&b, "  Recorded: every intent and outcome whose journal write succeeded; they are in the journal of %s, which the next run reads back.\n", where)
	}
	u := res.Unrecorded
	if u == nil {
		u = &executor.Unrecorded{}
	}
	if n := u.Total(); n > 0 {
		fmt.Fprintf(&b, "  Not recorded: the outcomes of %s (%s): their answers arrived, but writing them to the journal failed. "+
			"The next plan treats them as unknown: tagged ones and badges are sent again (devices replace them), untagged ones are held (--retry-unknown sends them).\n",
			plural(n, "target"), countsText(u.Counts))
	}
	if u.NotSent > 0 {
		fmt.Fprintf(&b, "  Not recorded: %s of requests recorded as about to be sent were never sent, and the journal could not record that either; "+
			"the next plan treats them as unknown too, as after a crash.\n", plural(u.NotSent, "target"))
	}
	if n := res.NotStarted - u.NotSent; n > 0 {
		fmt.Fprintf(&b, "  Not sent: %s; the next plan sends them.\n", plural(n, "target"))
	}
	if local {
		b.WriteString("  Free space where the state is kept (or fix the error above), then review with pushform plan and apply again.")
	} else {
		b.WriteString("  Fix what the error above names (the connection, the server, a lock), then review with pushform plan and apply again.")
	}
	return b.String()
}

// countsText lists the non-zero counts: "500 delivered, 3 failed".
func countsText(c executor.Counts) string {
	var parts []string
	for _, p := range []struct {
		n    int
		what string
	}{{c.Delivered, "delivered"}, {c.Skipped, "skipped"}, {c.Failed, "failed"}, {c.Unknown, "unknown"}} {
		if p.n > 0 {
			parts = append(parts, views.Count(p.n)+" "+p.what)
		}
	}
	return strings.Join(parts, ", ")
}

// confirm asks for "yes" on a terminal; without one it refuses.
func (m *Meta) confirm() (bool, error) {
	if !m.StdinTerminal {
		return false, errors.New("apply needs confirmation and there is no terminal to ask on: review the plan and run with --auto-approve, or apply a saved plan file")
	}
	fmt.Fprint(m.Stdout, "\nDo you want to send these notifications?\n  Only 'yes' will be accepted: ")
	line, err := bufio.NewReader(m.Stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("reading the answer: %w", err)
	}
	if strings.TrimSpace(line) != "yes" {
		return false, errors.New("apply cancelled: nothing was sent")
	}
	return true, nil
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return views.Count(n) + " " + noun + "s"
}
