package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// complNode is what the shell completes after a command path ("" is the
// top level): the words that may come next and the flags.
type complNode struct {
	path  string
	words []string
	flags []complFlag
}

type complFlag struct {
	name, short, usage string
	value              bool // takes a value (the next word)
}

// completionTree lists every command path with its flags, taken from the
// commands' own flag sets, so completion cannot drift from parsing.
func completionTree(ctx context.Context, m *Meta) []complNode {
	var showVersion bool
	nodes := []complNode{{path: "", words: commandNames(), flags: complFlags(globalFlagSet(&Globals{}, &showVersion))}}
	for _, c := range commands() {
		n := complNode{path: c.name}
		switch c.name {
		case "help":
			n.words = commandNames()
		case "completion":
			n.words = []string{"bash", "zsh", "fish"}
		}
		for _, s := range c.subs {
			n.words = append(n.words, s.name)
		}
		if _, fs, err := probeCommand(ctx, m, []string{c.name}); err == nil {
			n.flags = complFlags(fs)
		}
		nodes = append(nodes, n)
		for _, s := range c.subs {
			sn := complNode{path: c.name + " " + s.name}
			if _, fs, err := probeCommand(ctx, m, []string{c.name, s.name}); err == nil {
				sn.flags = complFlags(fs)
			}
			nodes = append(nodes, sn)
		}
	}
	return nodes
}

func complFlags(fs *pflag.FlagSet) []complFlag {
	var out []complFlag
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		_, usage := pflag.UnquoteUsage(f)
		out = append(out, complFlag{name: f.Name, short: f.Shorthand, usage: usage, value: f.NoOptDefVal == ""})
	})
	if !slices.ContainsFunc(out, func(f complFlag) bool { return f.name == "help" }) {
		out = append(out, complFlag{name: "help", short: "h", usage: "show the help"})
	}
	return out
}

// completionHelp is the help of completion; its flags come from the flag set it parses.
func completionHelp() helpDoc {
	return helpDoc{
		usage: []string{"completion bash|zsh|fish"},
		text: "Prints a script that completes pushform's commands, subcommands and flags in the shell. " +
			"Load it from the shell's start-up file.",
		examples: []string{
			"source <(pushform completion bash)            # ~/.bashrc",
			"source <(pushform completion zsh)             # ~/.zshrc, after compinit",
			"pushform completion fish > ~/.config/fish/completions/pushform.fish",
		},
	}
}

func runCompletion(ctx context.Context, m *Meta, args []string) int {
	fs := m.FlagSet("completion")
	if err := m.parse(fs, args); err != nil {
		return m.usageError("completion", err)
	}
	if fs.NArg() != 1 {
		return m.usageError("completion", errors.New("name one shell: bash, zsh or fish"))
	}
	tree := completionTree(ctx, m)
	switch fs.Arg(0) {
	case "bash":
		writeBashCompletion(m.Stdout, tree, false)
	case "zsh":
		writeBashCompletion(m.Stdout, tree, true)
	case "fish":
		writeFishCompletion(m.Stdout, tree)
	default:
		return m.usageError("completion", fmt.Errorf("no completion for shell %s: use bash, zsh or fish", quoteArg(fs.Arg(0))))
	}
	return ExitOK
}

