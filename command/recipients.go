package command

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"pushform/config"
	"pushform/termtext"
)

// runRecipients prints the users who can receive a push right now.
func runRecipients(ctx context.Context, m *Meta, args []string) int {
	var cf configFlags
	var asJSON bool
	var statePath string
	fs := m.FlagSet("recipients")
	cf.bind(fs)
	bindStateFlag(fs, &statePath)
	fs.BoolVar(&asJSON, "json", false, "print as a JSON array")
	if ok, code := m.Parse(fs, args); !ok {
		return code
	}
	cfg, diags := m.loadConfig(config.NewLoader(), cf, nil)
	if diags.HasErrors() {
		return ExitError
	}
	svc, err := m.connect(cfg, m.statePath(statePath))
	if err != nil {
		return m.fail(err)
	}
	ids, err := fetchRecipients(ctx, svc)
	if cerr := svc.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return m.fail(err)
	}
	if asJSON {
		if ids == nil {
			ids = []string{}
		}
		if err := json.NewEncoder(m.Stdout).Encode(ids); err != nil {
			return m.fail(err)
		}
		return ExitOK
	}
	var b strings.Builder
	for _, id := range ids {
		b.WriteString(termtext.Clean(id))
		b.WriteByte('\n')
	}
	fmt.Fprint(m.Stdout, b.String())
	fmt.Fprintf(m.Stderr, "%s can receive a push right now.\n", plural(len(ids), "user"))
	return ExitOK
}
