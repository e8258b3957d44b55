package views

import (
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"pushform/message"
	"pushform/plandoc"
	"pushform/planner"
	"pushform/state"
	"pushform/termtext"
)

// MarkdownLimit is the default size cap of PlanMarkdown, in bytes: under
// GitHub's limit of 65,536 characters for a comment (a byte count is never
// below the character count, so the cap holds for any text).
const MarkdownLimit = 65000

// MarkdownMarker starts the marker that ends every markdown plan, so a CI
// job can find the comment it posted earlier and update it rather than add
// another. With a directory the marker names it: one comment per campaign
// directory (see Marker).
const MarkdownMarker = "<!-- pushform plan"

// Marker is the last line of the comment for the campaign directory dir:
// "<!-- pushform plan: campaigns/spring -->", or "<!-- pushform plan -->"
// without one.
func Marker(dir string) string {
	if dir == "" {
		return MarkdownMarker + " -->"
	}
	// "--" cannot end an HTML comment early once doubled dashes are broken.
	d := strings.ReplaceAll(termtext.Clean(dir), "--", "-\u200b-")
	return MarkdownMarker + ": " + strings.ReplaceAll(d, ">", "&gt;") + " -->"
}

// fieldMax caps one title or body in markdown; the service's length bounds
// are not known, and one huge body must not crowd out every other change.
const fieldMax = 2000

// sampleIDs is how many target ids an audience line names.
const sampleIDs = 3

// mdText escapes the characters markdown would read as markup.
var mdText = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`, "<", `\<`, ">", `\>`,
	"&", `\&`, "|", `\|`, "~", `\~`, "#", `\#`, "!", `\!`, "\r", " ", "\n", " ")

// md escapes untrusted text for markdown prose: control characters shown,
// markup characters escaped.
func md(s string) string { return mdText.Replace(termtext.Clean(s)) }

// mdCode renders s as an inline code span that nothing in s can close
// (a longer run of backticks than any in s); pipes are escaped, which
// GitHub honours inside code spans in tables and lists alike.
func mdCode(s string) string {
	s = termtext.Clean(s)
	fence := backtickFence(s, 1)
	pad := ""
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		pad = " "
	}
	return fence + pad + strings.ReplaceAll(s, "|", `\|`) + pad + fence
}

// backtickFence is the shortest run of at least n backticks that s does
// not contain: a code span or block it fences cannot be closed from inside.
func backtickFence(s string, n int) string {
	fence := strings.Repeat("`", n)
	for strings.Contains(s, fence) {
		fence += "`"
	}
	return fence
}

// Lock-screen limits: where iOS and Android cut a notification's title and
// body on the lock screen, in characters. They are estimates that vary
// with the device, font and language (docs/automation/plan-comment.md
// names their sources):
// iOS shows one line of title (about 50 characters) and up to four lines
// of body (about 178); Android's collapsed notification shows one line of
// each (about 65 and 50).
var lockScreens = []lockScreen{
	{"iOS", 50, 178},
	{"Android", 65, 50},
}

type lockScreen struct {
	name        string
	title, body int
}

// Audience is what a plan comment says about who gets each change beyond
// the plan's own targets: what the state knows (device counts the service
// last reported, the recipients list of the last apply). Commands compute
// it from the state; it is saved with a plan for show.
type Audience struct {
	// Devices by address: the devices the service last reported for the
	// targets the change sends to.
	Devices map[string]Devices `json:"devices,omitempty"`
	// Recipients compares the plan's recipients list with the one recorded
	// at the last apply; nil when not compared.
	Recipients *ListDiff `json:"recipients,omitempty"`
}

// Devices counts the devices the service last reported delivering to:
// Count devices over Of targets (the others have no count recorded).
type Devices struct {
	Count int `json:"count"`
	Of    int `json:"of"`
}

// ListDiff is how a list changed: Total ids now, Added and Removed since.
type ListDiff struct {
	Total   int `json:"total"`
	Added   int `json:"added"`
	Removed int `json:"removed"`
}

