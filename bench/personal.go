package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// The scale goal of per-person content (docs/language/personal.md): the
// big campaign with a title of its own for every person (from a users.csv
// of a row each, in four locales) against the same campaign with one
// text: its apply within 1.5x, its no-op plan within 2x, both within
// 1 GiB. The two run alternately, round after round, against the same
// sandbox, so a busy machine disturbs both alike: the goals are ratios.

const (
	goalPersonalApply = 1.5
	goalPersonalNoop  = 2.0
)

const personalHCL = `
user_data {
  attributes = { for r in csvdecode(file("users.csv")) : r.user_id => r }
  locale     = "locale"
}

notification "announce" {
  user_ids = data.recipients.all.user_ids
  title    = "Hi ${title(user.first_name)}, it is here"
  body     = "Launch day"
  tag      = "launch-2026"

  translation "fr" {
    title = "Bonjour ${title(user.first_name)}, c'est là"
    body  = "Jour de lancement"
  }
  translation "de" {
    title = "Hallo ${title(user.first_name)}, es ist da"
    body  = "Starttag"
  }
}
`

// personal runs the rounds and reports the medians and their ratios.
func (b *bench) personal(ctx context.Context) ([]Row, error) {
	one, err := b.campaign("personal-one", announceHCL)
	if err != nil {
		return nil, err
	}
	each, err := b.campaign("personal-each", personalHCL)
	if err != nil {
		return nil, err
	}
	if err := writeUsersCSV(filepath.Join(each, "users.csv"), b.n); err != nil {
		return nil, err
	}
	var applies, noops [2]timings
	for round := range b.o.runs {
		for i, dir := range []string{one, each} {
			for _, f := range []string{"pushform.state", "pushform.state.backup"} {
				os.Remove(filepath.Join(dir, f))
			}
			b.logf("personal: round %d, apply %s", round+1, filepath.Base(dir))
			r, err := b.applyEvery(ctx, dir, nil)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", filepath.Base(dir), err)
			}
			applies[i].add(r)
		}
		for i, dir := range []string{one, each} {
			r, err := b.pushform(ctx, dir, nil, "plan", "--refresh=false", "--detailed-exitcode")
			if err != nil {
				return nil, err
			}
			if err := r.check(0, "no-op plan of "+filepath.Base(dir)); err != nil {
				return nil, err
			}
			noops[i].add(r)
		}
	}
	s := func(x float64) string { return fmt.Sprintf("%.2f s", x) }
	ratio := func(t [2]timings) float64 { return median(sortedCopy(t[1].wall)) / median(sortedCopy(t[0].wall)) }
	n := group(int64(b.n))
	return []Row{
		atMost(fmt.Sprintf("apply, %s people each with a title of their own, / the same campaign with one text", n),
			fmt.Sprintf("<= %.1fx", goalPersonalApply),
			fmt.Sprintf("%.2fx: %s / %s (medians of %d rounds, alternately)", ratio(applies), spread(applies[1].wall, s), spread(applies[0].wall, s), b.o.runs),
			ratio(applies), goalPersonalApply),
		atMost("  its peak memory (max RSS)", "<= 1 GiB", mib(int64(applies[1].peak())), applies[1].peak(), goalRSS),
		info("  its CPU time (user + system), one text's", fmt.Sprintf("%s, %s", spread(applies[1].cpu, s), spread(applies[0].cpu, s)),
			fmt.Sprintf("%s, %s max RSS", fmt.Sprintf("%.1fx", median(sortedCopy(applies[1].cpu))/median(sortedCopy(applies[0].cpu))), mib(int64(applies[0].peak())))),
		atMost(fmt.Sprintf("no-op plan after it (--refresh=false), %s people / one text", n),
			fmt.Sprintf("<= %.1fx", goalPersonalNoop),
			fmt.Sprintf("%.2fx: %s / %s", ratio(noops), spread(noops[1].wall, s), spread(noops[0].wall, s)),
			ratio(noops), goalPersonalNoop),
		atMost("  its peak memory (max RSS)", "<= 1 GiB", mib(int64(noops[1].peak())), noops[1].peak(), goalRSS),
	}, nil
}

// add records one run.
func (t *timings) add(r *runResult) {
	t.wall = append(t.wall, r.wall.Seconds())
	t.cpu = append(t.cpu, r.cpu.Seconds())
	t.rss = append(t.rss, float64(r.maxRSS))
}

// writeUsersCSV writes the people of the big campaign: user_id,
// first_name (each their own) and locale (en, fr, de, es in turn).
func writeUsersCSV(path string, n int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintln(w, "user_id,first_name,locale")
	locales := []string{"en", "fr", "de", "es"}
	for i := range n {
		fmt.Fprintf(w, "%s,name%07d,%s\n", userID(i), i, locales[i%4])
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
