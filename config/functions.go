package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/tryfunc"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// functions builds the function table of one Load: the go-cty stdlib set
// Terraform users know, Terraform's startswith, endswith, try, can, sum,
// alltrue, anytrue and one,
// plus file and templatefile confined to dir.
func functions(dir string, b *budget) map[string]function.Function {
	fs := map[string]function.Function{
		"abs":             stdlib.AbsoluteFunc,
		"ceil":            stdlib.CeilFunc,
		"floor":           stdlib.FloorFunc,
		"max":             stdlib.MaxFunc,
		"min":             stdlib.MinFunc,
		"parseint":        stdlib.ParseIntFunc,
		"format":          stdlib.FormatFunc,
		"formatlist":      stdlib.FormatListFunc,
		"join":            stdlib.JoinFunc,
		"split":           stdlib.SplitFunc,
		"lower":           stdlib.LowerFunc,
		"upper":           stdlib.UpperFunc,
		"title":           stdlib.TitleFunc,
		"trim":            stdlib.TrimFunc,
		"trimprefix":      stdlib.TrimPrefixFunc,
		"trimsuffix":      stdlib.TrimSuffixFunc,
		"trimspace":       stdlib.TrimSpaceFunc,
		"chomp":           stdlib.ChompFunc,
		"indent":          stdlib.IndentFunc,
		"replace":         stdlib.ReplaceFunc,
		"substr":          stdlib.SubstrFunc,
		"strrev":          stdlib.ReverseFunc,
		"length":          lengthFunc(),
		"concat":          stdlib.ConcatFunc,
		"contains":        stdlib.ContainsFunc,
		"distinct":        stdlib.DistinctFunc,
		"element":         stdlib.ElementFunc,
		"flatten":         stdlib.FlattenFunc,
		"index":           stdlib.IndexFunc,
		"keys":            stdlib.KeysFunc,
		"values":          stdlib.ValuesFunc,
		"lookup":          stdlib.LookupFunc,
		"merge":           stdlib.MergeFunc,
		"range":           stdlib.RangeFunc, // capped at 1024 values by go-cty
		"reverse":         stdlib.ReverseListFunc,
		"slice":           stdlib.SliceFunc,
		"sort":            stdlib.SortFunc,
		"coalesce":        stdlib.CoalesceFunc,
		"coalescelist":    stdlib.CoalesceListFunc,
		"compact":         stdlib.CompactFunc,
		"setunion":        stdlib.SetUnionFunc,
		"setsubtract":     stdlib.SetSubtractFunc,
		"setintersection": stdlib.SetIntersectionFunc,
		"setproduct":      stdlib.SetProductFunc,
		"zipmap":          stdlib.ZipmapFunc,
		"chunklist":       stdlib.ChunklistFunc,
		"jsondecode":      stdlib.JSONDecodeFunc,
		"jsonencode":      stdlib.JSONEncodeFunc,
		"csvdecode":       stdlib.CSVDecodeFunc,
		"regex":           stdlib.RegexFunc,
		"regexall":        stdlib.RegexAllFunc,
		"formatdate":      stdlib.FormatDateFunc,
		"timeadd":         stdlib.TimeAddFunc,
		"tostring":        stdlib.MakeToFunc(cty.String),
		"tonumber":        stdlib.MakeToFunc(cty.Number),
		"tobool":          stdlib.MakeToFunc(cty.Bool),
		"tolist":          toCollectionFunc(cty.List),
		"toset":           toCollectionFunc(cty.Set),
		"tomap":           toCollectionFunc(cty.Map),
		"file":            fileFunc(dir),
		"startswith":      startsWithFunc,
		"endswith":        endsWithFunc,
		"try":             tryfunc.TryFunc,
		"can":             tryfunc.CanFunc,
		"sum":             sumFunc,
		"alltrue":         allTrueFunc,
		"anytrue":         anyTrueFunc,
		"one":             oneFunc,
	}
	cappedFunctions(fs, b)
	// templatefile gets the table without itself, so templates cannot recurse.
	inner := make(map[string]function.Function, len(fs))
	for k, v := range fs {
		inner[k] = v
	}
	fs["templatefile"] = templateFileFunc(dir, inner, b)
	return fs
}