// writeBashCompletion writes a bash completion function. zsh loads the
// same function through bashcompinit.
func writeBashCompletion(w io.Writer, tree []complNode, zsh bool) {
	var b strings.Builder
	if zsh {
		b.WriteString("#compdef pushform\n# zsh completion for pushform. Load it in ~/.zshrc, after compinit:\n#   source <(pushform completion zsh)\n")
		b.WriteString("autoload -U +X bashcompinit && bashcompinit\n\n")
	} else {
		b.WriteString("# bash completion for pushform. Load it in ~/.bashrc:\n#   source <(pushform completion bash)\n\n")
	}
	caseFunc := func(name string, value func(complNode) []string) {
		fmt.Fprintf(&b, "%s() {\n  case \"$1\" in\n", name)
		for _, n := range tree {
			if words := value(n); len(words) > 0 {
				fmt.Fprintf(&b, "    %q) echo %q ;;\n", n.path, strings.Join(words, " "))
			}
		}
		b.WriteString("  esac\n}\n\n")
	}
	caseFunc("_pushform_words", func(n complNode) []string { return n.words })
	caseFunc("_pushform_flags", func(n complNode) []string {
		var out []string
		for _, f := range n.flags {
			out = append(out, "--"+f.name)
		}
		return out
	})
	caseFunc("_pushform_value_flags", func(n complNode) []string {
		var out []string
		for _, f := range n.flags {
			if f.value {
				out = append(out, "--"+f.name)
			}
		}
		return out
	})
	var subPaths []string
	for _, n := range tree {
		if strings.Contains(n.path, " ") {
			subPaths = append(subPaths, fmt.Sprintf("%q", n.path))
		}
	}
	b.WriteString(`_pushform() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
  local cmd="" w f i skip=0
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    if ((skip)); then skip=0; continue; fi
    case $w in
      =) skip=1; continue ;; # bash splits --flag=value at "="
      -*)
        f=--${w#"${w%%[!-]*}"}
        f=${f%%=*}
        if [[ ${COMP_WORDS[i+1]} != "=" && " $(_pushform_value_flags "$cmd") " == *" $f "* ]]; then skip=1; fi
        continue ;;
    esac
    if [[ -z $cmd ]]; then
      cmd=$w
    else
      case "$cmd $w" in
        ` + strings.Join(subPaths, "|") + `) cmd="$cmd $w" ;;
      esac
    fi
  done
  f=--${prev#"${prev%%[!-]*}"}
  if [[ $cur != -* && " $(_pushform_value_flags "$cmd") " == *" $f "* ]]; then
    COMPREPLY=() # a flag's value: file names
    return
  fi
  if [[ $cur == -* ]]; then
    [[ $cur == --* ]] || cur=-$cur # -out completes as --out
    COMPREPLY=($(compgen -W "$(_pushform_flags "$cmd")" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$(_pushform_words "$cmd")" -- "$cur"))
  fi
}

complete -o default -F _pushform pushform
`)
	io.WriteString(w, b.String())
}

// writeFishCompletion writes fish complete commands.
func writeFishCompletion(w io.Writer, tree []complNode) {
	var b strings.Builder
	b.WriteString("# fish completion for pushform. Install it with:\n#   pushform completion fish > ~/.config/fish/completions/pushform.fish\n\n")
	b.WriteString("complete -c pushform -f\n")
	summaries := map[string]string{}
	for _, c := range commands() {
		summaries[c.name] = c.summary
		for _, s := range c.subs {
			summaries[c.name+" "+s.name] = s.summary
		}
	}
	for _, n := range tree {
		cond := "__fish_use_subcommand"
		if n.path != "" {
			parts := strings.Fields(n.path)
			cond = "__fish_seen_subcommand_from " + parts[0]
			// "state show" is not the show command.
			if parents := parentsOf(parts[0]); len(parts) == 1 && len(parents) > 0 {
				cond += "; and not __fish_seen_subcommand_from " + strings.Join(parents, " ")
			}
			if len(parts) == 2 {
				cond += "; and __fish_seen_subcommand_from " + parts[1]
			} else if c, ok := lookupCommand(parts[0]); ok && len(c.subs) > 0 {
				var subs []string
				for _, s := range c.subs {
					subs = append(subs, s.name)
				}
				// Until a subcommand is given.
				cond += "; and not __fish_seen_subcommand_from " + strings.Join(subs, " ")
			}
		}
		for _, word := range n.words {
			desc := summaries[strings.TrimSpace(n.path+" "+word)]
			if n.path == "help" || n.path == "" {
				desc = summaries[word]
			}
			fmt.Fprintf(&b, "complete -c pushform -n %s -a %s -d %s\n", fishQuote(cond), fishQuote(word), fishQuote(desc))
		}
		for _, f := range n.flags {
			line := "complete -c pushform -n " + fishQuote(cond) + " -l " + f.name
			if f.short != "" {
				line += " -s " + f.short
			}
			if f.value {
				line += " -r -F"
			}
			b.WriteString(line + " -d " + fishQuote(f.usage) + "\n")
		}
		if n.path == "apply" || n.path == "show" || n.path == "fmt" {
			fmt.Fprintf(&b, "complete -c pushform -n %s -F\n", fishQuote(cond))
		}
	}
	io.WriteString(w, b.String())
}

// parentsOf lists the commands that have a subcommand named name.
func parentsOf(name string) []string {
	var out []string
	for _, c := range commands() {
		if slices.ContainsFunc(c.subs, func(s subcommand) bool { return s.name == name }) {
			out = append(out, c.name)
		}
	}
	return out
}

func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