// MarkdownContext is where a plan comes from and what to do with it: all
// optional.
type MarkdownContext struct {
	// Dir is the campaign directory; it names the comment's marker.
	Dir string
	// Commit is the commit planned (GITHUB_SHA); RunURL the workflow run.
	Commit, RunURL string
	// ApplyCommand is the exact command that applies the saved plan;
	// Refusal, when set, says why apply will refuse it instead.
	ApplyCommand, Refusal string
	Audience              *Audience
	// Policies are the results of the plan's policies: a table at the
	// top.
	Policies []plandoc.Policy
}

// PlanMarkdown shows a plan as the body of a pull-request comment: a
// heading naming the directory, the summary and who gets how many pushes,
// where the plan comes from, every changed address with its action and
// audience, warnings, the apply command, then a collapsed <details> with
// each change as a diff block and its lock-screen previews.
type PlanMarkdown struct {
	w     io.Writer
	limit int
	ctx   MarkdownContext
}

// NewPlanMarkdown returns a markdown plan view writing to w. The body stays
// within limit bytes (MarkdownLimit when limit <= 0) by leaving out whole
// changes from the end, and says how much it left out; the summary is
// never cut.
func NewPlanMarkdown(w io.Writer, limit int) *PlanMarkdown {
	if limit <= 0 {
		limit = MarkdownLimit
	}
	return &PlanMarkdown{w: w, limit: limit}
}

// WithContext sets where the plan comes from and what applies it.
func (v *PlanMarkdown) WithContext(ctx MarkdownContext) *PlanMarkdown {
	v.ctx = ctx
	return v
}

// mdSymbol is an action's symbol as a code span; the blank of a change
// with nothing to send shows as a dot.
func mdSymbol(a planner.Action) string {
	s := Symbol(a)
	if strings.TrimSpace(s) == "" {
		s = "·"
	}
	return mdCode(s)
}

// actionWord names an action in the comment (planner's table); an
// unknown one by its name.
func actionWord(a planner.Action) string {
	if r, ok := planner.Info(a); ok {
		return r.Markdown
	}
	return string(a)
}

