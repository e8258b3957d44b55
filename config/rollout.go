package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Rollout is a rollout block: the message is released in stages, each to
// a larger share of its audience, with a failure gate between them.
type Rollout struct {
	// Stages are the cumulative shares of the audience (0 < s <= 1),
	// strictly increasing, the last 1: stage i covers the targets whose
	// bucket point falls below Stages[i].
	Stages []float64
	// Wait is the least time between the sends of two stages.
	Wait time.Duration
	// MaxFailureRate is the most failed/attempted a stage may have for
	// the next to be sent; negative for no gate.
	MaxFailureRate float64
	Pos            Pos
}

// MaxStages is the most stages a rollout has.
const MaxStages = 100

var rolloutSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "stages", Required: true},
		{Name: "wait"},
		{Name: "max_failure_rate"},
	},
}

// rolloutBlock is a decoded rollout block, evaluated per message instance
// (or once for a campaign).
type rolloutBlock = attrBlock

// decodeRollouts picks the one rollout block of blocks, reporting others.
func decodeRollouts(blocks hcl.Blocks, where string) (*rolloutBlock, hcl.Diagnostics) {
	var rb *rolloutBlock
	var diags hcl.Diagnostics
	for _, b := range blocks {
		if b.Type != "rollout" {
			continue
		}
		if rb != nil {
			diags = append(diags, duplicateSingle(where, "rollout", rb.block, b))
			continue
		}
		r, d := decodeAttrBlock(b, rolloutSchema)
		diags = append(diags, d...)
		rb = r
	}
	return rb, diags
}

// evalRollout evaluates a rollout block; nil when it is unusable.
func evalRollout(rb *rolloutBlock, ctx *hcl.EvalContext) (*Rollout, hcl.Diagnostics) {
	if rb == nil {
		return nil, nil
	}
	var diags hcl.Diagnostics
	r := &Rollout{MaxFailureRate: -1, Pos: posOf(rb.block.DefRange)}
	ok := true
	if a, has := rb.attrs["stages"]; has {
		stages, d := evalStages(a, ctx)
		diags = append(diags, d...)
		r.Stages, ok = stages, stages != nil
	}
	if a, has := rb.attrs["wait"]; has {
		w, set, d := evalDuration(a, ctx)
		diags = append(diags, d...)
		r.Wait, ok = w, ok && set
	}
	if a, has := rb.attrs["max_failure_rate"]; has {
		v, set, d := evalKnownString(a, ctx)
		diags = append(diags, d...)
		if set {
			f, err := ParsePercent(v, true)
			if err != nil {
				diags = append(diags, errDiag("Invalid max_failure_rate",
					fmt.Sprintf("max_failure_rate is the most failed targets a stage may have, of those attempted, for the next stage to be sent: %s; got %s.", err, quoteValue(v)), a.Expr.Range().Ptr()))
				ok = false
			}
			r.MaxFailureRate = f
		} else {
			ok = false
		}
	}
	if !ok {
		return nil, diags
	}
	return r, diags
}

// evalStages evaluates stages: percentages, strictly increasing, the
// last "100%".
func evalStages(a *hcl.Attribute, ctx *hcl.EvalContext) ([]float64, hcl.Diagnostics) {
	v, diags := a.Expr.Value(ctx)
	if diags.HasErrors() {
		return nil, diags
	}
	bad := func(detail string) ([]float64, hcl.Diagnostics) {
		return nil, append(diags, errDiag("Invalid stages", detail, a.Expr.Range().Ptr()))
	}
	ty := v.Type()
	if v.IsNull() || !v.IsWhollyKnown() || !(ty.IsListType() || ty.IsTupleType()) {
		return bad(`stages is a list of percentages of the audience, each larger than the one before and the last "100%", such as ["1%", "10%", "100%"].`)
	}
	var out []float64
	i := 0
	for it := v.ElementIterator(); it.Next(); i++ {
		_, ev := it.Element()
		s, err := percentString(ev)
		if err != nil {
			return bad(fmt.Sprintf("stage %d: %s.", i+1, err))
		}
		f, err := ParsePercent(s, false)
		if err != nil {
			return bad(fmt.Sprintf("stage %d: %s; got %s.", i+1, err, quoteValue(s)))
		}
		if len(out) > 0 && f <= out[len(out)-1] {
			return bad(fmt.Sprintf("stage %d (%s) must be larger than stage %d (%s): each stage covers the ones before it and more.", i+1, FormatPercent(f), i, FormatPercent(out[len(out)-1])))
		}
		out = append(out, f)
	}
	if len(out) > MaxStages {
		return bad(fmt.Sprintf("a rollout has at most %d stages; this one has %d.", MaxStages, len(out)))
	}
	if len(out) == 0 {
		return bad(`stages needs at least one stage; the last is "100%".`)
	}
	if last := out[len(out)-1]; last != 1 {
		return bad(fmt.Sprintf(`the last stage is %s: it must be "100%%", or the rest of the audience would never be sent.`, FormatPercent(last)))
	}
	return out, diags
}

// ParsePercent reads "2%" or "0.5%" as a fraction. zero allows "0%".
func ParsePercent(s string, zero bool) (float64, error) {
	num, ok := strings.CutSuffix(strings.TrimSpace(s), "%")
	f, err := strconv.ParseFloat(num, 64)
	if !ok || err != nil || f != f {
		return 0, fmt.Errorf(`a percentage is a number followed by %%, such as "5%%"`)
	}
	if f < 0 || f > 100 || f == 0 && !zero {
		lo := "more than 0%"
		if zero {
			lo = "0%"
		}
		return 0, fmt.Errorf("a percentage here is from %s to 100%%", lo)
	}
	return f / 100, nil
}

// FormatPercent writes a fraction as a percentage: 0.015 is "1.5%".
func FormatPercent(f float64) string {
	return strconv.FormatFloat(math.Round(f*100e6)/1e6, 'f', -1, 64) + "%"
}

// percentString is a stage's value as a string.
func percentString(v cty.Value) (string, error) {
	if v.IsNull() || !v.Type().Equals(cty.String) {
		return "", fmt.Errorf(`each stage is a percentage in quotes, such as "10%%"`)
	}
	return v.AsString(), nil
}

// decodeSplits sets m's rollout (its own, else its campaign c's) and salt.
func decodeSplits(m *Message, mb *messageBlock, ctx *hcl.EvalContext, c Campaign) hcl.Diagnostics {
	var diags hcl.Diagnostics
	m.Salt, m.Rollout = m.Address, c.Rollout
	if a, ok := mb.content.Attributes["salt"]; ok {
		v, set, d := evalKnownString(a, ctx)
		diags = append(diags, d...)
		if set {
			if v == "" {
				diags = append(diags, errDiag("Empty salt",
					"salt assigns targets to rollout stages; omit it to use the address, or keep the old address here after a rename.", a.Expr.Range().Ptr()))
			} else {
				m.Salt = v
			}
		}
	}
	if mb.rollout != nil {
		r, d := evalRollout(mb.rollout, ctx)
		diags = append(diags, d...)
		m.Rollout = r
	}
	if mb.kind == KindBadge {
		if mb.rollout != nil {
			diags = append(diags, errDiag("Rollout of a badge",
				"A badge block sets a count, which shows nothing to roll out; put the rollout on notification blocks.", mb.rollout.block.DefRange.Ptr()))
		}
		m.Rollout = nil // a campaign's rollout is for its notifications
	}
	return diags
}
