package command

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agext/levenshtein"
	"github.com/spf13/pflag"
)

// normaliseArgs rewrites Terraform-style single-dash long flags to the
// double-dash form pflag parses: -out=FILE, -auto-approve and -var k=v mean
// --out=FILE, --auto-approve and --var k=v. Single letters (-h, -v) are
// left alone: they are shorthands. Values are never rewritten: in
// "--lock-timeout -5m" the "-5m" is a value, because --lock-timeout takes
// one. Everything after "--" is left alone, and with interspersed false so
// is everything from the first argument that is not a flag (the command
// name, for the global flags).
func normaliseArgs(fs *pflag.FlagSet, args []string, interspersed bool) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(out, args[i:]...)
		case len(a) > 2 && a[0] == '-' && a[1] != '-':
			if name, _, _ := strings.Cut(a[1:], "="); len(name) > 1 {
				a = "-" + a
			}
		case !strings.HasPrefix(a, "-") || a == "-":
			if !interspersed {
				return append(out, args[i:]...)
			}
			out = append(out, a)
			continue
		}
		out = append(out, a)
		// A flag that takes a value and has no "=" consumes the next
		// argument as it is.
		if name, ok := strings.CutPrefix(a, "--"); ok && !strings.Contains(name, "=") && i+1 < len(args) {
			if f := fs.Lookup(name); f != nil && f.NoOptDefVal == "" {
				i++
				out = append(out, args[i])
			}
		}
	}
	return out
}

// flagError turns a pflag parse error into one line that names the flag,
// with a suggestion for a misspelt one.
func flagError(fs *pflag.FlagSet, err error) error {
	var notExist *pflag.NotExistError
	var needsValue *pflag.ValueRequiredError
	var invalid *pflag.InvalidValueError
	switch {
	case errors.As(err, &notExist):
		name := notExist.GetSpecifiedName()
		dashes := "--"
		if notExist.GetSpecifiedShortnames() != "" {
			dashes = "-"
		}
		return fmt.Errorf("unknown flag %s%s%s", dashes, escapeControl(name), didYouMean(name, flagNames(fs), "--"))
	case errors.As(err, &needsValue):
		f := needsValue.GetFlag()
		return fmt.Errorf("flag --%s needs a value: --%s %s", f.Name, f.Name, valueName(f))
	case errors.As(err, &invalid):
		f := invalid.GetFlag()
		return fmt.Errorf("invalid value %q for --%s: %v", invalid.GetValue(), f.Name, invalid.Unwrap())
	}
	return err
}

// escapeControl escapes control characters of a word from the command line,
// so an error message cannot drive the terminal.
func escapeControl(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return !strconv.IsPrint(r) && r != ' ' }) < 0 {
		return s
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

// flagNames lists the long names fs accepts, help included.
func flagNames(fs *pflag.FlagSet) []string {
	names := []string{"help"}
	fs.VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	return names
}

// didYouMean returns " (did you mean PREFIX+name?)" for the candidate
// closest to typed, or "" when none is close.
func didYouMean(typed string, candidates []string, prefix string) string {
	if s := suggest(typed, candidates); s != "" {
		return " (did you mean " + prefix + s + "?)"
	}
	return ""
}

// suggest returns the candidate closest to typed, or "": the only one
// typed begins (at least 3 characters), else the nearest by edit distance
// if it is under 3, as Terraform's suggestions.
func suggest(typed string, candidates []string) string {
	if len(typed) >= 3 {
		var prefixed []string
		for _, c := range candidates {
			if strings.HasPrefix(c, typed) && c != typed {
				prefixed = append(prefixed, c)
			}
		}
		if len(prefixed) == 1 {
			return prefixed[0]
		}
	}
	best, bestDist := "", 3
	for _, c := range candidates {
		if d := levenshtein.Distance(typed, c, nil); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// valueName is the placeholder of a flag's value: FILE in "--out FILE".
func valueName(f *pflag.Flag) string {
	name, _ := pflag.UnquoteUsage(f)
	switch name {
	case "string", "stringArray", "":
		return "VALUE"
	case "duration":
		return "DURATION"
	case "int", "int64", "uint":
		return "N"
	case "float64":
		return "NUMBER"
	}
	return name
}

// cliArgsEnv is the variable of extra arguments for every command, as
// Terraform's TF_CLI_ARGS; cliArgsEnv + "_" + command (dashes and spaces as
// underscores: PUSHFORM_CLI_ARGS_plan, PUSHFORM_CLI_ARGS_state_list) holds
// those for one command.
const cliArgsEnv = "PUSHFORM_CLI_ARGS"

// withEnvArgs inserts the arguments of PUSHFORM_CLI_ARGS and then those of
// PUSHFORM_CLI_ARGS_<command> right after the command path (args[:depth]),
// before the arguments of the command line, as Terraform does: a flag
// given twice takes its last value, so the command line wins over the
// command's variable, which wins over the general one. It returns the names
// of the variables that added arguments.
func withEnvArgs(getenv func(string) string, path []string, args []string) ([]string, []string, error) {
	depth := len(path)
	var extra, from []string
	for _, name := range []string{cliArgsEnv, cliArgsEnv + "_" + strings.ReplaceAll(strings.Join(path, "_"), "-", "_")} {
		v := getenv(name)
		if strings.TrimSpace(v) == "" {
			continue
		}
		words, err := splitWords(v)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		extra = append(extra, words...)
		from = append(from, name)
	}
	if len(extra) == 0 {
		return args, nil, nil
	}
	return slices.Concat(args[:depth], extra, args[depth:]), from, nil
}

// splitWords splits s into words as a POSIX shell would, without expanding
// anything: blanks separate words, single quotes keep everything, double
// quotes keep everything but \" \\ \$ \` and a backslash-newline, and a
// backslash outside quotes keeps the next character.
func splitWords(s string) ([]string, error) {
	var words []string
	var b strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, b.String())
				b.Reset()
				inWord = false
			}
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, errors.New("unterminated single quote")
			}
			b.WriteString(s[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0 {
					i++
					if s[i] == '\n' {
						continue
					}
				}
				b.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New("unterminated double quote")
			}
			inWord = true
		case c == '\\':
			if i+1 >= len(s) {
				return nil, errors.New("backslash at the end")
			}
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
				inWord = true
			}
		default:
			b.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, b.String())
	}
	return words, nil
}

// shellQuote quotes s for a POSIX shell when it needs it, so a printed
// command can be pasted.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// addressAndIDs returns the one address cmd takes (of what: "a
// notification"), checking that the ids of --user and --device are not
// empty.
func addressAndIDs(cmd, what string, fs *pflag.FlagSet, users, devices []string) (string, error) {
	switch fs.NArg() {
	case 0:
		return "", fmt.Errorf("%s takes the address of %s, such as notification.welcome", cmd, what)
	case 1:
	default:
		return "", fmt.Errorf("%s takes one address, not %d arguments", cmd, fs.NArg())
	}
	for _, id := range slices.Concat(users, devices) {
		if strings.TrimSpace(id) == "" {
			return "", errors.New("--user and --device take a non-empty id")
		}
	}
	return fs.Arg(0), nil
}