// Plan writes the comment body.
func (v *PlanMarkdown) Plan(p *planner.Plan) error {
	limit, ctx := v.limit, v.ctx
	foot := "\n" + Marker(ctx.Dir) + "\n"
	var head strings.Builder
	head.WriteString("### pushform plan")
	if ctx.Dir != "" {
		head.WriteString(" for " + mdCode(ctx.Dir))
	}
	fmt.Fprintf(&head, " · environment %s\n\n", mdCode(p.Environment))
	if p.Service != nil {
		fmt.Fprintf(&head, "**Service:** %s\n\n", mdService(p.Service))
	}
	writePolicyTable(&head, ctx.Policies)
	fmt.Fprintf(&head, "**%s**\n", md(SummaryLine(p)))
	writeTotals(&head, p)
	head.WriteString("\n" + provenance(p, ctx) + "\n")
	if note := RecipientsNote(p); note != "" {
		fmt.Fprintf(&head, "\n**Recipients:** %s\n", md(note))
	}
	if a := ctx.Audience; a != nil && a.Recipients != nil {
		d := a.Recipients
		change := fmt.Sprintf("**+%s / -%s** since the last apply", Count(d.Added), Count(d.Removed))
		if d.Added == 0 && d.Removed == 0 {
			change = "unchanged since the last apply"
		}
		fmt.Fprintf(&head, "\n**Recipients list:** %s, %s.\n", plural(d.Total, "user", "users"), change)
	}
	for _, line := range pacingLines(p) {
		fmt.Fprintf(&head, "\n**Pacing:** %s\n", md(line))
	}
	if note := ShapesNote(p); note != "" {
		fmt.Fprintf(&head, "\n**Review:** %s\n", md(note))
	}

	shown, upToDate := shownChanges(p)
	// The changed addresses stay outside the fold; a list too long for a
	// third of the room is cut, its count kept.
	listAddresses(&head, shown, ctx.Audience, limit/3)
	// Warnings stay outside the fold too, but may take at most a sixth.
	writeWarnings(&head, planWarnings(p), limit/6)
	if len(p.Renames) > 0 {
		fmt.Fprintf(&head, "\n> [!CAUTION]\n> %s\n\n```hcl\n", md(renameAdvice(p)))
		used, listed := 0, 0
		for i, r := range p.Renames {
			// Addresses hold no newline (keys are quoted), so nothing in
			// the block can start a line that closes the fence.
			block := termtext.Lines(r.MovedBlock())
			if i > 0 {
				block = "\n" + block
			}
			if used+len(block) > limit/6 {
				break
			}
			head.WriteString(block)
			used += len(block)
			listed++
		}
		head.WriteString("```\n")
		if n := len(p.Renames) - listed; n > 0 {
			fmt.Fprintf(&head, "\n… and %s more (`pushform plan` prints them all).\n", plural(n, "moved block", "moved blocks"))
		}
	}
	v.writeApplyCommand(&head, p)

	var entries []string
	for _, c := range shown {
		entries = append(entries, markdownChange(c))
	}
	if len(entries) == 0 {
		if upToDate > 0 {
			fmt.Fprintf(&head, "\n%s up to date.\n", plural(upToDate, "address is", "addresses are"))
		}
		_, err := io.WriteString(v.w, head.String()+foot)
		return err
	}

	// Room for the fixed parts: the <details> frame and a worst-case
	// truncation note.
	const noteRoom = 400
	frame := len("\n<details><summary></summary>\n\n</details>\n") + noteRoom + 100
	budget := limit - head.Len() - len(foot) - frame
	n, used := 0, 0
	for _, e := range entries {
		if used+len(e) > budget {
			break
		}
		used += len(e)
		n++
	}
	cut := 0
	for _, e := range entries[n:] {
		cut += utf8.RuneCountInString(e)
	}

	var b strings.Builder
	b.WriteString(head.String())
	what := "Details: " + plural(len(entries), "change", "changes")
	if !p.HasChanges() { // as the human plan says: nothing to send now
		what = "Details: nothing to send now, " + plural(len(entries), "address held back", "addresses held back")
	}
	if upToDate > 0 {
		what += ", " + plural(upToDate, "address", "addresses") + " up to date"
	}
	if n < len(entries) {
		what += " (" + Count(n) + " shown)"
	}
	fmt.Fprintf(&b, "\n<details><summary>%s</summary>\n\n", what)
	b.WriteString(strings.Join(entries[:n], "\n"))
	if n < len(entries) {
		fmt.Fprintf(&b, "\n**Truncated:** %s not shown (%s characters) to keep this comment under %s characters. "+
			"The summary and the list above cover the whole plan; `pushform show PLANFILE` prints every change.\n",
			plural(len(entries)-n, "change is", "changes are"), Count(cut), Count(limit))
	}
	b.WriteString("\n</details>\n")
	b.WriteString(foot)
	_, err := io.WriteString(v.w, b.String())
	return err
}

