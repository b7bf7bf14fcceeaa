package main

import (
	"errors"
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
		Args:  cobra.MaximumNArgs(1),
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
	return c.answer(w.Value(dir), func(out io.Writer) error { return w.WriteText(out, dir) })
}
