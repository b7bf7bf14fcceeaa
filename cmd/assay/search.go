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
		Long: "Run the generator of an algal.foundry.config.v1 with a search block {maxGenerations, feedbackInput}\n" +
			"once per generation. Each generation's proposals compete with the previous winner on the train\n" +
			"and validation cases, and the generator hears about the previous generation through its\n" +
			"feedbackInput. After the last generation one foundry epoch runs the holdout on the winner.\n" +
			"Prints the algal.search.v1 report; `assay foundry verify` and `assay foundry inspect` read it.\n" +
			"A habitat budget is refused under search. Live executors (openai:<model>, anthropic:<model>) answer\n" +
			"from the archive or the server as --record none|missing|all says, exactly as for `assay foundry CONFIG`.",
		Args: cobra.ExactArgs(1),
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
