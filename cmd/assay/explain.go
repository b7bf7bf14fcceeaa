package main

import (
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/spf13/cobra"
)

func newExplainCmd(c *cli) *cobra.Command {
	var f checkFlags
	cmd := &cobra.Command{
		Use:   "explain MANIFEST",
		Short: "Print a program's compiled signature: every cell's resolved ports and every edge",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			m, compiled, err := c.admitManifest(args[0], f)
			if err != nil {
				return err
			}
			return c.emit(manifest.Explain(m, compiled), "")
		},
	}
	f.add(cmd.Flags())
	return cmd
}