// pushTotals says who gets how many pushes: "**3 users get 4 pushes**",
// with devices, topics and badge updates when the plan sends to them.
func pushTotals(p *planner.Plan) string {
	type tally struct {
		ids    map[string]bool
		pushes int
	}
	var users, devices, topics tally
	badges := 0
	for _, c := range p.Changes {
		if c.Targets.Send == 0 {
			continue
		}
		if c.Kind == message.KindBadge {
			badges += c.Targets.Send
			continue
		}
		t := &users
		switch c.TargetKind {
		case message.TargetDevices:
			t = &devices
		case message.TargetTopics:
			t = &topics
		}
		t.pushes += c.Targets.Send
		if t.ids == nil {
			t.ids = map[string]bool{}
		}
		for _, id := range c.Send {
			t.ids[id] = true
		}
	}
	var parts []string
	for _, t := range []struct {
		tally
		one, many string
	}{{users, "user", "users"}, {devices, "device", "devices"}, {topics, "topic", "topics"}} {
		if t.pushes == 0 {
			continue
		}
		verb := " get "
		if len(t.ids) == 1 {
			verb = " gets "
		}
		parts = append(parts, "**"+plural(len(t.ids), t.one, t.many)+verb+plural(t.pushes, "push", "pushes")+"**")
	}
	if badges > 0 {
		parts = append(parts, "**"+plural(badges, "badge update", "badge updates")+"**")
	}
	return strings.Join(parts, " · ")
}

// provenance is the line saying where the plan comes from: commit, run,
// directory, state serial and time.
func provenance(p *planner.Plan, ctx MarkdownContext) string {
	var parts []string
	if ctx.Commit != "" {
		c := ctx.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		parts = append(parts, "commit "+mdCode(c))
	}
	if ctx.RunURL != "" {
		if u, err := url.Parse(ctx.RunURL); err == nil && (u.Scheme == "https" || u.Scheme == "http") {
			parts = append(parts, "[workflow run]("+strings.NewReplacer("(", "%28", ")", "%29", " ", "%20").Replace(u.String())+")")
		}
	}
	if ctx.Dir != "" {
		parts = append(parts, "directory "+mdCode(ctx.Dir))
	}
	if p.StateLineage != "" {
		parts = append(parts, fmt.Sprintf("state serial %d", p.StateSerial))
	}
	if !p.CreatedAt.IsZero() {
		parts = append(parts, "planned at "+p.CreatedAt.UTC().Format(time.RFC3339))
	}
	return strings.Join(parts, " · ")
}

// listAddresses lists the changed addresses, one line each with the
// action symbol and the audience, as many as fit in room bytes.
func listAddresses(b *strings.Builder, changes []*planner.Change, a *Audience, room int) {
	if len(changes) == 0 {
		return
	}
	b.WriteString("\n")
	used, listed := 0, 0
	for _, c := range changes {
		line := "- " + mdSymbol(c.Action) + " " + mdCode(c.Address) + " **" + actionWord(c.Action) + "**"
		if c.MovedFrom != "" {
			line += " (moved from " + mdCode(c.MovedFrom) + ")"
		}
		if aud := audienceLine(c, a); aud != "" {
			line += ": " + aud
		}
		if w := lockScreenWarnings(c.Content); len(w) > 0 && sends(c) && !c.Content.Personal() {
			short := make([]string, len(w))
			for i, x := range w {
				short[i] = x.short
			}
			line += " · ⚠️ " + md(strings.Join(short, "; "))
		}
		line += "\n"
		if used+len(line) > room-200 {
			break
		}
		b.WriteString(line)
		used += len(line)
		listed++
	}
	if rest := len(changes) - listed; rest > 0 {
		fmt.Fprintf(b, "- … and %s (every one is counted in the summary above)\n", plural(rest, "more changed address", "more changed addresses"))
	}
}

// sends reports whether a change's content reaches devices now or later.
func sends(c *planner.Change) bool {
	return c.Action.Sends() && c.Kind != message.KindBadge
}

