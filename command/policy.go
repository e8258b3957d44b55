package command

import (
	"errors"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"pushform/plandoc"
)

// PolicyDirsEnv lists policy directories, separated like PATH; they come
// after those of --policy-dir.
const PolicyDirsEnv = "PUSHFORM_POLICY_DIRS"

// policyFlags are --policy-dir, --override-policy and --override-reason.
type policyFlags struct {
	dirs      []string
	overrides []string
	reason    string
}

// bindDirs adds --policy-dir (validate, plan, apply).
func (pf *policyFlags) bindDirs(fs *pflag.FlagSet) {
	fs.StringArrayVar(&pf.dirs, "policy-dir", nil, "add the policies of the *.policy.hcl files in `DIR` (repeatable; "+PolicyDirsEnv+" adds more)")
}

// bindOverrides adds --override-policy and --override-reason (plan,
// apply).
func (pf *policyFlags) bindOverrides(fs *pflag.FlagSet) {
	fs.StringArrayVar(&pf.overrides, "override-policy", nil, "let the deny policy `NAME` through although it fails (repeatable; needs --override-reason)")
	fs.StringVar(&pf.reason, "override-reason", "", "why the overridden policies may fail, `TEXT` kept in the state's history")
}

// check refuses an override without a reason, and a reason without one.
func (pf *policyFlags) check() error {
	switch {
	case len(pf.overrides) > 0 && strings.TrimSpace(pf.reason) == "":
		return errors.New("--override-policy needs --override-reason TEXT: why the policy may fail, kept in the state's history")
	case len(pf.overrides) == 0 && pf.reason != "":
		return errors.New("--override-reason gives the reason of --override-policy NAME, which is missing")
	}
	for _, name := range pf.overrides {
		if name == "" {
			return errors.New("--override-policy needs a policy name")
		}
	}
	return nil
}

// overrideList is the overrides the flags give.
func (pf *policyFlags) overrideList() []plandoc.Override {
	var out []plandoc.Override
	for _, name := range pf.overrides {
		out = append(out, plandoc.Override{Policy: name, Reason: pf.reason})
	}
	return out
}

// policyDirs are the policy directories: --policy-dir's, relative to the
// configuration directory as every flag's path, then those of
// PUSHFORM_POLICY_DIRS, relative to the directory pushform runs in.
func (m *Meta) policyDirs(pf policyFlags) []string {
	var dirs []string
	for _, d := range pf.dirs {
		dirs = append(dirs, m.path(d))
	}
	for _, d := range filepath.SplitList(m.Getenv(PolicyDirsEnv)) {
		switch {
		case d == "":
		case filepath.IsAbs(d):
			dirs = append(dirs, d)
		default:
			dirs = append(dirs, filepath.Join(m.Dir, d))
		}
	}
	return dirs
}
