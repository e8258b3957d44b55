package backend

import (
	"fmt"

	"pushform/config"
	"pushform/secret"
)

// SecretNamer is an Opener that reads secrets from the environment, which
// a configuration's values must not hold (config.BackendSecrets).
type SecretNamer interface {
	Secrets(getenv func(string) string) []config.BackendSecret
}

var (
	_ config.BackendSecrets = Registry(nil)
	_ SecretNamer           = (*PGConfig)(nil)
)

// BackendSecrets implements config.BackendSecrets: the secrets b's type
// reads, when it names any.
func (r Registry) BackendSecrets(b *config.Backend, getenv func(string) string) []config.BackendSecret {
	o, diags := r.Decode(b)
	if diags.HasErrors() {
		return nil
	}
	if n, ok := o.(SecretNamer); ok {
		return n.Secrets(getenv)
	}
	return nil
}

// Secrets is the password of the connection string c reads, as written and
// unescaped.
func (c *PGConfig) Secrets(getenv func(string) string) []config.BackendSecret {
	pws := secret.ConnPasswords(getenv(c.ConnStrEnv))
	if len(pws) == 0 {
		return nil
	}
	return []config.BackendSecret{{What: fmt.Sprintf("the database password (%s)", c.ConnStrEnv), Values: pws}}
}
