package config

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// rateUnits are the units a send rate may be given in.
var rateUnits = map[string]time.Duration{
	"second": time.Second, "s": time.Second,
	"minute": time.Minute, "m": time.Minute,
	"hour": time.Hour, "h": time.Hour,
}

// ParseRate reads a send rate such as "10000/minute": a whole number of at
// least 1, a slash, and second, minute or hour (or s, m, h).
func ParseRate(s string) (Rate, error) {
	count, unit, ok := strings.Cut(s, "/")
	per, known := rateUnits[strings.TrimSpace(unit)]
	if !ok || !known {
		return Rate{}, errors.New(`a rate is a count per second, minute or hour, such as "10000/minute"`)
	}
	n, err := strconv.Atoi(strings.TrimSpace(count))
	if err != nil || n < 1 {
		return Rate{}, errors.New("the count of a rate is a whole number of at least 1")
	}
	return Rate{Count: n, Per: per}, nil
}

// String gives the rate back as ParseRate reads it: "10000/minute".
func (r Rate) String() string {
	switch r.Per {
	case time.Second:
		return fmt.Sprintf("%d/second", r.Count)
	case time.Minute:
		return fmt.Sprintf("%d/minute", r.Count)
	case time.Hour:
		return fmt.Sprintf("%d/hour", r.Count)
	}
	return fmt.Sprintf("%d/%s", r.Count, r.Per)
}

// parseDuration reads a positive Go duration ("24h", "90m"), optionally
// led by whole days ("7d", "1d12h").
func parseDuration(s string) (time.Duration, error) {
	bad := fmt.Errorf(`a duration is a number with a unit, such as "24h", "30m" or "7d"`)
	var days int64
	rest := s
	i := strings.IndexByte(s, 'd')
	if i >= 0 {
		n, err := strconv.ParseInt(s[:i], 10, 64)
		if err != nil || s[0] == '+' || s[0] == '-' {
			return 0, bad
		}
		days, rest = n, s[i+1:]
		if rest != "" && (rest[0] == '+' || rest[0] == '-') {
			return 0, bad
		}
	}
	var d time.Duration
	if rest != "" || i < 0 {
		var err error
		if d, err = time.ParseDuration(rest); err != nil {
			return 0, bad
		}
	}
	const day = 24 * time.Hour
	if days > (math.MaxInt64-int64(max(d, 0)))/int64(day) {
		return 0, errors.New("the duration is too long")
	}
	d += time.Duration(days) * day
	if d <= 0 {
		return 0, errors.New("the duration must be positive")
	}
	return d, nil
}

// evalRate evaluates a send_rate attribute.
func evalRate(a *hcl.Attribute, ctx *hcl.EvalContext) (*Rate, hcl.Diagnostics) {
	v, set, diags := evalKnownString(a, ctx)
	if !set {
		return nil, diags
	}
	r, err := ParseRate(v)
	if err != nil {
		return nil, append(diags, errDiag("Invalid "+a.Name,
			fmt.Sprintf("%s: %s; got %s.", a.Name, err, quoteValue(v)), a.Expr.Range().Ptr()))
	}
	return &r, diags
}

// evalDuration evaluates a duration attribute such as per.
func evalDuration(a *hcl.Attribute, ctx *hcl.EvalContext) (time.Duration, bool, hcl.Diagnostics) {
	v, set, diags := evalKnownString(a, ctx)
	if !set {
		return 0, false, diags
	}
	d, err := parseDuration(v)
	if err != nil {
		return 0, false, append(diags, errDiag("Invalid "+a.Name,
			fmt.Sprintf("%s: %s; got %s.", a.Name, err, quoteValue(v)), a.Expr.Range().Ptr()))
	}
	return d, true, diags
}

// evalCount evaluates a whole number of at least 1 (max, max_targets).
func evalCount(a *hcl.Attribute, ctx *hcl.EvalContext) (int, bool, hcl.Diagnostics) {
	v, set, diags := evalKnown(a, ctx, cty.Number)
	if !set {
		return 0, false, diags
	}
	bf := v.AsBigFloat()
	n, acc := bf.Int64()
	if !bf.IsInt() || acc != 0 || n < 1 || n > math.MaxInt32 {
		return 0, false, append(diags, errDiag("Invalid "+a.Name,
			fmt.Sprintf("%s must be a whole number from 1 to %d, got %s.", a.Name, math.MaxInt32, bf.Text('g', -1)), a.Expr.Range().Ptr()))
	}
	return int(n), true, diags
}

// evalTime evaluates an RFC 3339 time attribute (send_after, send_before).
func evalTime(a *hcl.Attribute, ctx *hcl.EvalContext) (*time.Time, hcl.Diagnostics) {
	v, diags := evalAttr(a, ctx, cty.String)
	if diags.HasErrors() || v.IsNull() || !v.IsKnown() {
		return nil, diags
	}
	t, err := time.Parse(time.RFC3339, v.AsString())
	if err != nil {
		return nil, append(diags, errDiag("Invalid "+a.Name,
			fmt.Sprintf("%s must be an RFC 3339 time such as \"2026-05-01T09:00:00Z\"; got %s.", a.Name, quoteValue(v.AsString())), a.Expr.Range().Ptr()))
	}
	return &t, diags
}