// audienceLine says who a change reaches: targets sent to, the devices
// the service last reported for them, how the targets changed since the
// last apply, and a few sample ids.
func audienceLine(c *planner.Change, a *Audience) string {
	noun := targetNoun(c.TargetKind)
	t := c.Targets
	var parts []string
	switch c.Action {
	case planner.ActionForget:
		return countOf(t.Forget, noun) + " forgotten (state only)"
	case planner.ActionWait:
		parts = append(parts, countOf(t.Waiting, noun)+" later")
	case planner.ActionAlreadyDelivered:
		return countOf(t.AlreadyDelivered, noun) + " already had it, " + mdEarlier(c) + ": nothing is sent"
	case planner.ActionHoldout:
		return countOf(len(c.Holdout), noun) + " held out, recorded, nothing is sent"
	case planner.ActionNoOp:
		if t.TagOnly > 0 {
			return plural(t.TagOnly, noun1(noun)+" keeps", noun+" keep") + " it under the earlier tag"
		}
		return "nothing to send"
	default:
		if r, _ := planner.Info(c.Action); r.Audience != "" {
			return fillTargets(r.Audience, c, r)
		}
		if t.Send == 0 { // an action that holds everything back
			return "nothing is sent"
		}
		parts = append(parts, countOf(t.Send, noun))
	}
	if a != nil && c.TargetKind != message.TargetDevices {
		if d, ok := a.Devices[c.Address]; ok && d.Of > 0 {
			s := plural(d.Count, "device", "devices") + " last reported"
			if d.Of < t.Send {
				s += " for " + Count(d.Of) + " of them"
			}
			parts = append(parts, s)
		}
	}
	if c.Action != planner.ActionCreate && (t.New > 0 || t.Forget > 0) {
		parts = append(parts, fmt.Sprintf("+%s / -%s since the last apply", Count(t.New), Count(t.Forget)))
	}
	line := strings.Join(parts, ", ")
	ids := c.Send
	if len(ids) > sampleIDs {
		ids = ids[:sampleIDs]
	}
	if len(ids) > 0 {
		codes := make([]string, len(ids))
		for i, id := range ids {
			codes[i] = mdCode(id)
		}
		sample := strings.Join(codes, ", ")
		if len(c.Send) > len(ids) {
			sample = "e.g. " + sample + ", …"
		}
		line += " (" + sample + ")"
	}
	return line
}

// mdEarlier says where c's targets had its content, for the list of
// addresses: "delivered on 2026-04-20 under `notification.x` (forgotten)"
// (the details add the request id).
func mdEarlier(c *planner.Change) string {
	if len(c.Earlier) == 0 {
		return "the ledger says so"
	}
	e := c.Earlier[0]
	var s string
	switch {
	case e.InPlan:
		s = "sent by " + mdCode(e.Address) + " in this plan"
	case e.Outcome == state.Unknown:
		s = "maybe delivered on " + e.Time.UTC().Format(time.DateOnly) + " under " + mdCode(e.Address) + " (unknown outcome)"
	default:
		s = "delivered on " + e.Time.UTC().Format(time.DateOnly) + " under " + mdCode(e.Address)
	}
	if e.Forgotten {
		s += " (forgotten since)"
	}
	if n := len(c.Earlier) - 1; n > 0 {
		s += fmt.Sprintf(" and %d more", n)
	}
	return s
}

// writeWarnings writes the plan's warnings as a GitHub alert, listing as
// many as fit in room bytes and counting the rest.
func writeWarnings(b *strings.Builder, warnings []string, room int) {
	if len(warnings) == 0 {
		return
	}
	var lines strings.Builder
	listed := 0
	for _, warn := range warnings {
		line := "> - " + md(truncate(warn, fieldMax)) + "\n"
		if lines.Len()+len(line) > room-100 {
			break
		}
		lines.WriteString(line)
		listed++
	}
	b.WriteString("\n> [!WARNING]\n")
	b.WriteString(lines.String())
	if n := len(warnings) - listed; n > 0 {
		fmt.Fprintf(b, "> - ... and %s more (see `pushform show PLANFILE`)\n", plural(n, "warning", "warnings"))
	}
}

