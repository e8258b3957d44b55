// Package render turns plans and apply results into text for people (human
// and markdown) and machines (JSON). Nothing here plans or sends.
package render

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"pushform/message"
	"pushform/planner"
)

// listMax is how many target ids a change lists before it shows counts only.
const listMax = 5

// Symbol returns the marker of an action in human output.
func Symbol(a planner.Action) string {
	switch a {
	case planner.ActionCreate, planner.ActionSendNew:
		return "+"
	case planner.ActionRetry:
		return "↻"
	case planner.ActionReplace, planner.ActionUpdate:
		return "~"
	case planner.ActionResend:
		return "!"
	case planner.ActionForget:
		return "-"
	case planner.ActionWait:
		return "…"
	}
	return " "
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
	switch a {
	case planner.ActionCreate, planner.ActionSendNew:
		return p.green(s)
	case planner.ActionForget:
		return p.red(s)
	case planner.ActionResend:
		return p.yellow(s)
	}
	return p.yellow(s)
}

// PlanHuman writes the plan as people read it in a terminal or a log.
func PlanHuman(w io.Writer, p *planner.Plan, color bool) error {
	pal := palette(color)
	var b strings.Builder
	upToDate := 0
	var shown []*planner.Change
	for _, c := range p.Changes {
		if c.Action == planner.ActionNoOp && len(c.Held) == 0 {
			upToDate++
			continue
		}
		shown = append(shown, c)
	}
	if len(shown) > 0 {
		b.WriteString("pushform will perform the following actions:\n")
	}
	for _, c := range shown {
		b.WriteString("\n")
		writeChange(&b, c, pal)
	}
	if upToDate > 0 {
		fmt.Fprintf(&b, "\n%s up to date.\n", plural(upToDate, "address is", "addresses are"))
	}
	for _, warn := range p.Warnings {
		fmt.Fprintf(&b, "\n%s %s\n", pal.yellow("Warning:"), warn)
	}
	b.WriteString("\n")
	b.WriteString(pal.bold(SummaryLine(p)))
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// SummaryLine is the one-line verdict, e.g. "Plan: 2 to create, 1 to
// replace, 0 to forget; 12,480 targets in 27 requests."
func SummaryLine(p *planner.Plan) string {
	if !p.HasChanges() {
		s := "No changes. Devices are up to date with the configuration."
		if p.Summary.Wait > 0 {
			s += fmt.Sprintf(" %s waiting for send_after.", plural(p.Summary.Wait, "address is", "addresses are"))
		}
		return s
	}
	s := p.Summary
	parts := []string{fmt.Sprintf("%d to create", s.Create)}
	optional := []struct {
		n    int
		what string
	}{{s.SendNew, "to send to new targets"}, {s.Retry, "to retry"}}
	for _, o := range optional {
		if o.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", o.n, o.what))
		}
	}
	parts = append(parts, fmt.Sprintf("%d to replace", s.Replace))
	for _, o := range []struct {
		n    int
		what string
	}{{s.Resend, "to resend"}, {s.Update, "to update"}, {s.Wait, "waiting"}} {
		if o.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", o.n, o.what))
		}
	}
	parts = append(parts, fmt.Sprintf("%d to forget", s.Forget))
	return fmt.Sprintf("Plan: %s; %s in %s.", strings.Join(parts, ", "),
		plural(s.Targets, "target", "targets"), plural(s.Requests, "request", "requests"))
}

func writeChange(b *strings.Builder, c *planner.Change, pal palette) {
	fmt.Fprintf(b, "  %s %s%s\n", pal.symbol(c.Action), pal.bold(c.Address), headline(c))
	if c.Action == planner.ActionForget {
		return
	}
	if c.Action == planner.ActionCreate || c.Action == planner.ActionWait {
		writeContent(b, c.Content)
	} else if c.Prior != nil {
		writeContentDiff(b, *c.Prior, c.Content, pal)
	}
	if notes := changeNotes(c); len(notes) > 0 {
		fmt.Fprintf(b, "      (%s)\n", strings.Join(notes, "; "))
	}
}

