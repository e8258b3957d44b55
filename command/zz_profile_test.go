package command

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"pushform/internal/testutil"
	"pushform/sandbox"
)

func TestZZProfilePersonal(t *testing.T) {
	if os.Getenv("PF_PROFILE") == "" {
		t.Skip()
	}
	n := 200000
	base, _ := testutil.StartSandbox(t, fmt.Sprintf("api_key \"k\" { environment = \"test\" }\nuser_range \"u%%07d\" {\n  count = %d\n  device = \"d%%07d\"\n  environment = \"test\"\n}\n", n), sandbox.Options{})
	var csv strings.Builder
	csv.WriteString("user_id,first_name,locale\n")
	for i := range n {
		fmt.Fprintf(&csv, "u%07d,name%07d,%s\n", i, i, []string{"en", "fr", "de", "es"}[i%4])
	}
	title := `"Hi ${title(user.first_name)}, it is here"`
	if os.Getenv("PF_ONE") != "" {
		title = `"Launch"`
	}
	dir := testutil.WriteFiles(t, map[string]string{"users.csv": csv.String(), "main.hcl": testutil.ServiceAt(base) + `
data "recipients" "all" {}
user_data {
  attributes = { for r in csvdecode(file("users.csv")) : r.user_id => r }
  locale     = "locale"
}
notification "announce" {
  user_ids = data.recipients.all.user_ids
  title    = ` + title + `
  body     = "Launch day"
  tag      = "launch-2026"
}
`})
	f, _ := os.Create("/tmp/apply.cpu")
	pprof.StartCPUProfile(f)
	start := time.Now()
	code, out, errOut := runIn(t, dir, "", []string{"PF_KEY=k"}, "apply", "--auto-approve", "--json")
	took := time.Since(start)
	pprof.StopCPUProfile()
	runtime.GC()
	mf, _ := os.Create("/tmp/apply.mem")
	pprof.Lookup("allocs").WriteTo(mf, 0)
	if code != 0 {
		t.Fatalf("%d %s %s", code, out[max(0, len(out)-2000):], errOut)
	}
	fi, _ := os.Stat(dir + "/pushform.state")
	t.Logf("apply %s, state %d bytes", took, fi.Size())
	start = time.Now()
	code, out, _ = runIn(t, dir, "", []string{"PF_KEY=k"}, "plan", "--refresh=false", "--detailed-exitcode")
	t.Logf("noop plan %s exit %d", time.Since(start), code)
}
