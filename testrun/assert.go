package testrun

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"pushform/backend"
	"pushform/config"
	"pushform/executor"
	"pushform/message"
	"pushform/operation"
	"pushform/plandoc"
	"pushform/planner"
	"pushform/sandbox"
	"pushform/state"
	"pushform/testfile"
	"pushform/testreport"
)

// Types of the objects conditions read, for the null of a run that has
// none (apply in a plan run).
var applyType = plandoc.ObjectValue(Apply{Failures: []ApplyFailure{}, Errors: []string{}}).Type()

// scope is what a run's conditions see: the configuration's variables,
// locals and functions, plan, apply, requests, and the functions device,
// history_user and history_device.
func (fr *fileRun) scope(op *operation.Run, out *outcome, reqs []Request) *hcl.EvalContext {
	doc := plandoc.New(out.plan)
	doc.Policies = out.policies
	apply := cty.NullVal(applyType)
	if out.applied {
		var res *executor.Result
		if out.result != nil && out.result.Sent {
			res = out.result.Result
		}
		apply = plandoc.ObjectValue(applyObject(res))
	}
	if reqs == nil {
		reqs = []Request{}
	}
	ctx := op.Loader.Scope().NewChild()
	ctx.Variables = map[string]cty.Value{"plan": doc.Value(), "apply": apply, "requests": plandoc.ObjectValue(reqs)}
	var st *state.State
	var stErr error
	read := func() (*state.State, error) {
		if st == nil && stErr == nil {
			st, stErr = fr.state.Read()
		}
		return st, stErr
	}
	var srv *sandbox.Server
	ctx.Functions = map[string]function.Function{
		"device": idFunc(plandoc.ObjectValue(Device{}).Type(), func(id string) (cty.Value, error) {
			if srv == nil {
				var err error
				if srv, err = fr.sandbox(op.Session.Config); err != nil {
					return cty.NilVal, err
				}
			}
			v, ok := srv.Device(id)
			if !ok {
				return cty.NilVal, fmt.Errorf("the sandbox has no device %q", id)
			}
			return plandoc.ObjectValue(deviceObject(v)), nil
		}),
		"history_user":   historyFunc(read, message.TargetUsers),
		"history_device": historyFunc(read, message.TargetDevices),
	}
	return ctx
}

// sandbox is a server holding the devices as the last run left them.
func (fr *fileRun) sandbox(cfg *config.Config) (*sandbox.Server, error) {
	seed, err := fr.resolveSeed(cfg)
	if err != nil {
		return nil, err
	}
	srv := sandbox.New(seed, sandbox.Options{})
	if err := srv.LoadDevices(filepath.Join(fr.devices, sandbox.DefaultDevicesFile)); err != nil {
		return nil, err
	}
	return srv, nil
}

var deliveryListType = cty.List(plandoc.ObjectValue(Delivery{}).Type())

// historyFunc is history_user or history_device: the records of one
// target, oldest first.
func historyFunc(read func() (*state.State, error), kind message.TargetKind) function.Function {
	return idFunc(deliveryListType, func(id string) (cty.Value, error) {
		st, err := read()
		if err != nil {
			return cty.NilVal, err
		}
		return plandoc.ObjectValue(history(st, kind, id)), nil
	})
}

// idFunc is a function of one id (a non-empty string) returning ty.
func idFunc(ty cty.Type, fn func(id string) (cty.Value, error)) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "id", Type: cty.String}},
		Type:   function.StaticReturnType(ty),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			id := args[0].AsString()
			if id == "" {
				return cty.NilVal, function.NewArgErrorf(0, "the id is empty")
			}
			return fn(id)
		},
	})
}

