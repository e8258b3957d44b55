package config

import (
	"fmt"
	"strings"
	"testing"

	"pushform/internal/testutil"
)

// BenchmarkLoadMillionRecipients: a bare data.recipients reference must
// not convert the list, so a million ids cost nothing extra.
func BenchmarkLoadMillionRecipients(b *testing.B) {
	dir := testutil.WriteFiles(b, map[string]string{"main.hcl": svc + `
data "recipients" "all" {}
notification "n" {
  user_ids = data.recipients.all.user_ids
  title    = "t"
  body     = "b"
}
`})
	ids := make([]string, 1_000_000)
	for i := range ids {
		ids[i] = fmt.Sprintf("user-%d", i)
	}
	opts := Options{Recipients: map[string][]string{"all": ids}}
	b.ResetTimer()
	for b.Loop() {
		if _, diags := NewLoader().Load(dir, opts); diags.HasErrors() {
			b.Fatal(diags.Error())
		}
	}
}

// BenchmarkLoadCSV10k: for_each over a 10,000-row CSV file.
func BenchmarkLoadCSV10k(b *testing.B) {
	var csv strings.Builder
	csv.WriteString("order_id,user_id\n")
	for i := range 10_000 {
		fmt.Fprintf(&csv, "A-%d,user-%d\n", i, i)
	}
	dir := testutil.WriteFiles(b, map[string]string{"orders.csv": csv.String(), "main.hcl": svc + `
notification "shipped" {
  for_each = { for o in csvdecode(file("orders.csv")) : o.order_id => o }
  user_ids = [each.value.user_id]
  title    = "Order ${each.key} shipped"
  body     = "Soon"
  tag      = "order-${each.key}"
}
`})
	b.ResetTimer()
	for b.Loop() {
		cfg, diags := NewLoader().Load(dir, Options{})
		if diags.HasErrors() || len(cfg.Messages) != 10_000 {
			b.Fatal(diags.Error())
		}
	}
}

// planFlowDir is a configuration as plan sees it: a for_each over a
// 10,000-row CSV file, and a notification to a million recipients, one
// to them all but one (which evaluates an expression over the list).
func planFlowDir(b *testing.B) (string, map[string][]string) {
	var csv strings.Builder
	csv.WriteString("order_id,user_id\n")
	for i := range 10_000 {
		fmt.Fprintf(&csv, "A-%d,user-%d\n", i, i)
	}
	dir := testutil.WriteFiles(b, map[string]string{"orders.csv": csv.String(), "main.hcl": svc + `
data "recipients" "all" {}
notification "shipped" {
  for_each = { for o in csvdecode(file("orders.csv")) : o.order_id => o }
  user_ids = [each.value.user_id]
  title    = "Order ${each.key} shipped"
  body     = "Soon"
  tag      = "order-${each.key}"
}
notification "everyone" {
  user_ids = data.recipients.all.user_ids
  title    = "t"
  body     = "b"
}
`})
	ids := make([]string, 1_000_000)
	for i := range ids {
		ids[i] = fmt.Sprintf("user-%d", i)
	}
	return dir, map[string][]string{"all": ids}
}

// BenchmarkPlanFlowLoadTwice is what plan did before Resolve: load without
// recipients, fetch them, load again with them.
func BenchmarkPlanFlowLoadTwice(b *testing.B) {
	dir, recipients := planFlowDir(b)
	b.ResetTimer()
	for b.Loop() {
		l := NewLoader()
		if _, diags := l.Load(dir, Options{}); diags.HasErrors() {
			b.Fatal(diags.Error())
		}
		if _, diags := l.Load(dir, Options{Recipients: recipients}); diags.HasErrors() {
			b.Fatal(diags.Error())
		}
	}
}

// BenchmarkPlanFlowResolve is the same with Resolve: parsed and evaluated
// once; the recipients are filled in.
func BenchmarkPlanFlowResolve(b *testing.B) {
	dir, recipients := planFlowDir(b)
	b.ResetTimer()
	for b.Loop() {
		l := NewLoader()
		cfg, diags := l.Load(dir, Options{})
		if diags.HasErrors() {
			b.Fatal(diags.Error())
		}
		if _, diags := l.Resolve(cfg, recipients); diags.HasErrors() {
			b.Fatal(diags.Error())
		}
	}
}

// BenchmarkLoadSharedTag10k: 10,000 instances with one tag, half of them
// reaching a user another one reaches; the shared-tag check is linear in
// the number of target ids.
func BenchmarkLoadSharedTag10k(b *testing.B) {
	var csv strings.Builder
	csv.WriteString("order_id,user_id\n")
	for i := range 10_000 {
		fmt.Fprintf(&csv, "A-%d,user-%d\n", i, i/2)
	}
	dir := testutil.WriteFiles(b, map[string]string{"orders.csv": csv.String(), "main.hcl": svc + `
notification "shipped" {
  for_each = { for o in csvdecode(file("orders.csv")) : o.order_id => o }
  user_ids = [each.value.user_id]
  title    = "Order ${each.key} shipped"
  body     = "Soon"
  tag      = "orders"
}
`})
	b.ResetTimer()
	for b.Loop() {
		_, diags := NewLoader().Load(dir, Options{})
		if len(diags) != 1 {
			b.Fatal(diags.Error())
		}
	}
}
