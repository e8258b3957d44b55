package command

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pushform/internal/testutil"
)

const unformatted = "notification \"n\" {\n  user_ids = [\"a\"]\n  title = \"t\"\n  body=\"b\"\n}\n"
const formatted = "notification \"n\" {\n  user_ids = [\"a\"]\n  title    = \"t\"\n  body     = \"b\"\n}\n"

func TestFmtCheck(t *testing.T) {
	dir := testutil.WriteFiles(t, map[string]string{"a.hcl": unformatted, "b.hcl": formatted, "sub/c.hcl": unformatted})
	code, out, errOut := runIn(t, dir, "", nil, "fmt", "--check")
	if code != ExitFmt || out != "a.hcl\n" {
		t.Errorf("code %d, stdout %q, stderr %q", code, out, errOut)
	}
	if src, _ := os.ReadFile(filepath.Join(dir, "a.hcl")); string(src) != unformatted {
		t.Error("--check changed a file")
	}
	code, out, _ = runIn(t, dir, "", nil, "fmt", "--check", "--recursive")
	if code != ExitFmt || out != "a.hcl\n"+filepath.Join("sub", "c.hcl")+"\n" {
		t.Errorf("recursive: code %d, stdout %q", code, out)
	}
	if code, out, _ := runIn(t, dir, "", nil, "fmt", "--check", "b.hcl"); code != ExitOK || out != "" {
		t.Errorf("formatted file: code %d, stdout %q", code, out)
	}
}

func TestFmtWrite(t *testing.T) {
	dir := testutil.WriteFiles(t, map[string]string{"a.hcl": unformatted, "b.hcl": formatted})
	if err := os.Chmod(filepath.Join(dir, "a.hcl"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runIn(t, dir, "", nil, "fmt")
	if code != ExitOK || out != "a.hcl\n" {
		t.Fatalf("code %d, stdout %q, stderr %q", code, out, errOut)
	}
	src, _ := os.ReadFile(filepath.Join(dir, "a.hcl"))
	if string(src) != formatted {
		t.Errorf("a.hcl = %q", src)
	}
	if info, _ := os.Stat(filepath.Join(dir, "a.hcl")); info.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", info.Mode().Perm())
	}
	if code, out, _ := runIn(t, dir, "", nil, "fmt"); code != ExitOK || out != "" {
		t.Errorf("second run: code %d, stdout %q", code, out)
	}
}

func TestFmtDiff(t *testing.T) {
	long := "locals {\n  a = 1\n  b = 2\n  c = 3\n  d = 4\n  e = 5\n  f = 6\n  g = 7\n  h = 8\n  i = 9\n}\n" + unformatted
	dir := testutil.WriteFiles(t, map[string]string{"a.hcl": long})
	code, out, _ := runIn(t, dir, "", nil, "fmt", "--diff", "--write=false")
	want := `a.hcl
--- old/a.hcl
+++ new/a.hcl
@@ -11,6 +11,6 @@
 }
 notification "n" {
   user_ids = ["a"]
-  title = "t"
-  body="b"
+  title    = "t"
+  body     = "b"
 }
`
	if code != ExitOK || out != want {
		t.Errorf("code %d, diff:\n%s\nwant:\n%s", code, out, want)
	}
	if src, _ := os.ReadFile(filepath.Join(dir, "a.hcl")); string(src) != long {
		t.Error("--write=false changed the file")
	}
}

func TestUnifiedDiffHunks(t *testing.T) {
	var a, b []string
	for i := 1; i <= 20; i++ {
		a = append(a, "line")
		b = append(b, "line")
	}
	a[1], b[1] = "old 2", "new 2"
	a[17], b[17] = "old 18", "new 18"
	b = append(b[:10], append([]string{"added"}, b[10:]...)...)
	got := unifiedDiff("a", "b", strings.Join(a, "\n")+"\n", strings.Join(b, "\n"))
	for _, want := range []string{
		"@@ -1,5 +1,5 @@\n line\n-old 2\n+new 2\n line\n line\n line\n",
		"@@ -8,6 +8,7 @@\n line\n line\n line\n+added\n line\n line\n line\n@@ -15,6 +16,6 @@\n",
		// the old text ends in a newline, the new one does not
		"-old 18\n+new 18\n line\n-line\n+line\n\\ No newline at end of file\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("diff lacks %q:\n%s", want, got)
		}
	}
	if unifiedDiff("a", "b", "x\n", "x\n") != "" {
		t.Error("diff of equal texts is not empty")
	}
}