// check evaluates one assert: nil when its condition holds, else the
// failure with the condition's source and the values of its parts.
func (fr *fileRun) check(a *testfile.Assert, ctx *hcl.EvalContext) *testreport.Failure {
	r := a.Condition.Range()
	f := &testreport.Failure{File: r.Filename, Line: r.Start.Line, Summary: "Test assertion failed", Expression: fr.source(r)}
	v, diags := a.Condition.Value(ctx)
	if diags.HasErrors() {
		f.Summary, f.Message = "Invalid condition", fr.o.Secrets.String(backend.DiagError(diags).Error())
		return f
	}
	v, err := convert.Convert(v, cty.Bool)
	switch {
	case err != nil:
		f.Summary, f.Message = "Invalid condition", "The condition must be true or false: "+err.Error()+"."
		return f
	case v.IsNull():
		f.Summary, f.Message = "Invalid condition", "The condition is null; it must be true or false."
		return f
	case !v.IsKnown():
		f.Summary, f.Message = "Invalid condition", "The condition is not known after the run."
		return f
	case v.True():
		return nil
	}
	f.Message = "(its error_message could not be evaluated)"
	if m, d := a.ErrorMessage.Value(ctx); !d.HasErrors() {
		if s, err := convert.Convert(m, cty.String); err == nil && s.IsKnown() && !s.IsNull() {
			f.Message = s.AsString()
		}
	}
	f.Message = fr.o.Secrets.String(f.Message)
	f.Values = fr.seen(a.Condition, ctx, nil)
	return f
}

// seen lists what the parts of a failed condition evaluated to: each
// operand of its comparisons and logical operators, down to what is
// neither (a reference, a function call, an index), and no literal.
func (fr *fileRun) seen(expr hcl.Expression, ctx *hcl.EvalContext, out []testreport.Value) []testreport.Value {
	switch e := expr.(type) {
	case *hclsyntax.BinaryOpExpr:
		return fr.seen(e.RHS, ctx, fr.seen(e.LHS, ctx, out))
	case *hclsyntax.UnaryOpExpr:
		return fr.seen(e.Val, ctx, out)
	case *hclsyntax.ParenthesesExpr:
		return fr.seen(e.Expression, ctx, out)
	case *hclsyntax.LiteralValueExpr:
		return out
	case *hclsyntax.TemplateExpr, *hclsyntax.TupleConsExpr, *hclsyntax.ObjectConsExpr:
		if len(expr.Variables()) == 0 && !callsFunction(e.(hclsyntax.Expression)) {
			return out // a literal: its value is its text
		}
	}
	text := fr.source(expr.Range())
	for _, s := range out {
		if s.Expression == text {
			return out
		}
	}
	v, diags := expr.Value(ctx)
	shown := render(v)
	if diags.HasErrors() {
		shown = "(error: " + backend.DiagError(diags).Error() + ")"
	}
	return append(out, testreport.Value{Expression: text, Value: fr.o.Secrets.String(shown)})
}

// callsFunction reports whether expr calls a function anywhere.
func callsFunction(expr hclsyntax.Expression) bool {
	calls := false
	hclsyntax.VisitAll(expr, func(n hclsyntax.Node) hcl.Diagnostics {
		if _, ok := n.(*hclsyntax.FunctionCallExpr); ok {
			calls = true
		}
		return nil
	})
	return calls
}

// source is the text of the test file at r.
func (fr *fileRun) source(r hcl.Range) string {
	if r.Start.Byte < 0 || r.End.Byte > len(fr.src) || r.Start.Byte > r.End.Byte {
		return ""
	}
	return string(fr.src[r.Start.Byte:r.End.Byte])
}

// render shows v compactly, as JSON, whole: a view shortens it.
func render(v cty.Value) string {
	switch {
	case v == cty.NilVal:
		return "(none)"
	case !v.IsWhollyKnown():
		return "(not known)"
	case v.IsNull():
		return "null"
	}
	v, _ = v.Unmark()
	b, err := ctyjson.Marshal(v, v.Type())
	if err != nil {
		return fmt.Sprintf("(%s)", v.Type().FriendlyName())
	}
	return string(b)
}

// discard is the apply view of a test run: the run's result is the
// report, not the apply's output.
type discard struct{}

func (discard) Plan(*planner.Plan) error                                              { return nil }
func (discard) Policies([]plandoc.Policy)                                             {}
func (discard) Start(*planner.Plan)                                                   {}
func (discard) Event(executor.Event)                                                  {}
func (discard) NoChanges()                                                            {}
func (discard) Finish(*planner.Plan, *executor.Result, time.Duration, *config.Config) {}
func (discard) Flush()                                                                {}
