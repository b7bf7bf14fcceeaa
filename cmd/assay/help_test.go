package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// `assay --help` groups the verbs from a first run to the store, every
// top-level verb in a group, and every verb has an example whose flags it
// accepts.
func TestHelpIsGroupedWithAnExampleOnEveryVerb(t *testing.T) {
	t.Parallel()
	root := newRoot(&cli{})
	for _, cmd := range root.Commands() {
		if cmd.GroupID == "" && cmd.IsAvailableCommand() {
			t.Errorf("assay %s is in no help group", cmd.Name())
		}
	}
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		if cmd.Name() == "help" || cmd.Name() == "completion" || cmd.HasParent() && cmd.Parent().Name() == "completion" {
			return
		}
		if strings.TrimSpace(cmd.Example) == "" {
			t.Errorf("%s has no example", cmd.CommandPath())
		}
		for _, line := range strings.Split(cmd.Example, "\n") {
			checkExample(t, root, cmd, line)
		}
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(root)

	code, out, _ := runCLI(t, "--help")
	if code != exitOK {
		t.Fatalf("--help: exit %d", code)
	}
	var at []int
	for _, g := range []string{"Getting started:", "Workloads and CI:", "Organisms and receipts:", "The store (--dir, default .algal):", "Examples:"} {
		i := strings.Index(out, g)
		if i < 0 {
			t.Fatalf("--help lacks %q:\n%s", g, out)
		}
		at = append(at, i)
	}
	if !(at[4] < at[0] && at[0] < at[1] && at[1] < at[2] && at[2] < at[3]) {
		t.Errorf("--help's groups are out of order:\n%s", out)
	}
}

// checkExample requires an example's assay command line (after a pipe or
// &&, before a # comment) to name a verb that exists and flags it takes.
func checkExample(t *testing.T, root, owner *cobra.Command, line string) {
	t.Helper()
	line, _, _ = strings.Cut(line, "#")
	for _, part := range strings.FieldsFunc(line, func(r rune) bool { return r == '|' || r == '&' }) {
		fields := strings.Fields(part)
		if len(fields) == 0 || fields[0] != "assay" {
			continue
		}
		cmd, rest, err := root.Find(fields[1:])
		if err != nil {
			t.Errorf("%s: example %q: %v", owner.CommandPath(), part, err)
			continue
		}
		if err := cmd.ParseFlags(rest); err != nil {
			t.Errorf("%s: example %q: %v", owner.CommandPath(), part, err)
		}
	}
}
