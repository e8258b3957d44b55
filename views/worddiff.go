package views

import (
	"strings"
	"unicode"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// Op is one piece of a word diff.
type Op struct {
	Kind int // -1 deleted, 0 same, +1 inserted
	Text string
}

// maxWords is how many distinct words fit the supplementary private use
// planes, where each word is mapped to one rune for go-diff.
const maxWords = 0x1FFFC

// WordDiff diffs two texts word by word (whitespace runs are words too), so
// a reviewer sees "20% -> 30%" rather than a character soup.
func WordDiff(old, new string) []Op {
	dict := map[string]rune{}
	var words []string
	encode := func(s string) string {
		var b strings.Builder
		for _, w := range tokens(s) {
			r, ok := dict[w]
			if !ok {
				r = rune(0xF0000 + len(words))
				if r > 0xFFFFD {
					r += 0x100000 - 0xFFFFE
				}
				dict[w] = r
				words = append(words, w)
			}
			b.WriteRune(r)
		}
		return b.String()
	}
	a, b := encode(old), encode(new)
	byWord := len(words) <= maxWords
	if !byWord {
		a, b = old, new
	}
	lookup := make(map[rune]string, len(dict))
	for w, r := range dict {
		lookup[r] = w
	}
	dmp := diffmatchpatch.New()
	diffs := dmp.DiffCleanupSemantic(dmp.DiffMain(a, b, false))
	var ops []Op
	for _, d := range diffs {
		text := d.Text
		if byWord {
			var sb strings.Builder
			for _, r := range d.Text {
				sb.WriteString(lookup[r])
			}
			text = sb.String()
		}
		k := 0
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			k = -1
		case diffmatchpatch.DiffInsert:
			k = 1
		}
		if n := len(ops); n > 0 && ops[n-1].Kind == k {
			ops[n-1].Text += text
			continue
		}
		ops = append(ops, Op{Kind: k, Text: text})
	}
	return ops
}

// tokens splits s into alternating runs of space and non-space.
func tokens(s string) []string {
	var out []string
	start, space := 0, false
	for i, r := range s {
		if sp := unicode.IsSpace(r); i == 0 || sp != space {
			if i > start {
				out = append(out, s[start:i])
				start = i
			}
			space = sp
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}
