package views

import (
	"fmt"
	"io"
	"strings"

	"pushform/config"
	"pushform/message"
	"pushform/planner"
	"pushform/termtext"
)

// Render shows what people would receive of an address (pushform
// render): each person's text, the translation and variant they get, or
// why they are held.
type Render interface {
	Render(addr string, rs []Rendered) error
}

// Rendered is what one person would receive of an address.
type Rendered struct {
	Target     string
	TargetKind message.TargetKind
	// Address is what the person is sent under: the notification, or the
	// variant they get (Variant names it); "" with HeldOut, when they are
	// in its holdout and get nothing.
	Address string
	Variant string
	HeldOut bool
	// Personal says the text is filled in per person: Rendering says what
	// it is for this one, or why they are held. Otherwise Content is the
	// text everyone gets.
	Personal  bool
	Rendering config.Rendering
	Content   message.Content
}

var (
	_ Render = (*RenderHuman)(nil)
	_ Render = (*RenderJSON)(nil)
)

// RenderHuman shows renders as aligned text, one block per person.
type RenderHuman struct{ w io.Writer }

// NewRenderHuman returns a human render view writing to w.
func NewRenderHuman(w io.Writer) *RenderHuman { return &RenderHuman{w: w} }

// Render writes a block per person: who, then what they get.
func (v *RenderHuman) Render(addr string, rs []Rendered) error {
	var b strings.Builder
	for i, r := range rs {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s %s", noun1(targetNoun(r.TargetKind)), termtext.Quote(r.Target))
		if r.Rendering.Locale != "" {
			fmt.Fprintf(&b, " (locale %s)", termtext.Clean(r.Rendering.Locale))
		}
		b.WriteString(":\n")
		switch {
		case r.HeldOut:
			fmt.Fprintf(&b, "  held out: in the holdout of %s, receives nothing\n", termtext.Clean(addr))
			continue
		case r.Rendering.Held != "":
			fmt.Fprintf(&b, "  held: %s; nothing is sent to this %s\n", termtext.Clean(r.Rendering.Held), noun1(targetNoun(r.TargetKind)))
			continue
		}
		var attrs []attr
		if r.Variant != "" {
			attrs = append(attrs, attr{"variant", termtext.Quote(r.Variant)})
		}
		if r.Personal {
			attrs = append(attrs, attr{"translation", translationName(r.Rendering.Translation)})
		}
		attrs = append(attrs, contentAttrs(r.Content, termtext.Quote)...)
		for _, a := range attrs {
			fmt.Fprintf(&b, "  %-*s %s\n", 20, a.name+":", a.value)
		}
	}
	_, err := io.WriteString(v.w, b.String())
	return err
}

// translationName names the translation chosen; "none" for the
// notification's own text.
func translationName(l string) string {
	if l == "" {
		return "none (the notification's own text)"
	}
	return termtext.Clean(l)
}

// RenderJSON shows renders as one JSON document.
type RenderJSON struct {
	w      io.Writer
	indent bool
}

// NewRenderJSON returns a JSON render view writing to w.
func NewRenderJSON(w io.Writer, indent bool) *RenderJSON { return &RenderJSON{w: w, indent: indent} }

type jsonRender struct {
	Target     string             `json:"target"`
	TargetKind message.TargetKind `json:"target_kind"`
	// Address is what the person is sent under (the variant's address);
	// Variant its name; both null for a person held out.
	Address *string `json:"address"`
	Variant *string `json:"variant"`
	HeldOut bool    `json:"held_out"`
	// Locale is the person's locale, Translation the one chosen (null for
	// the notification's own text); Held why nothing is sent (null when
	// their text is filled in); Text what they get (null when held).
	Locale      *string       `json:"locale"`
	Translation *string       `json:"translation"`
	Held        *string       `json:"held"`
	Text        *message.Text `json:"text"`
}

// Render writes {"format_version","address","renders":[...]}.
func (v *RenderJSON) Render(addr string, rs []Rendered) error {
	out := struct {
		FormatVersion string       `json:"format_version"`
		Address       string       `json:"address"`
		Renders       []jsonRender `json:"renders"`
	}{FormatVersion: planner.FormatVersion, Address: addr, Renders: make([]jsonRender, 0, len(rs))}
	str := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	for _, r := range rs {
		j := jsonRender{Target: r.Target, TargetKind: r.TargetKind, Address: str(r.Address), Variant: str(r.Variant), HeldOut: r.HeldOut,
			Locale: str(r.Rendering.Locale), Translation: str(r.Rendering.Translation), Held: str(r.Rendering.Held)}
		if !r.HeldOut && r.Rendering.Held == "" {
			c := r.Content
			j.Text = &message.Text{Title: c.Title, Body: c.Body, OpenToURL: c.OpenToURL, Tag: c.Tag, Locale: r.Rendering.Translation}
		}
		out.Renders = append(out.Renders, j)
	}
	return writeJSON(v.w, out, v.indent)
}
