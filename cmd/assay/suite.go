package main

import (
	"fmt"

	"github.com/algal-assay/assay/engine/conformance"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/spf13/cobra"
)

func newSuiteCmd(c *cli) *cobra.Command {
	var examples, modules, dir string
	var write bool
	cmd := &cobra.Command{
		Use:   "suite",
		Short: "Run and verify every example of a directory, as upstream's `algal suite` does",
		Args:  cobra.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			st, err := vm.OpenRunStore(dir, modules, write)
			if err != nil {
				return err
			}
			suite, err := conformance.Load(examples)
			if err != nil {
				return err
			}
			rep, err := conformance.Run(st, suite)
			if err != nil {
				return err
			}
			if c.readable() {
				if _, err := fmt.Fprint(c.stdout, conformance.Readable(rep)); err != nil {
					return err
				}
			} else if err := c.emit(rep, ""); err != nil {
				return err
			}
			if rep["ok"] != true {
				return reported(fmt.Errorf("suite: not every example completed and verified"))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&examples, "examples", "examples", "examples `DIR` (only its top level is read)")
	cmd.Flags().StringVar(&modules, "modules", "", "`DIR` of *.algal.json modules to admit first")
	cmd.Flags().StringVar(&dir, "dir", store.DefaultDir, "file store `DIR`")
	cmd.Flags().BoolVar(&write, "write", false, "persist manifests and receipts into --dir")
	return cmd
}
