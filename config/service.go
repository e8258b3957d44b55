package config

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"pushform/secret"
)

// DefaultAPIKeyEnv is the variable holding the API key when the service
// block does not name one.
const DefaultAPIKeyEnv = "PUSHFORM_API_KEY"

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

var serviceSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "base_url"},
		{Name: "api_key_env"},
		{Name: "environment"},
		{Name: "sandbox"},
		{Name: "test_devices"},
		{Name: "max_plan_age"},
		{Name: "require_test_send"},
		// Accepted only to explain why a key does not belong here.
		{Name: "api_key"},
	},
}

// serviceBlock is a decoded service block; its attributes may use
// variables and locals, so they wait for the evaluation context.
type serviceBlock = attrBlock

// evalService evaluates the service block of the configuration in dir.
func evalService(sb *serviceBlock, ctx *hcl.EvalContext, dir string) (Service, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	svc := Service{APIKeyEnv: DefaultAPIKeyEnv, Pos: posOf(sb.block.DefRange)}
	attrs := sb.attrs
	if a, ok := attrs["api_key"]; ok {
		diags = append(diags, errDiag("API key in configuration",
			`Configuration files are kept in git, so they must not hold API keys. Put the key in an environment variable and name that variable instead: api_key_env = "PUSHFORM_API_KEY".`,
			a.NameRange.Ptr()))
	}
	if a, ok := attrs["api_key_env"]; ok {
		v, set, d := evalKnownString(a, ctx)
		diags = append(diags, d...)
		if set {
			switch {
			case secret.LooksLikeKey(v):
				diags = append(diags, errDiag("API key in configuration",
					`api_key_env takes the NAME of the environment variable that holds the key, and this value looks like a key itself. Remove it from the file (and rotate it if it was committed), put it in the environment, and name the variable: api_key_env = "PUSHFORM_API_KEY".`,
					a.Expr.Range().Ptr()))
			case !envNameRE.MatchString(v):
				// Not quoted: a value that is not a name may be a key.
				diags = append(diags, errDiag("Invalid api_key_env",
					`api_key_env must name an environment variable (letters, digits and underscores, not starting with a digit), such as "PUSHFORM_API_KEY"; this value is not one (not shown, in case it is a key).`,
					a.Expr.Range().Ptr()))
			default:
				svc.APIKeyEnv, svc.APIKeyEnvPos = v, posOf(a.Expr.Range())
			}
		}
	}
	if a, ok := attrs["test_devices"]; ok {
		var d hcl.Diagnostics
		svc.TestDevices, d = evalTestDevices(a, ctx)
		diags = append(diags, d...)
	}
	diags = append(diags, evalServiceGuardrails(attrs, ctx, &svc)...)
	if a, ok := attrs["environment"]; ok {
		v, set, d := evalKnownString(a, ctx)
		diags = append(diags, d...)
		if set {
			if v != "test" && v != "production" {
				diags = append(diags, errDiag("Invalid environment",
					fmt.Sprintf("environment must be \"test\" or \"production\", got %q.", v), a.Expr.Range().Ptr()))
			} else {
				svc.Environment = v
			}
		}
	} else {
		diags = append(diags, errDiag("Missing environment",
			`The service block must say which environment this configuration is for: environment = "test" or "production". There is no default, because assuming "test" would be unsafe for a production configuration.`,
			sb.block.DefRange.Ptr()))
	}
	if a, ok := attrs["base_url"]; ok {
		v, set, d := evalKnownString(a, ctx)
		diags = append(diags, d...)
		if set {
			if base, err := secret.CheckBaseURL(v); err != nil {
				diags = append(diags, errDiag("Invalid base_url", err.Error()+".", a.Expr.Range().Ptr()))
			} else {
				svc.BaseURL = base
			}
		}
	}
	if a, ok := attrs["sandbox"]; ok {
		v, d := literal(a, cty.String)
		diags = append(diags, d...)
		if !d.HasErrors() && !v.IsNull() {
			if err := CheckSeedFile(dir, v.AsString()); err != nil {
				diags = append(diags, errDiag("Invalid sandbox seed file", err.Error(), a.Expr.Range().Ptr()))
			} else {
				svc.Sandbox = v.AsString()
			}
		}
		if _, both := attrs["base_url"]; both {
			diags = append(diags, errDiag("Conflicting service settings",
				"sandbox runs an embedded local service, so base_url would be ignored; set one or the other.", a.NameRange.Ptr()))
		}
	}
	return svc, diags
}

// CheckSeedFile checks p, the path of a sandbox seed file relative to
// the configuration directory dir: it must name a file inside dir, so a
// configuration or a test file reads nothing from outside it.
func CheckSeedFile(dir, p string) error {
	if p == "" {
		return fmt.Errorf("sandbox names the seed file of the embedded sandbox, such as \"sandbox.hcl\"")
	}
	if filepath.IsAbs(p) || !within(dir, filepath.Join(dir, p)) {
		return fmt.Errorf("the seed file %q must be inside the configuration directory", p)
	}
	if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
		return fmt.Errorf("the seed file %q does not exist in the configuration directory", p)
	}
	return nil
}