// writeApplyCommand says how to apply the plan, or why apply will refuse it.
func (v *PlanMarkdown) writeApplyCommand(b *strings.Builder, p *planner.Plan) {
	ctx := v.ctx
	switch {
	case ctx.Refusal != "":
		// The reason names every rename: cut, the moved blocks are above.
		fmt.Fprintf(b, "\n> [!CAUTION]\n> **Apply will refuse this plan:** %s\n", md(truncate(ctx.Refusal, min(fieldMax, v.limit/10))))
	case ctx.ApplyCommand != "" && p.HasChanges():
		// A shell command holds no newline, so only a backtick run could
		// close the fence.
		fence := backtickFence(ctx.ApplyCommand, 3)
		lead := "To send exactly this plan:"
		if p.Summary.Requests == 0 {
			lead = "Applying this plan sends nothing: it records these changes in the state. To record them:"
		}
		fmt.Fprintf(b, "\n%s\n\n%ssh\n%s\n%s\n", lead, fence, termtext.Clean(ctx.ApplyCommand), fence)
	}
}

// markdownChange renders one change: a heading with its symbol and
// address, what happens to whom, a diff block of its content (with the
// notes, local times, variants and rollout stages as context lines), and
// lock-screen previews of what it sends.
func markdownChange(c *planner.Change) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#### %s %s\n\n", mdSymbol(c.Action), mdCode(c.Address))
	if c.MovedFrom != "" {
		fmt.Fprintf(&b, "%s has moved to %s: the state records the move, nothing is sent for it.\n", mdCode(c.MovedFrom), mdCode(c.Address))
	}
	if c.Action != planner.ActionMoved {
		if c.MovedFrom != "" {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s%s\n", mdCode(c.Address), md(headline(c)))
	}
	var lines []string
	switch {
	case c.Action == planner.ActionForget:
		lines = append(lines, fmt.Sprintf("- %s: %s (a push cannot be recalled)", termtext.Clean(c.Address), plural(c.Targets.Forget, "target forgotten", "targets forgotten")))
	case c.Action == planner.ActionAlreadyDelivered || c.Action == planner.ActionDisabled ||
		c.Action == planner.ActionStage || c.Action == planner.ActionHoldout || c.Action == planner.ActionUnfilled:
		// Nothing is sent now: the headline and the notes say why.
	case newContent(c):
		lines = contentLines("+ ", c.Content)
	case c.Prior != nil:
		lines = contentDiffLines(*c.Prior, c.Content)
	case sends(c):
		// The same content to more targets: shown as context.
		lines = contentLines("  ", c.Content)
	}
	if notes := changeNotes(c); len(notes) > 0 && c.Action != planner.ActionForget {
		lines = append(lines, "  ("+strings.Join(notes, "; ")+")")
	}
	// Local delivery times, variants and rollout stages, as context lines.
	if l := localLine(c); l != "" {
		lines = append(lines, "  "+termtext.Clean(l))
	}
	for _, l := range extraLines(c) {
		lines = append(lines, "  "+termtext.Clean(l))
	}
	if len(lines) > 0 {
		// Every line starts with a diff marker, so none can close the fence.
		b.WriteString("\n```diff\n" + strings.Join(lines, "\n") + "\n```\n")
	}
	switch {
	case c.Content.Personal():
		// The template cut means nothing: its texts, when asked for.
		b.WriteString(samplePreview(c))
	case sends(c):
		b.WriteString(lockScreenPreview(c.Content))
	}
	return b.String()
}

// contentLines are content's fields as diff lines, each after marker.
func contentLines(marker string, c message.Content) []string {
	var lines []string
	for _, a := range contentAttrs(c, func(v string) string { return termtext.Quote(truncate(v, fieldMax)) }) {
		lines = append(lines, marker+a.name+": "+a.value)
	}
	return lines
}

