package main

import (
	"fmt"

	"github.com/algal-assay/assay/ci/merge"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness"
	"github.com/algal-assay/assay/harness/console"
	"github.com/spf13/cobra"
)

type ciMergeFlags struct {
	dir, out string
}

func newCIMergeCmd(c *cli) *cobra.Command {
	var f ciMergeFlags
	cmd := &cobra.Command{
		Use:   "merge SHARD_DIR...",
		Short: "Assemble the run directories of a sharded batch (assay run --shard i/n)",
		Long: `Merge the shards of one batch of workloads, each run on its own machine as
  assay run --shard i/n --out SHARD_DIR/runs --dir SHARD_DIR/.algal [PATH...]
into the run directories one machine would have written (under --out, default
runs) and one store (--dir, default .algal).

The shards must be one batch: every shard 1..n given once, their shard.json
listing the same workloads with the same run slugs and part counts, and every
part of every workload held by exactly one shard; otherwise nothing is
written and the exit is 2 with a SHARDS_INVALID error naming the shard, the
workload and the part. The shards' stores are copied into --dir, each object
through the store's digest check. A workload one shard ran whole is verified
(as ci verify checks a run directory) and copied. A workload whose parts
several shards ran is run again from its workload file (found at the path the
shards list, relative to the working directory) with each part's report taken
from its shard instead of run: the part reports are verified against the
merged store and folded into aggregate.json, and the gate, summary.md and
report.html are written as by a single run, so the aggregate is byte for byte
the one an unsharded run writes.

Prints the summary of assay run; exit 1 when a workload fails.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, dirs []string) error {
			wb, err := vm.NewWorkbench(f.dir)
			if err != nil {
				return err
			}
			// The shards of one batch are one trust scope.
			wb.Verified = &vm.VerifiedReceipts{}
			results, err := merge.Merge(cmd.Context(), dirs, merge.Options{Out: f.out, Store: wb, StoreDir: f.dir})
			if err != nil {
				return err
			}
			console.PrintSummary(c.stdout, results)
			_, failed := harness.Tally(results)
			if failed > 0 {
				fmt.Fprintf(c.stdout, "\n%d of %d workloads failed\n", failed, len(results))
				return reported(fmt.Errorf("%d workloads failed", failed))
			}
			fmt.Fprintf(c.stdout, "\nall %d workloads passed\n", len(results))
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.dir, "dir", store.DefaultDir, "merged store `DIR`")
	fl.StringVar(&f.out, "out", "runs", "merged runs root `DIR`")
	return cmd
}
