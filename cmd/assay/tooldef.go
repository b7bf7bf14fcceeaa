package main

import (
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/spf13/cobra"
)

func newToolDefCmd(c *cli) *cobra.Command {
	var f checkFlags
	var format string
	cmd := &cobra.Command{
		Use:   "tool-def MANIFEST",
		Short: "Print a function-tool definition (OpenAI or Anthropic) for an organism's interface",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if err := manifest.CheckToolFormat(format); err != nil {
				return err
			}
			m, compiled, err := c.admitManifest(args[0], f)
			if err != nil {
				return err
			}
			def, err := manifest.ToolDefinition(m, compiled, format)
			if err != nil {
				return err
			}
			return c.emit(def, "")
		},
	}
	f.addStore(cmd.Flags())
	cmd.Flags().StringVar(&format, "format", "openai", "openai or anthropic")
	return cmd
}
