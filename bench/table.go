package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Row is one figure of the benchmark table.
type Row struct {
	Figure   string
	Goal     string
	Measured string
	// Ratio is measured / goal: a lower bound is met from 1 up, an upper
	// bound up to 1. Rows without a goal may say something else here.
	Ratio string
	// Met is nil for rows without a goal.
	Met *bool
}

// atLeast is a row whose goal is a lower bound on got.
func atLeast(figure, goal, measured string, got, bound float64) Row {
	ok := got >= bound
	return Row{Figure: figure, Goal: goal, Measured: measured, Ratio: fmt.Sprintf("%.2fx", got/bound), Met: &ok}
}

// atMost is a row whose goal is an upper bound on got.
func atMost(figure, goal, measured string, got, bound float64) Row {
	ok := got <= bound
	return Row{Figure: figure, Goal: goal, Measured: measured, Ratio: fmt.Sprintf("%.2fx", got/bound), Met: &ok}
}

// info is a row without a goal.
func info(figure, measured, ratio string) Row {
	return Row{Figure: figure, Goal: "-", Measured: measured, Ratio: ratio}
}

// WriteTable prints rows as a Markdown table, which reads well in a
// terminal and pastes into docs/benchmarks.md.
func WriteTable(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	fmt.Fprintln(tw, "| figure\t| goal\t| measured\t| ratio\t| met\t|")
	fmt.Fprintln(tw, "|---\t|---\t|---\t|---\t|---\t|")
	for _, r := range rows {
		met := "-"
		if r.Met != nil {
			met = map[bool]string{true: "yes", false: "NO"}[*r.Met]
		}
		fmt.Fprintf(tw, "| %s\t| %s\t| %s\t| %s\t| %s\t|\n", cell(r.Figure), cell(r.Goal), cell(r.Measured), cell(r.Ratio), met)
	}
	return tw.Flush()
}

func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// rate formats a throughput in targets per second.
func rate(perSec float64) string {
	return group(int64(perSec+0.5)) + " targets/s"
}

// group formats n with thousands separators: 1234567 -> "1,234,567".
func group(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// mib formats a byte count in MiB.
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// secs formats a duration in seconds with two decimals.
func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

// spread formats several measurements of one figure: the median, and the
// range when there is more than one.
func spread(xs []float64, format func(float64) string) string {
	if len(xs) == 0 {
		return "n/a"
	}
	s := sortedCopy(xs)
	med := median(s)
	if len(s) == 1 {
		return format(med)
	}
	return fmt.Sprintf("%s (%s..%s, %d runs)", format(med), format(s[0]), format(s[len(s)-1]), len(s))
}

func sortedCopy(xs []float64) []float64 {
	s := append([]float64(nil), xs...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}

// median of sorted xs.
func median(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
