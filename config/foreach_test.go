package config

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestForEachTosetDirect: for_each = toset(LIST) written in the block is
// expanded without making the set (whose every walk sorts it); its
// instances must be those of the same set made in a local, duplicates
// and all.
func TestForEachTosetDirect(t *testing.T) {
	lists := []string{
		`["b", "a", "b", "c"]`,
		`[for r in csvdecode(file("rows.csv")) : r.id]`,
		`tolist(["x", "y", "x"])`,
		`[]`,
		`[1, 2]`,
	}
	var csv strings.Builder
	csv.WriteString("id,user\n")
	for i := range 50 {
		fmt.Fprintf(&csv, "k%d,u%d\n", i%37, i)
	}
	block := func(list, forEach string) string {
		return svc + `
locals {
  set = toset(` + list + `)
}
notification "n" {
  for_each = ` + forEach + `
  user_ids = ["u-${each.key}"]
  title    = "T ${each.value}"
  body     = "B"
  tag      = "t-${each.key}"
}
`
	}
	for _, list := range lists {
		t.Run(list, func(t *testing.T) {
			direct, ddiags := load(t, map[string]string{"main.hcl": block(list, "toset("+list+")"), "rows.csv": csv.String()}, Options{})
			viaLocal, vdiags := load(t, map[string]string{"main.hcl": block(list, "local.set"), "rows.csv": csv.String()}, Options{})
			if ddiags.HasErrors() || vdiags.HasErrors() {
				// The same error, at the for_each of each.
				if len(ddiags) != 1 || len(vdiags) != 1 || ddiags[0].Summary != vdiags[0].Summary || ddiags[0].Detail != vdiags[0].Detail {
					t.Fatalf("direct: %v; via a local: %v", ddiags, vdiags)
				}
				return
			}
			if len(direct.Messages) != len(viaLocal.Messages) {
				t.Fatalf("%d instances, want %d", len(direct.Messages), len(viaLocal.Messages))
			}
			for i, m := range direct.Messages {
				w := viaLocal.Messages[i]
				if m.Address != w.Address || m.Key != w.Key || !reflect.DeepEqual(m.Targets, w.Targets) || m.Content != w.Content {
					t.Errorf("instance %d: %+v, want %+v", i, m, w)
				}
			}
		})
	}
}

// TestForEachOverFailedLocal: a for_each over a local that failed reports
// the local's error only, not a second one saying the for_each is unknown.
func TestForEachOverFailedLocal(t *testing.T) {
	_, diags := load(t, map[string]string{"main.hcl": svc + `
locals {
  orders = { for o in csvdecode(file("missing.csv")) : o.order_id => o }
}
notification "n" {
  for_each = local.orders
  user_ids = [each.value.user_id]
  title    = "T"
  body     = "B"
}
`}, Options{})
	if len(diags) != 1 || !strings.Contains(diags[0].Error(), "missing.csv") {
		t.Fatalf("want the local's error only, got %v", diags)
	}
}

// TestForEachLargeInParallel: a for_each large enough to be decoded on
// several goroutines gives every instance, in order, with its own values,
// and the diagnostics of all of them (run with -race).
func TestForEachLargeInParallel(t *testing.T) {
	const n = 3 * parallelFrom
	var csv strings.Builder
	csv.WriteString("id,user\n")
	for i := range n {
		user := fmt.Sprintf("u%05d", i)
		if i%1000 == 999 {
			user = "" // an empty id: one diagnostic
		}
		fmt.Fprintf(&csv, "k%05d,%s\n", i, user)
	}
	cfg, diags := load(t, map[string]string{"rows.csv": csv.String(), "main.hcl": svc + `
notification "n" {
  for_each = { for r in csvdecode(file("rows.csv")) : r.id => r }
  user_ids = [each.value.user]
  title    = "T ${each.key}"
  body     = "B"
}
`}, Options{})
	if len(diags) != 1 || !strings.Contains(diags[0].Detail, "empty string") {
		t.Fatalf("want the empty ids reported once (the same place), got %v", diags)
	}
	if len(cfg.Messages) != n {
		t.Fatalf("%d instances, want %d", len(cfg.Messages), n)
	}
	for i, m := range cfg.Messages {
		key := fmt.Sprintf("k%05d", i)
		if m.Key != key || m.Content.Title != "T "+key {
			t.Fatalf("instance %d: key %q title %q", i, m.Key, m.Content.Title)
		}
		if i%1000 != 999 && (len(m.Targets.IDs) != 1 || m.Targets.IDs[0] != fmt.Sprintf("u%05d", i)) {
			t.Fatalf("instance %d: targets %v", i, m.Targets.IDs)
		}
	}
}
