package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/algal-assay/assay/ci/scaffold"
	"github.com/spf13/cobra"
)

// newInitCmd is `assay init [DIR]`: the scaffold is ci/scaffold's.
func newInitCmd(c *cli) *cobra.Command {
	var opts scaffold.Options
	cmd := &cobra.Command{
		Use:   "init [DIR]",
		Short: "Scaffold a starter organism, a bench and a foundry workload, the Ginkgo suite and the PR workflows",
		Long: "Write into DIR (default .) a starter organism and a constant baseline (organisms/), a bench and a\n" +
			"foundry workload over them (suites/), the Ginkgo suite file (suites/suite_test.go), the PR check\n" +
			"and PR comment workflows (.github/workflows/), a .gitignore and, when DIR holds no go.mod, a go.mod\n" +
			"that requires Assay and declares it as a tool (go tool assay). Existing files are never replaced:\n" +
			"init refuses, naming them. The result passes `go tool assay run` and `go test ./suites/...` at once.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			return c.initRepo(dir, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Module, "module", "", "module path of a new go.mod (default example.com/<DIR's name>)")
	cmd.Flags().StringVar(&opts.Replace, "replace", "", "add `replace "+scaffold.Module+" => DIR` to a new go.mod (a local Assay checkout)")
	return cmd
}

func (c *cli) initRepo(dir string, opts scaffold.Options) error {
	w, err := scaffold.Write(dir, opts)
	var exists scaffold.ModuleExistsError
	if errors.As(err, &exists) {
		return usagef("%s already has a go.mod: --module and --replace only shape a new one", dir)
	}
	if err != nil {
		return err
	}
	return c.answer(map[string]any{"dir": dir, "files": anyList(w.Files), "next": anyList(w.Next)}, func(out io.Writer) error {
		fmt.Fprintf(out, "assay init: wrote %d files in %s\n", len(w.Files), dir)
		for _, n := range w.Files {
			fmt.Fprintf(out, "  %s\n", n)
		}
		fmt.Fprintln(out, "\nNext:")
		for _, n := range w.Next {
			fmt.Fprintf(out, "  %s\n", n)
		}
		return nil
	})
}

// anyList is xs as a JSON array value.
func anyList(xs []string) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}