// lengthFunc is Terraform's length: characters of a string, elements of a
// collection.
func lengthFunc() function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{
			Name: "value", Type: cty.DynamicPseudoType,
			AllowUnknown: true, AllowDynamicType: true,
		}},
		Type: function.StaticReturnType(cty.Number),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			v := args[0]
			switch {
			case v.Type() == cty.DynamicPseudoType:
				return cty.UnknownVal(cty.Number), nil
			case v.Type() == cty.String:
				return stdlib.Strlen(v)
			case v.Type().IsCollectionType() || v.Type().IsTupleType() || v.Type().IsObjectType():
				if v.Type().IsObjectType() {
					return cty.NumberIntVal(int64(len(v.Type().AttributeTypes()))), nil
				}
				return stdlib.Length(v)
			default:
				return cty.UnknownVal(cty.Number), fmt.Errorf("argument must be a string or a collection, not %s", v.Type().FriendlyName())
			}
		},
	})
}

// resolvePath resolves p against dir and refuses anything outside dir,
// symbolic links included.
func resolvePath(dir, p string) (string, error) {
	full := p
	if !filepath.IsAbs(full) {
		full = filepath.Join(dir, p)
	}
	full = filepath.Clean(full)
	if !within(dir, full) {
		return "", fmt.Errorf("%s is outside the configuration directory", p)
	}
	real, err := filepath.EvalSymlinks(full)
	if err != nil {
		return "", fmt.Errorf("no file %s in the configuration directory", p)
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	if !within(realDir, real) {
		return "", fmt.Errorf("%s links outside the configuration directory", p)
	}
	return real, nil
}

func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

func readFunctionFile(dir, p string) (string, error) {
	full, err := resolvePath(dir, p)
	if err != nil {
		return "", err
	}
	info, err := os.Stat(full)
	if err != nil {
		return "", err
	}
	if !info.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", p)
	}
	src, err := ReadSource(full, MaxFunctionFileSize)
	if err != nil {
		return "", err
	}
	if !utf8.Valid(src) {
		return "", fmt.Errorf("%s is not UTF-8 text", p)
	}
	return string(src), nil
}

func fileFunc(dir string) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "path", Type: cty.String}},
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			s, err := readFunctionFile(dir, args[0].AsString())
			if err != nil {
				return cty.UnknownVal(cty.String), err
			}
			return cty.StringVal(s), nil
		},
	})
}

func templateFileFunc(dir string, funcs map[string]function.Function, b *budget) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{
			{Name: "path", Type: cty.String},
			{Name: "vars", Type: cty.DynamicPseudoType},
		},
		Type: function.StaticReturnType(cty.DynamicPseudoType),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			p := args[0].AsString()
			src, err := readFunctionFile(dir, p)
			if err != nil {
				return cty.DynamicVal, err
			}
			vars := args[1]
			if !(vars.Type().IsObjectType() || vars.Type().IsMapType()) || vars.IsNull() {
				return cty.DynamicVal, fmt.Errorf("vars must be an object or map")
			}
			if !vars.IsWhollyKnown() {
				return cty.DynamicVal, nil
			}
			ctx, err := templateContext(funcs, vars)
			if err != nil {
				return cty.DynamicVal, err
			}
			if nestingOverflow([]byte(src), MaxNesting) >= 0 {
				return cty.DynamicVal, fmt.Errorf("%s is nested more than %d levels deep", p, MaxNesting)
			}
			expr, diags := hclsyntax.ParseTemplate([]byte(src), filepath.ToSlash(p), hcl.Pos{Line: 1, Column: 1})
			if diags.HasErrors() {
				return cty.DynamicVal, fmt.Errorf("%s: %s", p, diags.Error())
			}
			meterForExprs(expr, b) // its for directives spend from the configuration's budget
			val, diags := expr.Value(ctx)
			if diags.HasErrors() {
				return cty.DynamicVal, fmt.Errorf("%s: %s", p, diags.Error())
			}
			return val, nil
		},
	})
}