// retryDetail explains why targets are sent again, e.g. " (2 failed, 1 unknown)".
func retryDetail(t planner.TargetCounts) string {
	var parts []string
	if t.Retry > 0 {
		parts = append(parts, fmt.Sprintf("%d failed", t.Retry))
	}
	if t.Unknown > 0 {
		parts = append(parts, fmt.Sprintf("%d unknown", t.Unknown))
	}
	if t.Reachable > 0 {
		parts = append(parts, fmt.Sprintf("%d reachable again", t.Reachable))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func writeContent(b *strings.Builder, c message.Content) {
	field := func(name, v string) {
		if v != "" {
			fmt.Fprintf(b, "      %-12s %s\n", name+":", strconv.Quote(v))
		}
	}
	field("title", c.Title)
	field("body", c.Body)
	field("open_to_url", c.OpenToURL)
	field("tag", c.Tag)
	if c.BadgeCount != nil {
		fmt.Fprintf(b, "      %-12s %d\n", "badge_count:", *c.BadgeCount)
	}
	if c.SilentInForeground {
		fmt.Fprintf(b, "      %-12s true\n", "silent:")
	}
}

func writeContentDiff(b *strings.Builder, old, new message.Content, pal palette) {
	text := func(name, o, n string) {
		if o == n {
			return
		}
		fmt.Fprintf(b, "      %-12s %s\n", name+":", inlineDiff(o, n, pal))
	}
	text("title", old.Title, new.Title)
	text("body", old.Body, new.Body)
	text("open_to_url", old.OpenToURL, new.OpenToURL)
	text("tag", old.Tag, new.Tag)
	if badge(&old) != badge(&new) {
		fmt.Fprintf(b, "      %-12s %s -> %s\n", "badge_count:", badge(&old), badge(&new))
	}
	if old.SilentInForeground != new.SilentInForeground {
		fmt.Fprintf(b, "      %-12s %t -> %t\n", "silent:", old.SilentInForeground, new.SilentInForeground)
	}
}

// inlineDiff renders a word diff git-style: [-removed-]{+added+}, coloured
// when enabled.
func inlineDiff(old, new string, pal palette) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, op := range WordDiff(old, new) {
		q := strconv.Quote(op.Text)
		t := q[1 : len(q)-1]
		switch op.Kind {
		case -1:
			b.WriteString(pal.red("[-" + t + "-]"))
		case 1:
			b.WriteString(pal.green("{+" + t + "+}"))
		default:
			b.WriteString(t)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func badge(c *message.Content) string {
	if c == nil || c.BadgeCount == nil {
		return "(none)"
	}
	return strconv.Itoa(*c.BadgeCount)
}

func targetNoun(kind string) string {
	switch kind {
	case "device_ids":
		return "devices"
	case "topics":
		return "topics"
	}
	return "users"
}

func noun1(plural string) string { return strings.TrimSuffix(plural, "s") }

// targetList says "3 users (a, b, c)" for short lists and "12,480 users"
// for long ones.
func targetList(ids []string, n int, noun string) string {
	s := plural(n, noun1(noun), noun)
	if len(ids) > 0 && len(ids) <= listMax {
		s += " (" + strings.Join(ids, ", ") + ")"
	}
	return s
}

// plural formats n with thousands separators and the right noun.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return Count(n) + " " + many
}

// Count formats n with thousands separators: 12,480.
func Count(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + Count(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// jsonPlan is the documented shape of plan --json.
type jsonPlan struct {
	FormatVersion string           `json:"format_version"`
	Environment   string           `json:"environment"`
	CreatedAt     time.Time        `json:"created_at"`
	StateLineage  string           `json:"state_lineage,omitempty"`
	StateSerial   uint64           `json:"state_serial"`
	Changes       []jsonChange     `json:"changes"`
	Warnings      []string         `json:"warnings"`
	Summary       planner.Summary  `json:"summary"`
	HasChanges    bool             `json:"has_changes"`
	Requests      []jsonRequestRef `json:"requests"`
}

type jsonChange struct {
	Address    string               `json:"address"`
	Action     planner.Action       `json:"action"`
	Kind       string               `json:"kind"`
	TargetKind string               `json:"target_kind"`
	Targets    planner.TargetCounts `json:"targets"`
	Content    message.Content      `json:"content"`
	Prior      *message.Content     `json:"prior,omitempty"`
	SendAfter  *time.Time           `json:"send_after,omitempty"`
	Warnings   []string             `json:"warnings,omitempty"`
}

type jsonRequestRef struct {
	Targets   int      `json:"targets"`
	Addresses []string `json:"addresses"`
}

// PlanJSON writes the plan as one JSON document (the plan --json format).
func PlanJSON(w io.Writer, p *planner.Plan) error {
	out := jsonPlan{
		FormatVersion: planner.FormatVersion,
		Environment:   p.Environment,
		CreatedAt:     p.CreatedAt,
		StateLineage:  p.StateLineage,
		StateSerial:   p.StateSerial,
		Changes:       make([]jsonChange, 0, len(p.Changes)),
		Warnings:      p.Warnings,
		Summary:       p.Summary,
		HasChanges:    p.HasChanges(),
		Requests:      make([]jsonRequestRef, 0, len(p.Batches)),
	}
	if out.Warnings == nil {
		out.Warnings = []string{}
	}
	for _, c := range p.Changes {
		out.Changes = append(out.Changes, jsonChange{Address: c.Address, Action: c.Action, Kind: string(c.Kind), TargetKind: string(c.TargetKind),
			Targets: c.Targets, Content: c.Content, Prior: c.Prior, SendAfter: c.SendAfter, Warnings: c.Warnings})
	}
	for _, bt := range p.Batches {
		r := jsonRequestRef{}
		for _, pt := range bt.Parts {
			r.Targets += pt.To - pt.From
			r.Addresses = append(r.Addresses, p.Changes[pt.Change].Address)
		}
		out.Requests = append(out.Requests, r)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
