package views

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"pushform/planner"
	"pushform/termtext"
)

// MarkdownLimit is the default size cap of PlanMarkdown, in bytes: under
// GitHub's limit of 65,536 characters for a comment (a byte count is never
// below the character count, so the cap holds for any text).
const MarkdownLimit = 65000

// MarkdownMarker ends every markdown plan, so a CI job can find the comment
// it posted earlier and update it rather than add another.
const MarkdownMarker = "<!-- pushform plan -->"

// fieldMax caps one title or body in markdown; the service's length bounds
// are not known, and one huge body must not crowd out every other change.
const fieldMax = 2000

// htmlText escapes text for an HTML element's content.
var htmlText = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// mdText escapes the characters markdown would read as markup.
var mdText = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`, "<", `\<`, ">", `\>`,
	"&", `\&`, "|", `\|`, "~", `\~`, "#", `\#`, "\r", " ", "\n", " ")

// PlanMarkdown shows a plan as the body of a pull-request comment: the
// summary line first, warnings, then a collapsed <details> with every change
// and word diffs of changed texts.
type PlanMarkdown struct {
	w     io.Writer
	limit int
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

// Plan writes the comment body.
func (v *PlanMarkdown) Plan(p *planner.Plan) error {
	w, limit := v.w, v.limit
	var head strings.Builder
	fmt.Fprintf(&head, "**%s**\n\n", mdText.Replace(SummaryLine(p)))
	fmt.Fprintf(&head, "Environment `%s`", strings.ReplaceAll(termtext.Clean(p.Environment), "`", "'"))
	if p.StateLineage != "" {
		fmt.Fprintf(&head, " · state serial %d", p.StateSerial)
	}
	if !p.CreatedAt.IsZero() {
		fmt.Fprintf(&head, " · planned at %s", p.CreatedAt.UTC().Format(time.RFC3339))
	}
	head.WriteString("\n")
	const foot = "\n" + MarkdownMarker + "\n"
	for _, line := range pacingLines(p) {
		fmt.Fprintf(&head, "\n**Pacing:** %s\n", mdText.Replace(termtext.Clean(line)))
	}
	// Warnings stay outside the fold, but may take at most half the room.
	writeWarnings(&head, p.Warnings, limit/2-head.Len())
	if len(p.Renames) > 0 {
		fmt.Fprintf(&head, "\n> [!CAUTION]\n> %s\n\n```hcl\n", mdText.Replace(renameAdvice(p)))
		for i, r := range p.Renames {
			if i > 0 {
				head.WriteString("\n")
			}
			// Addresses hold no newline (keys are quoted), so nothing in
			// the block can start a line that closes the fence.
			head.WriteString(termtext.Lines(r.MovedBlock()))
		}
		head.WriteString("```\n")
	}

	upToDate := 0
	var entries []string
	for _, c := range p.Changes {
		if upToDateChange(c) {
			upToDate++
			continue
		}
		entries = append(entries, markdownChange(c))
	}
	if len(entries) == 0 {
		if upToDate > 0 {
			fmt.Fprintf(&head, "\n%s up to date.\n", plural(upToDate, "address is", "addresses are"))
		}
		_, err := io.WriteString(w, head.String()+foot)
		return err
	}

	// Room for the fixed parts: the <details> frame, the <pre> and a
	// worst-case truncation note.
	const noteRoom = 400
	frame := len("\n<details><summary></summary>\n\n<pre>\n</pre>\n\n</details>\n") + noteRoom
	budget := limit - head.Len() - len(foot) - frame
	shown, used := 0, 0
	for _, e := range entries {
		if used+len(e) > budget {
			break
		}
		used += len(e)
		shown++
	}
	cut := 0
	for _, e := range entries[shown:] {
		cut += utf8.RuneCountInString(e)
	}

	var b strings.Builder
	b.WriteString(head.String())
	what := plural(len(entries), "change", "changes")
	if upToDate > 0 {
		what += ", " + plural(upToDate, "address", "addresses") + " up to date"
	}
	if shown < len(entries) {
		what += " (" + Count(shown) + " shown)"
	}
	fmt.Fprintf(&b, "\n<details><summary>%s</summary>\n\n<pre>\n", what)
	b.WriteString(strings.TrimSuffix(strings.Join(entries[:shown], "\n"), "\n"))
	b.WriteString("\n</pre>\n")
	if shown < len(entries) {
		fmt.Fprintf(&b, "\n**Truncated:** %s not shown (%s characters) to keep this comment under %s characters. "+
			"The summary above covers the whole plan; `pushform show PLANFILE` prints every change.\n",
			plural(len(entries)-shown, "change is", "changes are"), Count(cut), Count(limit))
	}
	b.WriteString("\n</details>\n")
	b.WriteString(foot)
	_, err := io.WriteString(w, b.String())
	return err
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
		line := "> - " + mdText.Replace(termtext.Clean(truncate(warn, fieldMax))) + "\n"
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

// markdownChange renders one change as HTML-escaped lines for a <pre>
// block, ending in a newline; deleted and inserted words are <del> and <ins>.
func markdownChange(c *planner.Change) string {
	s := markdownChangeBody(c)
	for _, line := range extraLines(c) {
		s += "      " + htmlText.Replace(termtext.Clean(line)) + "\n"
	}
	return s
}

func markdownChangeBody(c *planner.Change) string {
	var b strings.Builder
	if c.MovedFrom != "" {
		fmt.Fprintf(&b, "%s <b>%s</b> has moved to <b>%s</b>\n", Symbol(planner.ActionMoved), htmlText.Replace(termtext.Clean(c.MovedFrom)), htmlText.Replace(termtext.Clean(c.Address)))
		if c.Action == planner.ActionMoved {
			fmt.Fprintf(&b, "      (%s)\n", htmlText.Replace(strings.Join(append([]string{"nothing is sent; the state records the move"}, changeNotes(c)...), "; ")))
			return b.String()
		}
	}
	fmt.Fprintf(&b, "%s <b>%s</b>%s\n", Symbol(c.Action), htmlText.Replace(termtext.Clean(c.Address)), htmlText.Replace(headline(c)))
	if c.Action == planner.ActionForget {
		return b.String()
	}
	if c.Action == planner.ActionExpired || c.Action == planner.ActionCapped || c.Action == planner.ActionAlreadyDelivered || c.Action == planner.ActionDisabled ||
		c.Action == planner.ActionStage || c.Action == planner.ActionHoldout {
		if notes := changeNotes(c); len(notes) > 0 {
			fmt.Fprintf(&b, "      (%s)\n", htmlText.Replace(strings.Join(notes, "; ")))
		}
		if l := localLine(c); l != "" {
			fmt.Fprintf(&b, "      %s\n", htmlText.Replace(l))
		}
		return b.String()
	}
	var attrs []attr
	switch {
	case c.Action == planner.ActionCreate || c.Action == planner.ActionWait || c.Action == planner.ActionQuiet && c.Prior == nil:
		attrs = contentAttrs(c.Content, func(v string) string {
			return `"` + htmlText.Replace(quoted(truncate(v, fieldMax))) + `"`
		})
	case c.Prior != nil:
		old, new := textFields(*c.Prior), textFields(c.Content)
		for i := range old {
			if old[i].value != new[i].value {
				attrs = append(attrs, attr{old[i].name, htmlWordDiff(old[i].value, new[i].value)})
			}
		}
		if badge(c.Prior) != badge(&c.Content) {
			attrs = append(attrs, attr{"badge_count", fmt.Sprintf("<del>%s</del> -&gt; <ins>%s</ins>", badge(c.Prior), badge(&c.Content))})
		}
		if c.Prior.SilentInForeground != c.Content.SilentInForeground {
			attrs = append(attrs, attr{"silent_in_foreground", fmt.Sprintf("<del>%t</del> -&gt; <ins>%t</ins>", c.Prior.SilentInForeground, c.Content.SilentInForeground)})
		}
	}
	writeAttrs(&b, attrs)
	if notes := changeNotes(c); len(notes) > 0 {
		fmt.Fprintf(&b, "      (%s)\n", htmlText.Replace(strings.Join(notes, "; ")))
	}
	if l := localLine(c); l != "" {
		fmt.Fprintf(&b, "      %s\n", htmlText.Replace(l))
	}
	return b.String()
}

// htmlWordDiff renders a word diff with <del> and <ins>, quoted so newlines
// and control characters stay visible.
func htmlWordDiff(old, new string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, op := range WordDiff(truncate(old, fieldMax), truncate(new, fieldMax)) {
		t := htmlText.Replace(quoted(op.Text))
		switch op.Kind {
		case -1:
			b.WriteString("<del>" + t + "</del>")
		case 1:
			b.WriteString("<ins>" + t + "</ins>")
		default:
			b.WriteString(t)
		}
	}
	b.WriteByte('"')
	return b.String()
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
