package planner

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"pushform/config"
	"pushform/internal/testutil"
	"pushform/internal/testutil/cpubench"
	"pushform/state"
)

// The scale goal of per-person content: a million people, each with a
// title of their own, cost a plan about what the same campaign with one
// text costs. Each benchmark loads the configuration (the million-row
// users.csv included) and plans, as plan and apply do; "one" is the same
// campaign with one text and no user_data.

const benchPeople = 1_000_000

// personalBenchDir writes a configuration of n users to a directory:
// personal, a title per person from users.csv, or one text.
func personalBenchDir(b *testing.B, n int, personal bool) (string, map[string][]string) {
	b.Helper()
	ids := benchIDs(n)
	var csv strings.Builder
	csv.Grow(n * 32)
	csv.WriteString("user_id,first_name,locale\n")
	locales := []string{"en", "fr", "de", "es"}
	for i, id := range ids {
		fmt.Fprintf(&csv, "%s,name%07d,%s\n", id, i, locales[i%4])
	}
	title, data := `"Launch"`, ""
	if personal {
		title = `"Hi ${title(user.first_name)}"`
		data = `
user_data {
  attributes = { for r in csvdecode(file("users.csv")) : r.user_id => r }
  locale     = "locale"
}
`
	}
	dir := testutil.WriteFiles(b, map[string]string{"users.csv": csv.String(), "main.hcl": testutil.ServiceTest + data + `
data "recipients" "all" {}
notification "announce" {
  user_ids = data.recipients.all.user_ids
  title    = ` + title + `
  body     = "It is here"
  tag      = "launch"
}
`})
	return dir, map[string][]string{"all": ids}
}

// loadBench loads and resolves the configuration of dir, as plan does.
func loadBench(b *testing.B, dir string, recipients map[string][]string) *config.Config {
	l := config.NewLoader()
	cfg, diags := l.Load(dir, config.Options{})
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	cfg, diags = l.Resolve(cfg, recipients)
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	return cfg
}

// BenchmarkPersonal1M: the first plan (every target new: a million texts
// filled in) and the no-op plan after it, personal and with one text.
func BenchmarkPersonal1M(b *testing.B) {
	for _, personal := range []bool{false, true} {
		name := "one"
		if personal {
			name = "personal"
		}
		dir, recipients := personalBenchDir(b, benchPeople, personal)
		b.Run(name+"/create", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p, err := Make(Input{Config: loadBench(b, dir, recipients)}, Options{Now: now})
				if err != nil || p.Summary.Targets != benchPeople || p.Summary.Requests != benchPeople/DefaultBatchLimit {
					b.Fatalf("plan: %v, %+v", err, p.Summary)
				}
			}
		})
		p, err := Make(Input{Config: loadBench(b, dir, recipients)}, Options{Now: now})
		if err != nil {
			b.Fatal(err)
		}
		st := state.New("test")
		st.Compact = true
		applied(b, st, p, now, func(string) state.Outcome { return state.Delivered })
		b.Run(name+"/noop", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p, err := Make(Input{Config: loadBench(b, dir, recipients), State: st}, Options{Now: now})
				if err != nil || p.HasChanges() {
					b.Fatalf("plan: %v, %+v", err, p.Summary)
				}
			}
		})
	}
}

// BenchmarkPersonalNoopRatio1M runs the no-op plans of BenchmarkPersonal1M
// (loading included) alternately and reports the personal one's cost as a
// multiple of the one text's, in wall time and in process CPU time: the
// alternation keeps both under the same load on a shared machine.
func BenchmarkPersonalNoopRatio1M(b *testing.B) {
	var loads [2]func() *config.Config
	var states [2]*state.State
	for i, personal := range []bool{false, true} {
		dir, recipients := personalBenchDir(b, benchPeople, personal)
		loads[i] = func() *config.Config { return loadBench(b, dir, recipients) }
		p, err := Make(Input{Config: loads[i]()}, Options{Now: now})
		if err != nil {
			b.Fatal(err)
		}
		states[i] = state.New("test")
		states[i].Compact = true
		applied(b, states[i], p, now, func(string) state.Outcome { return state.Delivered })
	}
	var wall, cpu [2]time.Duration
	for b.Loop() {
		for i := range loads {
			runtime.GC() // each plan starts with a clean heap
			c0, w0 := time.Duration(cpubench.CPUTime()), time.Now()
			p, err := Make(Input{Config: loads[i](), State: states[i]}, Options{Now: now})
			if err != nil || p.HasChanges() {
				b.Fatalf("plan: %v, %+v", err, p.Summary)
			}
			wall[i] += time.Since(w0)
			cpu[i] += time.Duration(cpubench.CPUTime()) - c0
		}
	}
	b.ReportMetric(float64(wall[1])/float64(wall[0]), "wall-ratio")
	b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "cpu-ratio")
	b.ReportMetric(float64(cpu[0].Microseconds())/1000/float64(b.N), "one-cpu-ms/op")
	b.ReportMetric(float64(cpu[1].Microseconds())/1000/float64(b.N), "personal-cpu-ms/op")
}
