package config

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestSharedTags(t *testing.T) {
	n := func(name, targets, extra string) string {
		return fmt.Sprintf("notification %q {\n  %s\n  title = \"t\"\n  body = \"b\"\n  tag = \"promo\"\n%s}\n", name, targets, extra)
	}
	tests := []struct {
		name   string
		src    string
		line   int    // line of the error; 0 for none
		detail string // part of its detail
	}{
		{"overlapping users", n("a", `user_ids = ["u1", "u2", "u3"]`, "") + n("b", `user_ids = ["u3", "u2", "u9"]`, ""), 11, `notification.b and notification.a (main.hcl:1) both use tag "promo" and reach 2 of the same user_ids`},
		{"disjoint users", n("a", `user_ids = ["u1"]`, "") + n("b", `user_ids = ["u2"]`, ""), 0, ""},
		{"same ids, other kind", n("a", `user_ids = ["x"]`, "") + n("b", `device_ids = ["x"]`, ""), 0, ""},
		{"overlapping topics", n("a", `topics = ["deals"]`, "") + n("b", `topics = ["deals", "news"]`, ""), 11, "reach 1 of the same topics"},
		{"shared_tag on the first", n("a", `user_ids = ["u1"]`, "  shared_tag = true\n") + n("b", `user_ids = ["u1"]`, ""), 0, ""},
		{"shared_tag on the second", n("a", `user_ids = ["u1"]`, "") + n("b", `user_ids = ["u1"]`, "  shared_tag = true\n"), 0, ""},
		{"shared_tag false", n("a", `user_ids = ["u1"]`, "") + n("b", `user_ids = ["u1"]`, "  shared_tag = false\n"), 11, "reach 1 of"},
		{"shared first does not hide the others", n("a", `user_ids = ["u1"]`, "  shared_tag = true\n") + n("b", `user_ids = ["u1"]`, "") + n("c", `user_ids = ["u1"]`, ""), 18, "notification.c and notification.b (main.hcl:8)"},
		{"campaign and top level", "campaign \"c\" {\n" + n("a", `user_ids = ["u1"]`, "") + "}\n" + n("b", `user_ids = ["u1"]`, ""), 13, "notification.b and campaign.c.notification.a (main.hcl:2)"},
		{"for_each instances", "notification \"o\" {\n  for_each = { a = \"u1\", b = \"u1\", c = \"u1\", d = \"u2\" }\n  user_ids = [each.value]\n  title = \"t\"\n  body = \"b\"\n  tag = \"orders\"\n}\n", 6,
			`2 pairs of addresses of notification.o and notification.o (main.hcl:1), such as notification.o["b"] and notification.o["a"], use tag "orders" and reach the same user_ids: 2 shared targets in all`},
		{"bare recipients", "data \"recipients\" \"r\" {}\n" + n("a", `user_ids = data.recipients.r.user_ids`, "") + n("b", `user_ids = ["u1"]`, ""), 0, ""},
		{"expression over recipients", "data \"recipients\" \"r\" {}\n" + n("a", `user_ids = setsubtract(data.recipients.r.user_ids, ["x"])`, "") + n("b", `user_ids = ["u1"]`, ""), 0, ""},
		{"local over recipients", "data \"recipients\" \"r\" {}\nlocals {\n  r = data.recipients.r.user_ids\n}\n" + n("a", `user_ids = local.r`, "") + n("b", `user_ids = ["u1"]`, ""), 0, ""},
		{"other tags", n("a", `user_ids = ["u1"]`, "") + strings.Replace(n("b", `user_ids = ["u1"]`, ""), "promo", "other", 1), 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Recipients supplied: overlaps through them are the planner's.
			_, diags := load(t, map[string]string{"main.hcl": tt.src, "svc.hcl": svc}, Options{Recipients: map[string][]string{"r": {"u1", "x"}}})
			var got []string
			for _, d := range diags {
				if d.Summary == "Shared tag" {
					got = append(got, fmt.Sprintf("%s:%d %s", d.Subject.Filename, d.Subject.Start.Line, d.Detail))
				} else if d.Summary != "Undeclared topic" {
					t.Errorf("other diagnostic:%s", describe(diags))
				}
			}
			switch {
			case tt.line == 0 && len(got) > 0:
				t.Errorf("want no error; got %q", got)
			case tt.line != 0 && (len(got) != 1 || !strings.HasPrefix(got[0], fmt.Sprintf("main.hcl:%d ", tt.line)) || !strings.Contains(got[0], tt.detail)):
				t.Errorf("want one error at main.hcl:%d with %q; got %q", tt.line, tt.detail, got)
			}
		})
	}
}

func TestTagGroups(t *testing.T) {
	cfg := mustLoad(t, map[string]string{"main.hcl": svc + `
data "recipients" "r" {}
notification "a" {
  user_ids = data.recipients.r.user_ids
  title    = "t"
  body     = "b"
  tag      = "promo"
}
campaign "c" {
  notification "b" {
    user_ids = ["u1"]
    title    = "t"
    body     = "b"
    tag      = "promo"
  }
}
notification "lone" {
  user_ids = ["u1"]
  title    = "t"
  body     = "b"
  tag      = "lone"
}
notification "untagged" {
  user_ids = ["u1"]
  badge_count = 1
}
`}, Options{})
	groups := cfg.TagGroups()
	var addrs []string
	for _, m := range groups["promo"] {
		addrs = append(addrs, m.Address)
	}
	if len(groups) != 1 || !reflect.DeepEqual(addrs, []string{"campaign.c.notification.b", "notification.a"}) {
		t.Errorf("groups = %v (promo: %q)", groups, addrs)
	}
}

// TestSharedTagsLinear: ten thousand instances with one tag, each reaching
// the same user, give one diagnostic, and the check does not compare every
// pair (BenchmarkLoadSharedTag10k measures it).
func TestSharedTagsLinear(t *testing.T) {
	var csv strings.Builder
	csv.WriteString("order_id,user_id\n")
	for i := range 10_000 {
		fmt.Fprintf(&csv, "A-%d,u\n", i)
	}
	_, diags := load(t, map[string]string{"orders.csv": csv.String(), "main.hcl": svc + `
notification "o" {
  for_each = { for o in csvdecode(file("orders.csv")) : o.order_id => o }
  user_ids = [each.value.user_id]
  title    = "t"
  body     = "b"
  tag      = "orders"
}
`}, Options{})
	if len(diags) != 1 || !strings.Contains(diags[0].Detail, "9999 pairs") {
		t.Errorf("diagnostics:%s", describe(diags))
	}
}
