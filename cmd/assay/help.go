package main

import (
	_ "embed"
	"strings"
	"sync"

	"github.com/algal-assay/assay/ci/artifact"
	"github.com/rogpeppe/go-internal/txtar"
	"github.com/spf13/cobra"
)

// The help's groups, from a first run to the store, and which top-level
// verb sits in which: `assay --help` is read top to bottom by someone who
// has not used Assay yet.
var helpGroups = []struct {
	id, title string
	verbs     []string
}{
	{"start", "Getting started:", []string{"init", "run", "check", "explain", "version"}},
	{"workloads", "Workloads and CI:", []string{"workloads", "bench", "foundry", "suite", "record", "ci"}},
	{"organisms", "Organisms and receipts:", []string{"verify", "resume", "replay", "inspect", "diff", "digest", "canon", "pack", "unpack", "bundle", "call", "tool-def", "expr", "mailbox"}},
	{"store", "The store (--dir, default .algal):", []string{"runs", "manifests", "manifest", "store", "slots", "slot"}},
}

// helpText is the long help and the examples of every verb, by command
// path (help.txtar: prose kept as text rather than Go string literals,
// one section per verb).
//
//go:embed help.txtar
var helpText []byte

// helpSections are help.txtar's sections by name: "assay ci verify" is
// that verb's long help, "assay ci verify: example" its examples.
var helpSections = sync.OnceValue(func() map[string]string {
	sections := map[string]string{}
	for _, f := range txtar.Parse(helpText).Files {
		text := strings.TrimSuffix(string(f.Data), "\n")
		sections[f.Name] = strings.ReplaceAll(text, "{{artifact.VerifiedName}}", artifact.VerifiedName)
	}
	return sections
})

// organizeHelp puts the top-level verbs in their groups and gives every
// verb its long help and its example (indented as cobra prints examples)
// from help.txtar.
func organizeHelp(root *cobra.Command) {
	for _, g := range helpGroups {
		root.AddGroup(&cobra.Group{ID: g.id, Title: g.title})
		for _, v := range g.verbs {
			if cmd, _, err := root.Find([]string{v}); err == nil && cmd != root {
				cmd.GroupID = g.id
			}
		}
	}
	root.AddGroup(&cobra.Group{ID: "help", Title: "Help:"})
	root.SetHelpCommandGroupID("help")
	root.SetCompletionCommandGroupID("help")
	sections := helpSections()
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		path := cmd.CommandPath()
		if long, ok := sections[path]; ok && cmd.Long == "" {
			cmd.Long = long
		}
		if ex, ok := sections[path+": example"]; ok && cmd.Example == "" {
			cmd.Example = "  " + strings.ReplaceAll(ex, "\n", "\n  ")
		}
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