// contentDiffLines are a changed content's diff lines: - old, + new, and a
// ~ context line with the word changes marked [-…-]{+…+}.
func contentDiffLines(old, new message.Content) []string {
	var lines []string
	o, n := textFields(old), textFields(new)
	for i := range o {
		if o[i].value == n[i].value {
			continue
		}
		name := o[i].name
		ov, nv := truncate(o[i].value, fieldMax), truncate(n[i].value, fieldMax)
		if ov != "" {
			lines = append(lines, "- "+name+": "+termtext.Quote(ov))
		}
		if nv != "" {
			lines = append(lines, "+ "+name+": "+termtext.Quote(nv))
		}
		if ov != "" && nv != "" {
			lines = append(lines, "~ "+name+": "+inlineDiff(ov, nv, false))
		}
	}
	if badge(&old) != badge(&new) {
		lines = append(lines, "- badge_count: "+badge(&old), "+ badge_count: "+badge(&new))
	}
	names, olds, news := translationDiff(old, new)
	for _, n := range names {
		if olds[n] != "" {
			lines = append(lines, "- "+n+": "+termtext.Clean(truncate(olds[n], fieldMax)))
		}
		if news[n] != "" {
			lines = append(lines, "+ "+n+": "+termtext.Clean(truncate(news[n], fieldMax)))
		}
	}
	if old.SilentInForeground != new.SilentInForeground {
		lines = append(lines, fmt.Sprintf("- silent_in_foreground: %t", old.SilentInForeground), fmt.Sprintf("+ silent_in_foreground: %t", new.SilentInForeground))
	}
	return lines
}

// lockScreenPreview shows content's title and body as each lock screen
// cuts them, with a warning for text that is cut and for a link that is
// not https.
func lockScreenPreview(c message.Content) string {
	if c.Title == "" && c.Body == "" && c.OpenToURL == "" {
		return ""
	}
	var b strings.Builder
	if c.Title != "" || c.Body != "" {
		b.WriteString("\n| Lock screen | Title | Body |\n|---|---|---|\n")
		for _, ls := range lockScreens {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", ls.name, md(cutAt(c.Title, ls.title)), md(cutAt(c.Body, ls.body)))
		}
	}
	for _, w := range lockScreenWarnings(c) {
		fmt.Fprintf(&b, "\n⚠️ %s", md(w.text))
		if w.code != "" {
			// In a code span: an untrusted link is shown, not linked.
			b.WriteString(" " + mdCode(w.code))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// previewWarning is one lock-screen warning: text, then code (a link)
// shown in a code span; short is its form in the list of addresses.
type previewWarning struct{ text, code, short string }

// lockScreenWarnings say which texts a lock screen cuts, and whether the
// link is not https.
func lockScreenWarnings(c message.Content) []previewWarning {
	var out []previewWarning
	for _, f := range []struct {
		name, value string
		max         func(lockScreen) int
	}{{"title", c.Title, func(l lockScreen) int { return l.title }}, {"body", c.Body, func(l lockScreen) int { return l.body }}} {
		n := utf8.RuneCountInString(f.value)
		var cutBy, names []string
		for _, ls := range lockScreens {
			if m := f.max(ls); n > m {
				cutBy = append(cutBy, fmt.Sprintf("%s after %d", ls.name, m))
				names = append(names, ls.name)
			}
		}
		if len(cutBy) > 0 {
			out = append(out, previewWarning{
				text:  fmt.Sprintf("%s (%d characters) is cut on the lock screen: %s", f.name, n, strings.Join(cutBy, ", ")),
				short: fmt.Sprintf("%s cut on %s", f.name, strings.Join(names, " and ")),
			})
		}
	}
	if c.OpenToURL != "" {
		if u, err := url.Parse(c.OpenToURL); err != nil || u.Scheme != "https" {
			out = append(out, previewWarning{text: "open_to_url is not https:", code: truncate(c.OpenToURL, 200), short: "open_to_url not https"})
		}
	}
	return out
}

// cutAt cuts s after max characters as a lock screen does, with an
// ellipsis; newlines show as spaces.
func cutAt(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return strings.TrimRight(string(r[:max]), " ") + "…"
}

// truncate shortens s to at most max bytes on a rune boundary, saying how
// much it left out.
func truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%s more bytes)", Count(len(s)-cut))
}
