// Package views turns plans, apply progress and state into output for
// people (human text, markdown) and machines (JSON). Each kind of output is
// an interface (Plan, Apply, State, History, ...) with one type per
// format, and a factory (NewPlan, NewApply, ...) that picks the type for
// a Format: commands choose output only through those. Nothing here
// plans, sends or reads files.
package views

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"pushform/message"
	"pushform/plandoc"
	"pushform/planner"
	"pushform/termtext"
)

// Plan shows a plan.
type Plan interface {
	Plan(p *planner.Plan) error
}

var (
	_ Plan = (*PlanHuman)(nil)
	_ Plan = (*PlanJSON)(nil)
	_ Plan = (*PlanMarkdown)(nil)
)

// listMax is how many target ids a change lists before it shows counts only.
const listMax = 5

// Symbol returns the marker of an action in human output, "?" for an
// action the views do not know (TestEveryViewRendersEveryAction fails on
// one).
func Symbol(a planner.Action) string {
	if s, ok := symbol(a); ok {
		return s
	}
	return "?"
}

// symbol is the marker of a known action (planner's table).
func symbol(a planner.Action) (string, bool) {
	r, ok := planner.Info(a)
	return r.Symbol, ok
}

// palette colours text when enabled.
type palette bool

func (p palette) wrap(code, s string) string {
	if !p {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}
func (p palette) green(s string) string  { return p.wrap("32", s) }
func (p palette) red(s string) string    { return p.wrap("31", s) }
func (p palette) yellow(s string) string { return p.wrap("33", s) }
func (p palette) bold(s string) string   { return p.wrap("1", s) }

func (p palette) symbol(a planner.Action) string {
	s := Symbol(a)
	switch r, _ := planner.Info(a); r.Colour {
	case planner.Green:
		return p.green(s)
	case planner.Red:
		return p.red(s)
	}
	return p.yellow(s)
}

// PlanHuman shows a plan as people read it in a terminal or a log.
type PlanHuman struct {
	w   io.Writer
	pal palette
	// width wraps warnings and notes to a terminal's width; 0: one line
	// each (logs, pipes: a line per warning greps well).
	width int
	// policies are the results of the plan's policies, shown last.
	policies []plandoc.Policy
}

// WithPolicies shows the results of the plan's policies after the
// summary.
func (v *PlanHuman) WithPolicies(results []plandoc.Policy) *PlanHuman {
	v.policies = results
	return v
}

// WithWidth word-wraps the plan's warnings and notes at width columns (a
// terminal's), continuation lines indented under the text.
func (v *PlanHuman) WithWidth(width int) *PlanHuman {
	v.width = width
	return v
}

// note writes one labelled paragraph ("Warning: ..."), wrapped when the
// view has a width.
func (v *PlanHuman) note(b *strings.Builder, label, labelShown, text string) {
	fmt.Fprintf(b, "\n%s %s\n", labelShown, WrapText(text, v.width, utf8.RuneCountInString(label)+1))
}

// NewPlanHuman returns a human plan view writing to w, with ANSI colour
// when color is set.
func NewPlanHuman(w io.Writer, color bool) *PlanHuman {
	return &PlanHuman{w: w, pal: palette(color)}
}

// Plan writes the plan: every change, the addresses up to date, warnings
// and the summary line.
func (v *PlanHuman) Plan(p *planner.Plan) error {
	pal := v.pal
	var b strings.Builder
	shown, upToDate := shownChanges(p)
	if line := serviceLine(p); line != "" {
		b.WriteString(pal.bold(line) + "\n")
		if len(shown) > 0 {
			b.WriteString("\n")
		}
	}
	switch {
	case len(shown) > 0 && p.HasChanges():
		b.WriteString("pushform will perform the following actions:\n")
	case len(shown) > 0:
		b.WriteString("Nothing to send now; held back:\n")
	}
	for _, c := range shown {
		b.WriteString("\n")
		writeChange(&b, c, pal)
	}
	if upToDate > 0 {
		fmt.Fprintf(&b, "\n%s up to date.\n", plural(upToDate, "address is", "addresses are"))
	}
	for _, line := range pacingLines(p) {
		v.note(&b, "Pacing:", pal.bold("Pacing:"), termtext.Clean(line))
	}
	if note := RecipientsNote(p); note != "" {
		v.note(&b, "Recipients:", pal.bold("Recipients:"), note)
	}
	for _, warn := range planWarnings(p) {
		v.note(&b, "Warning:", pal.yellow("Warning:"), termtext.Clean(warn))
	}
	if note := ShapesNote(p); note != "" {
		v.note(&b, "Review:", pal.bold("Review:"), termtext.Clean(note))
	}
	if len(p.AwaitingReview) > 0 {
		fmt.Fprintf(&b, "\n%s (apply --scheduled applies only what a reviewed apply accepted):\n", pal.bold("Awaiting review"))
		for _, r := range p.AwaitingReview {
			fmt.Fprintf(&b, "  %s %s: %s\n", pal.symbol(r.Action), termtext.Clean(r.Address), termtext.Clean(r.Why))
		}
	}
	if len(p.Renames) > 0 {
		fmt.Fprintf(&b, "\n%s\n\n", renameAdvice(p))
		for i, r := range p.Renames {
			if i > 0 {
				b.WriteString("\n")
			}
			for _, line := range strings.Split(strings.TrimSuffix(r.MovedBlock(), "\n"), "\n") {
				b.WriteString("    " + termtext.Clean(line) + "\n")
			}
		}
	}
	b.WriteString("\n")
	b.WriteString(pal.bold(SummaryLine(p)))
	b.WriteString("\n")
	if line := ReachLine(p); line != "" {
		b.WriteString(line + "\n")
	}
	writePolicies(&b, v.policies, pal)
	_, err := io.WriteString(v.w, b.String())
	return err
}

// ApplyLead says what applying a saved plan does, to lead the command
// that applies it ("To send exactly these notifications, run:"): a plan
// that sends nothing only records, and one without changes does nothing.
func ApplyLead(p *planner.Plan) string {
	switch {
	case p.Summary.Requests > 0:
		return "To send exactly these notifications, run:"
	case p.HasChanges():
		return "Applying it sends nothing: it records these changes in the state. To record them, run:"
	}
	return "It has no changes: applying it sends and records nothing. To apply it anyway, run:"
}

// shownChanges are the changes of p a plan lists, in order, and how many
// it only counts as up to date.
func shownChanges(p *planner.Plan) (shown []*planner.Change, upToDate int) {
	for _, c := range p.Changes {
		if upToDateChange(c) {
			upToDate++
			continue
		}
		shown = append(shown, c)
	}
	return shown, upToDate
}

// upToDateChange reports whether a change is only counted, not shown.
func upToDateChange(c *planner.Change) bool {
	return c.Action == planner.ActionNoOp && len(c.Held) == 0 && c.Targets.TagOnly == 0
}

// renameAdvice says what to do about the plan's renames, and what the
// move does when it carries an edit; the moved blocks follow it.
func renameAdvice(p *planner.Plan) string {
	if len(p.Renames) == 1 {
		r := p.Renames[0]
		move := "a move sends nothing"
		switch {
		case r.Same:
		case r.Replaces:
			move = fmt.Sprintf("the move sends nothing, and the edit it carries then replaces the earlier notification on the devices of %s, under the same tag",
				plural(r.Targets, "target", "targets"))
		default:
			move = fmt.Sprintf("the move sends nothing, but the edit it carries is then sent to the %s that have the earlier notification, "+
				"and without the same tag their devices show both", plural(r.Targets, "target", "targets"))
		}
		return "Apply refuses this plan: it would forget an address and send its notification again. If it is a rename, " +
			"add this moved block to the configuration and plan again (" + move + "); to send it again anyway, apply with --allow-resend:"
	}
	move := "a move sends nothing"
	edited, shownTwice := 0, 0
	for _, r := range p.Renames {
		if !r.Same {
			edited++
			if !r.Replaces {
				shownTwice++
			}
		}
	}
	if edited > 0 {
		move = fmt.Sprintf("a move sends nothing, but %s an edit, which is then sent to the targets that have the earlier notification: "+
			"replacing it under the same tag for %s, shown beside it for %s", plural(edited, "of them carries", "of them carry"), Count(edited-shownTwice), Count(shownTwice))
	}
	return fmt.Sprintf("Apply refuses this plan: it would forget %s addresses and send their notifications again. If they are renames, "+
		"add these moved blocks to the configuration and plan again (%s); to send them again anyway, apply with --allow-resend:", Count(len(p.Renames)), move)
}

// pacingLines say how each send_rate group paces its sends.
func pacingLines(p *planner.Plan) []string {
	var out []string
	for _, pc := range p.Pacing {
		out = append(out, fmt.Sprintf("%s sends %s at %s, in %s, taking about %s.", pc.Group,
			plural(pc.Targets, "target", "targets"), pc.Rate(), plural(pc.Requests, "request", "requests"), roundDuration(pc.Duration)))
	}
	return out
}

// roundDuration rounds d for people: whole seconds, or minutes past an hour.
func roundDuration(d time.Duration) time.Duration {
	if d >= time.Hour {
		return d.Round(time.Minute)
	}
	return d.Round(time.Second)
}

// heldBack says what the plan holds back without changes: expired and
// capped targets, and addresses waiting for send_after.
func heldBack(s planner.Summary) string {
	var out string
	if n := s.Wait - s.LocalWait; n > 0 {
		out += fmt.Sprintf(" %s waiting for send_after.", plural(n, "address is", "addresses are"))
	}
	out += localHeldLine(s)
	if s.ExpiredTargets > 0 {
		out += fmt.Sprintf(" %s expired: send_before has passed and they are never sent.", plural(s.ExpiredTargets, "target", "targets"))
	}
	if s.CappedTargets > 0 {
		out += fmt.Sprintf(" %s held back by frequency_cap until it allows them.", plural(s.CappedTargets, "target is", "targets are"))
	}
	if s.AlreadyDeliveredTargets > 0 {
		out += fmt.Sprintf(" %s already delivered: not sent again.", plural(s.AlreadyDeliveredTargets, "target was", "targets were"))
	}
	if s.Disabled > 0 {
		out += fmt.Sprintf(" %s disabled (enabled = false).", plural(s.Disabled, "address is", "addresses are"))
	}
	if s.Halted > 0 {
		out += fmt.Sprintf(" %s halted by its failure gate (apply --resume ADDR to go on).", plural(s.Halted, "rollout is", "rollouts are"))
	}
	if s.StagedTargets > 0 {
		out += fmt.Sprintf(" %s held for later rollout stages.", plural(s.StagedTargets, "target is", "targets are"))
	}
	return out
}

// SummaryLine is the one-line verdict, e.g. "Plan: 2 to create, 1 to
// replace, 0 to forget; 12,480 targets in 27 requests."
func SummaryLine(p *planner.Plan) string {
	review := ""
	if n := len(p.AwaitingReview); n > 0 {
		review = fmt.Sprintf("; %s awaiting review", plural(n, "change", "changes"))
	}
	if !p.HasChanges() && review != "" {
		return "Nothing released: every change awaits review." + heldBack(p.Summary)
	}
	if !p.HasChanges() {
		return "No changes. Devices are up to date with the configuration." + heldBack(p.Summary)
	}
	if onlyShapes(p) {
		return "Nothing to send or record but the reviewed shapes (see Review)." + heldBack(p.Summary)
	}
	s := p.Summary
	var parts []string
	for _, r := range planner.ActionTable() {
		if n := r.SummaryCount(s); r.Word != "" && (n > 0 || r.Always) {
			parts = append(parts, Count(n)+" "+r.Word)
		}
		if r.Action == planner.ActionReplace {
			// Tag-only changes apply records (Change.Accept) are no
			// action of their own: counted after the replaces.
			if n := recordsTagOnly(p); n > 0 {
				parts = append(parts, Count(n)+" to record (tag only)")
			}
		}
	}
	line := fmt.Sprintf("Plan: %s; %s in %s", strings.Join(parts, ", "),
		plural(s.Targets, "target", "targets"), plural(s.Requests, "request", "requests"))
	if s.PacedSeconds > 0 {
		line += fmt.Sprintf(", paced over about %s", roundDuration(time.Duration(s.PacedSeconds*float64(time.Second))))
	}
	if s.CappedTargets > 0 {
		line += fmt.Sprintf("; %s held back by frequency_cap", plural(s.CappedTargets, "target", "targets"))
	}
	if s.WaitingTargets > 0 {
		line += "; " + plural(s.WaitingTargets, "target waiting for its local time", "targets waiting for their local time")
	}
	if s.QuietTargets > 0 {
		line += fmt.Sprintf("; %s held by quiet_hours", plural(s.QuietTargets, "target", "targets"))
	}
	if s.ExpiredTargets > 0 {
		line += fmt.Sprintf("; %s expired", plural(s.ExpiredTargets, "target", "targets"))
	}
	if s.AlreadyDeliveredTargets > 0 {
		line += fmt.Sprintf("; %s already delivered", plural(s.AlreadyDeliveredTargets, "target", "targets"))
	}
	if s.StagedTargets > 0 {
		line += fmt.Sprintf("; %s held for later rollout stages", plural(s.StagedTargets, "target", "targets"))
	}
	if s.Halted > 0 {
		line += fmt.Sprintf("; %s halted", plural(s.Halted, "rollout", "rollouts"))
	}
	if s.HoldoutTargets > 0 {
		line += fmt.Sprintf("; %s held out, to record", plural(s.HoldoutTargets, "target", "targets"))
	}
	return line + review + "."
}

// recordsTagOnly counts the tag-only changes apply records with nothing
// sent (Change.Accept).
func recordsTagOnly(p *planner.Plan) int {
	n := 0
	for _, c := range p.Changes {
		if c.Accept && c.Targets.TagOnly > 0 {
			n++
		}
	}
	return n
}

func writeChange(b *strings.Builder, c *planner.Change, pal palette) {
	writeChangeBody(b, c, pal)
	for _, line := range extraLines(c) {
		b.WriteString("      " + termtext.Clean(line) + "\n")
	}
	for _, line := range sampleLines(c) {
		b.WriteString("      " + line + "\n") // escaped already
	}
}

func writeChangeBody(b *strings.Builder, c *planner.Change, pal palette) {
	if c.MovedFrom != "" {
		fmt.Fprintf(b, "  %s %s has moved to %s\n", pal.symbol(planner.ActionMoved), pal.bold(termtext.Clean(c.MovedFrom)), pal.bold(termtext.Clean(c.Address)))
		if c.Action == planner.ActionMoved {
			fmt.Fprintf(b, "      (%s)\n", strings.Join(append([]string{"nothing is sent; the state records the move"}, changeNotes(c)...), "; "))
			return
		}
	}
	fmt.Fprintf(b, "  %s %s%s\n", pal.symbol(c.Action), pal.bold(termtext.Clean(c.Address)), headline(c))
	if c.Action == planner.ActionForget || c.Action == planner.ActionExpired || c.Action == planner.ActionCapped ||
		c.Action == planner.ActionAlreadyDelivered || c.Action == planner.ActionDisabled || c.Action == planner.ActionStage ||
		c.Action == planner.ActionHoldout || c.Action == planner.ActionUnfilled {
		if notes := changeNotes(c); len(notes) > 0 && c.Action != planner.ActionForget {
			fmt.Fprintf(b, "      (%s)\n", strings.Join(notes, "; "))
		}
		if l := localLine(c); l != "" {
			fmt.Fprintf(b, "      %s\n", l)
		}
		return
	}
	if newContent(c) {
		writeContent(b, c.Content)
	} else if c.Prior != nil {
		writeContentDiff(b, *c.Prior, c.Content, pal)
	}
	if notes := changeNotes(c); len(notes) > 0 {
		fmt.Fprintf(b, "      (%s)\n", strings.Join(notes, "; "))
	}
	if l := localLine(c); l != "" {
		fmt.Fprintf(b, "      %s\n", l)
	}
}

// newContent reports whether a change shows its whole content as new: it
// creates, or holds back content that was never sent.
func newContent(c *planner.Change) bool {
	return c.Action == planner.ActionCreate || c.Action == planner.ActionWait || c.Action == planner.ActionQuiet && c.Prior == nil
}

// retryDetail explains why targets are sent again, e.g. " (2 failed, 1 unknown)".
func retryDetail(t planner.TargetCounts) string {
	var parts []string
	if t.Retry > 0 {
		parts = append(parts, Count(t.Retry)+" failed")
	}
	if t.Unknown > 0 {
		parts = append(parts, Count(t.Unknown)+" unknown")
	}
	if t.Reachable > 0 {
		parts = append(parts, Count(t.Reachable)+" reachable again")
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// attr is one attribute line of a change, named as in the configuration.
type attr struct{ name, value string }

// writeAttrs writes attributes one per line, values aligned as Terraform
// aligns them: after the longest name (and never before column 12).
func writeAttrs(b *strings.Builder, attrs []attr) {
	width := 12
	for _, a := range attrs {
		width = max(width, len(a.name)+1)
	}
	for _, a := range attrs {
		fmt.Fprintf(b, "      %-*s %s\n", width, a.name+":", a.value)
	}
}

// contentAttrs lists the attributes content sets, text values quoted by
// quote.
func contentAttrs(c message.Content, quote func(string) string) []attr {
	var attrs []attr
	for _, f := range textFields(c) {
		if f.value != "" {
			attrs = append(attrs, attr{f.name, quote(f.value)})
		}
	}
	for _, f := range translationFields(c) {
		attrs = append(attrs, attr{f.name, termtext.Clean(f.value)})
	}
	if c.BadgeCount != nil {
		attrs = append(attrs, attr{"badge_count", strconv.Itoa(*c.BadgeCount)})
	}
	if c.SilentInForeground {
		attrs = append(attrs, attr{"silent_in_foreground", "true"})
	}
	return attrs
}

func writeContent(b *strings.Builder, c message.Content) {
	writeAttrs(b, contentAttrs(c, termtext.Quote))
}

func writeContentDiff(b *strings.Builder, old, new message.Content, pal palette) {
	var attrs []attr
	o, n := textFields(old), textFields(new)
	for i := range o {
		if o[i].value != n[i].value {
			attrs = append(attrs, attr{o[i].name, inlineDiff(o[i].value, n[i].value, pal)})
		}
	}
	if badge(&old) != badge(&new) {
		attrs = append(attrs, attr{"badge_count", badge(&old) + " -> " + badge(&new)})
	}
	if old.SilentInForeground != new.SilentInForeground {
		attrs = append(attrs, attr{"silent_in_foreground", fmt.Sprintf("%t -> %t", old.SilentInForeground, new.SilentInForeground)})
	}
	names, olds, news := translationDiff(old, new)
	for _, n := range names {
		attrs = append(attrs, attr{n, wordDiffText(olds[n], news[n], pal, termtext.Clean)})
	}
	writeAttrs(b, attrs)
}

type textField struct{ name, value string }

// textFields are content's text attributes, in the order shown.
func textFields(c message.Content) []textField {
	return []textField{{"title", c.Title}, {"body", c.Body}, {"open_to_url", c.OpenToURL}, {"tag", c.Tag}}
}

// inlineDiff renders a word diff git-style: [-removed-]{+added+}, coloured
// when enabled.
func inlineDiff(old, new string, pal palette) string {
	return `"` + wordDiffText(old, new, pal, quoted) + `"`
}

// wordDiffText is inlineDiff without the quotes, each piece written by
// esc.
func wordDiffText(old, new string, pal palette, esc func(string) string) string {
	var b strings.Builder
	for _, op := range WordDiff(old, new) {
		t := esc(op.Text)
		switch op.Kind {
		case -1:
			b.WriteString(pal.red("[-" + t + "-]"))
		case 1:
			b.WriteString(pal.green("{+" + t + "+}"))
		default:
			b.WriteString(t)
		}
	}
	return b.String()
}

func badge(c *message.Content) string {
	if c == nil || c.BadgeCount == nil {
		return "(none)"
	}
	return strconv.Itoa(*c.BadgeCount)
}

func targetNoun(kind message.TargetKind) string {
	switch kind {
	case message.TargetDevices:
		return "devices"
	case message.TargetTopics:
		return "topics"
	}
	return "users"
}

func noun1(plural string) string { return strings.TrimSuffix(plural, "s") }

// countOf counts n targets of the plural noun: "1 user", "3 new users".
func countOf(n int, noun string) string { return plural(n, noun1(noun), noun) }

// targetList says "3 users (a, b, c)" for short lists and "12,480 users"
// for long ones.
func targetList(ids []string, n int, noun string) string {
	s := countOf(n, noun)
	if len(ids) > 0 && len(ids) <= listMax {
		clean := make([]string, len(ids))
		for i, id := range ids {
			clean[i] = termtext.Clean(id)
		}
		s += " (" + strings.Join(clean, ", ") + ")"
	}
	return s
}

// headline says what happens to a change's targets, after its address;
// text from the configuration in it is escaped.
func headline(c *planner.Change) string {
	h, _ := actionHeadline(c)
	return h
}

// actionHeadline is headline, and whether the views know the action; an
// unknown one is named as it is.
func actionHeadline(c *planner.Change) (string, bool) {
	if h := localHeadline(c); h != "" {
		return h, true
	}
	noun := targetNoun(c.TargetKind)
	t := c.Targets
	switch c.Action {
	case planner.ActionSendNew:
		return ": send to " + targetList(c.Send, t.Send, "new "+noun), true
	case planner.ActionRetry:
		return ": retry " + targetList(c.Send, t.Send, noun) + retryDetail(t), true
	case planner.ActionReplace:
		return fmt.Sprintf(" will be replaced on devices (tag %s): %s", termtext.Quote(c.Content.Tag), targetList(c.Send, t.Send, noun)), true
	case planner.ActionResend:
		if c.Content.Tag != "" {
			return fmt.Sprintf(" will be sent again under tag %s (devices keep the earlier one): %s", termtext.Quote(c.Content.Tag), targetList(c.Send, t.Send, noun)), true
		}
		return " will be sent again without a tag: " + targetList(c.Send, t.Send, noun), true
	case planner.ActionUpdate:
		return fmt.Sprintf(": badge count %s -> %s on %s", badge(c.Prior), badge(&c.Content), targetList(c.Send, t.Send, noun)), true
	case planner.ActionForget:
		return fmt.Sprintf(" will be forgotten: %s (state only; a push cannot be recalled)", plural(t.Forget, "target", "targets")), true
	case planner.ActionWait:
		when := "later"
		if c.SendAfter != nil {
			when = c.SendAfter.UTC().Format(time.RFC3339)
		}
		return fmt.Sprintf(" waits until %s: %s", when, countOf(t.Waiting, noun)), true
	case planner.ActionExpired:
		when := "its send_before"
		if c.SendBefore != nil {
			when = c.SendBefore.UTC().Format(time.RFC3339)
		}
		return fmt.Sprintf(" has expired (send_before %s passed): %s not delivered, never sent", when, countOf(t.Expired, noun)), true
	case planner.ActionMoved:
		return " has moved from " + termtext.Clean(c.MovedFrom) + ": nothing to send", true
	case planner.ActionAlreadyDelivered:
		return " " + termtext.Clean(c.AlreadyLine()) + ": " + targetList(c.AlreadyDelivered, t.AlreadyDelivered, noun) + ", nothing is sent", true
	case planner.ActionHoldout:
		share := ""
		if c.Variant != nil {
			share = fmt.Sprintf(" (%s of %s)", sharePercent(c.Variant.Share), termtext.Clean(c.Variant.Of))
		}
		return fmt.Sprintf(" holds out %s%s: they receive nothing, recorded for comparison (%s to record)", countOf(t.Total, noun), share, Count(t.Holdout)), true
	case planner.ActionNoOp:
	default:
		// The table's headline (quiet, without c.Local: localHeadline
		// says when).
		r, ok := planner.Info(c.Action)
		if !ok || r.Headline == "" {
			return ": " + termtext.Clean(string(c.Action)), false
		}
		return fillTargets(r.Headline, c, r), true
	}
	if t.TagOnly > 0 {
		return fmt.Sprintf(": nothing to send; %s it under the earlier tag", plural(t.TagOnly, noun1(noun)+" keeps", noun+" keep")), true
	}
	return ": nothing to send", true
}

// fillTargets puts into a phrase of the actions table the targets the
// change counts: those it sends, with their ids, for an action that sends,
// else the row's Counted.
func fillTargets(phrase string, c *planner.Change, r planner.ActionInfo) string {
	noun, t := targetNoun(c.TargetKind), c.Targets
	var targets string
	switch {
	case r.Sends:
		targets = targetList(c.Send, t.Send, noun)
	case r.Counted != nil:
		targets = countOf(*r.Counted(&t), noun)
	}
	return strings.ReplaceAll(phrase, "{targets}", targets)
}

// counted is the TargetCounts field of t that c's headline counts, nil
// for none: its note is left out.
func counted(c *planner.Change, t *planner.TargetCounts) *int {
	if r, _ := planner.Info(c.Action); r.Counted != nil {
		return r.Counted(t)
	}
	return nil
}

// changeNotes are the parenthesised details of a change, as in PlanHuman.
func changeNotes(c *planner.Change) []string {
	t := &c.Targets
	said := counted(c, t) // what the headline counts already (localNotes compares it with c.Targets too)
	var notes []string
	if said != &t.New && t.New > 0 && !localHeld(c) {
		notes = append(notes, Count(t.New)+" new")
	}
	if said != &t.Retry {
		if d := strings.TrimPrefix(retryDetail(*t), " "); d != "" {
			notes = append(notes, strings.Trim(d, "()"))
		}
	}
	if t.Skipped > 0 {
		notes = append(notes, Count(t.Skipped)+" skipped earlier (no_active_device), not retried")
	}
	if t.Held > 0 {
		notes = append(notes, Count(t.Held)+" unknown, held back")
	}
	if t.Capped > 0 && said != &t.Capped {
		notes = append(notes, Count(t.Capped)+" held back by frequency_cap")
	}
	if t.Forget > 0 {
		notes = append(notes, Count(t.Forget)+" no longer configured, forgotten")
	}
	if t.UpToDate > 0 && c.Action != planner.ActionCreate {
		notes = append(notes, Count(t.UpToDate)+" up to date")
	}
	if t.AlreadyDelivered > 0 && said != &t.AlreadyDelivered {
		notes = append(notes, Count(t.AlreadyDelivered)+" "+c.AlreadyLine()+", not sent")
	}
	if t.Repeat > 0 && said != &t.Repeat {
		notes = append(notes, Count(t.Repeat)+" sent again (repeat)")
	}
	if t.Staged > 0 && said != &t.Staged {
		notes = append(notes, Count(t.Staged)+" held for later rollout stages")
	}
	return append(notes, localNotes(c, said)...)
}

// quoted escapes s as inside a double-quoted string, without the quotes.
func quoted(s string) string {
	q := termtext.Quote(s)
	return q[1 : len(q)-1]
}

// WrapText fills text into lines of at most width columns, every line but
// the first indented by indent spaces (the first follows a label of that
// width). A word longer than a line stays whole. width <= 0 leaves text on
// one line.
func WrapText(text string, width, indent int) string {
	if width <= 0 || width-indent < 20 {
		return text
	}
	var b strings.Builder
	col := indent
	for i, word := range strings.Fields(text) {
		n := utf8.RuneCountInString(word)
		switch {
		case i == 0:
		case col+1+n > width:
			b.WriteString("\n" + strings.Repeat(" ", indent))
			col = indent
		default:
			b.WriteByte(' ')
			col++
		}
		b.WriteString(word)
		col += n
	}
	return b.String()
}