func TestFmtRefusesBrokenFiles(t *testing.T) {
	dir := testutil.WriteFiles(t, map[string]string{"a.hcl": "notification \"n\" {\n  title = \n}\n", "b.hcl": unformatted})
	code, out, errOut := runIn(t, dir, "", nil, "fmt")
	if code != ExitError {
		t.Errorf("code %d", code)
	}
	if !strings.Contains(errOut, "on a.hcl line 2") || out != "b.hcl\n" {
		t.Errorf("stdout %q, stderr:\n%s", out, errOut)
	}
	if src, _ := os.ReadFile(filepath.Join(dir, "a.hcl")); !strings.Contains(string(src), "title = \n") {
		t.Error("broken file was rewritten")
	}
}

func TestFmtStdin(t *testing.T) {
	code, out, _ := runIn(t, t.TempDir(), unformatted, nil, "fmt", "-")
	if code != ExitOK || out != formatted {
		t.Errorf("code %d, stdout %q", code, out)
	}
	if code, out, _ := runIn(t, t.TempDir(), unformatted, nil, "fmt", "--check", "-"); code != ExitFmt || out != "" {
		t.Errorf("check: code %d, stdout %q", code, out)
	}
	if code, _, errOut := runIn(t, t.TempDir(), "a = \x00", nil, "fmt", "-"); code != ExitError || !strings.Contains(errOut, "NUL") {
		t.Errorf("NUL: code %d, stderr %q", code, errOut)
	}
}

func TestFmtMissingPath(t *testing.T) {
	code, _, errOut := runIn(t, t.TempDir(), "", nil, "fmt", "nope.hcl")
	if code != ExitError || !strings.Contains(errOut, "Error: no file or directory nope.hcl") {
		t.Errorf("code %d, stderr %q", code, errOut)
	}
}

// TestFmtKeepsRepeatAndEnabled: fmt aligns enabled and repeat_after like
// any attribute, in a campaign and in its blocks, and the result validates.
func TestFmtKeepsRepeatAndEnabled(t *testing.T) {
	src := "service {\n  environment = \"test\"\n}\ncampaign \"c\" {\n  enabled = false\n  repeat_after=\"7d\"\n  notification \"n\" {\n    user_ids = [\"a\"]\n    title = \"t\"\n    body = \"b\"\n    enabled=true\n    repeat_after = \"1h\"\n  }\n}\n"
	want := "service {\n  environment = \"test\"\n}\ncampaign \"c\" {\n  enabled      = false\n  repeat_after = \"7d\"\n  notification \"n\" {\n    user_ids     = [\"a\"]\n    title        = \"t\"\n    body         = \"b\"\n    enabled      = true\n    repeat_after = \"1h\"\n  }\n}\n"
	dir := testutil.WriteFiles(t, map[string]string{"a.hcl": src})
	if code, _, errOut := runIn(t, dir, "", nil, "fmt"); code != ExitOK {
		t.Fatalf("fmt: code %d, stderr %q", code, errOut)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "a.hcl")); string(got) != want {
		t.Errorf("a.hcl = %q, want %q", got, want)
	}
	if code, out, errOut := runIn(t, dir, "", nil, "validate"); code != ExitOK {
		t.Errorf("validate: code %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestFmtDiagnosticsHideSecrets: the snippet of a file fmt cannot parse
// masks a key written in it, as every other command's diagnostics do.
func TestFmtDiagnosticsHideSecrets(t *testing.T) {
	dir := testutil.WriteFiles(t, map[string]string{"a.hcl": "service {\n  api_key = \"k-test-canary-0123456789\" =\n}\n"})
	code, _, errOut := runIn(t, dir, "", nil, "fmt")
	if code != ExitError || !strings.Contains(errOut, "on a.hcl line 2") {
		t.Fatalf("code %d, stderr:\n%s", code, errOut)
	}
	if strings.Contains(errOut, "canary") {
		t.Errorf("fmt's diagnostic shows the key:\n%s", errOut)
	}
}

// TestExamplesFormatted runs fmt --check --recursive over examples/, as a
// user following a README would: every example is fmt-canonical, and CI
// (go test) says so when one is not.
func TestExamplesFormatted(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runIn(t, dir, "", nil, "fmt", "--check", "--recursive")
	if code != ExitOK || out != "" || errOut != "" {
		t.Errorf("fmt --check --recursive examples: exit %d; not canonical (pushform fmt --recursive examples fixes them):\n%s%s", code, out, errOut)
	}
}
