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
		Long: "Admit MANIFEST and print {\"manifestDigest\",\"cells\":[{id,kind,inputs,outputs}],\"edges\"}: each\n" +
			"cell's resolved input and output ports (including those inherited from embedded organisms,\n" +
			"repeat and each cells) and the manifest's edges with their guards. Flags as for check.",
		Args: cobra.ExactArgs(1),
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
