package command

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pushform/internal/testutil"
)

// TestMissingKeyNamesItsLine: an empty API key variable is named with the
// file and line of the api_key_env that names it (or of the service
// block, for the default variable), as the pg backend's is.
func TestMissingKeyNamesItsLine(t *testing.T) {
	for _, tt := range []struct{ keyEnv, want string }{
		{"  api_key_env = \"TEAM_PUSH_KEY\"\n", `environment variable TEAM_PUSH_KEY is empty: it must hold the API key for environment "test" (api_key_env at main.hcl:4)`},
		{"", `environment variable PUSHFORM_API_KEY is empty: it must hold the API key for environment "test" (the default: the service block at main.hcl:1 sets no api_key_env)`},
	} {
		dir := testutil.WriteFiles(t, map[string]string{"main.hcl": "service {\n  environment = \"test\"\n  base_url    = \"https://push.example.com/v1\"\n" + tt.keyEnv + "}\n\n" +
			"data \"recipients\" \"all\" {}\n\nnotification \"n\" {\n  user_ids = data.recipients.all.user_ids\n  title    = \"t\"\n  body     = \"b\"\n}\n"})
		code, out, errOut := runIn(t, dir, "", nil, "plan")
		if code != ExitError || out != "" || !strings.Contains(errOut, tt.want) {
			t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant %q", code, out, errOut, tt.want)
		}
	}
}

// TestPlanOutSaysWhatApplyDoes: plan --out names the command that applies
// the plan, led by what that does: sends, only records (a block removed:
// a forget), or nothing at all.
func TestPlanOutSaysWhatApplyDoes(t *testing.T) {
	dir := testutil.Quickstart(t)
	saved := func(want string) {
		t.Helper()
		code, out, errOut := runIn(t, dir, "", nil, "plan", "--out", "p.plan")
		if code != ExitOK || !strings.Contains(out, "Saved the plan to p.plan. "+want+"\n  pushform apply p.plan\n") {
			t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s\nwant %q", code, out, errOut, want)
		}
	}
	saved("To send exactly these notifications, run:")
	if code, out, errOut := runIn(t, dir, "", nil, "apply", "--auto-approve"); code != ExitOK {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	saved("It has no changes: applying it sends and records nothing. To apply it anyway, run:")
	src, err := os.ReadFile(filepath.Join(dir, "main.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(src), "badge \"reset\"")
	testutil.WriteFile(t, dir, "main.hcl", string(src[:i]))
	saved("Applying it sends nothing: it records these changes in the state. To record them, run:")
}
