package main

import (
	"strings"
	"testing"
)

// Every section of help.txtar names a verb ("assay PATH" or "assay PATH:
// example"), and the verb shows it: a section no verb reads, or one its
// verb's Go file overrides, would be help nobody sees.
func TestHelpTextSectionsNameVerbs(t *testing.T) {
	t.Parallel()
	root := newRoot(&cli{})
	for name, text := range helpSections() {
		path, example := strings.CutSuffix(name, ": example")
		cmd, rest, err := root.Find(strings.Fields(path)[1:])
		if err != nil || len(rest) > 0 || cmd.CommandPath() != path {
			t.Errorf("help.txtar section %q names no verb", name)
			continue
		}
		shown := cmd.Long
		if example {
			shown = strings.ReplaceAll(strings.TrimPrefix(cmd.Example, "  "), "\n  ", "\n")
		}
		if shown != text {
			t.Errorf("%s: the verb does not show help.txtar's section %q", path, name)
		}
		if strings.Contains(text, "{{") {
			t.Errorf("%s: an unexpanded placeholder in %q", path, name)
		}
	}
}
