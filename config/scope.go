package config

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty/function"
)

// Functions is the function table of a configuration in dir (file and
// templatefile read there), for the expressions a front end evaluates
// itself: the values and conditions of pushform test files.
func Functions(dir string) map[string]function.Function {
	return functions(dir, newBudget(MaxIterations, MaxBytes))
}

// Scope is the root evaluation context of the last Load (var, local,
// topic and data, with the function table), for expressions a front end
// evaluates over the configuration: pushform test's conditions read the
// variables and locals in a child of it. After a Resolve, the recipients
// it was given and the locals that read them are known. Nil before a
// Load that evaluated anything.
func (l *Loader) Scope() *hcl.EvalContext {
	switch {
	case l.last == nil:
		return nil
	case l.last.resolved != nil:
		return l.last.resolvedScope()
	}
	return l.last.root
}
