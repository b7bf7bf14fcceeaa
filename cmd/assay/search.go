package main

import (
	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/harness/liverun"
	"github.com/spf13/cobra"
)

// foundrySearchVerb builds `foundry search CONFIG`: generational search
// (algal.search.v1). measure.go adds it under the foundry verb, whose
// verify and inspect subcommands dispatch on the report's contract.
func (c *cli) foundrySearchVerb() *cobra.Command {
	var f measureFlags
	cmd := &cobra.Command{
		Use:   "search CONFIG",
		Short: "Evolve a population over bounded generations (algal.search.v1)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			wb, err := f.workbench()
			if err != nil {
				return err
			}
			cfg, err := c.loadFoundryConfig(args[0], foundry.AdmitOptions{Search: true, StrictSplits: f.strictSplits})
			if err != nil {
				return err
			}
			opts, err := f.configRun(c, cmd, args, wb)
			if err != nil {
				return err
			}
			o, err := liverun.RunSearch(cmd.Context(), cfg, opts)
			if err != nil {
				return err
			}
			return c.emitOutcome(o, f.out)
		},
	}
	f.foundryFlags(cmd)
	addLiveFlags(cmd.Flags(), &f.live)
	return cmd
}
