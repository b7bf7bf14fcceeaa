package main

import (
	"fmt"

	"github.com/algal-assay/assay/ci/merge"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness/job"
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
		Args:  cobra.MinimumNArgs(1),
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
			// Printed as assay run prints a job: the summary, then the verdict.
			failed, err := job.Report{}.Write(c.stdout, results, len(results), nil)
			if err != nil {
				return err
			}
			if failed > 0 {
				return reported(fmt.Errorf("%d workloads failed", failed))
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.dir, "dir", store.DefaultDir, "merged store `DIR`")
	fl.StringVar(&f.out, "out", "runs", "merged runs root `DIR`")
	return cmd
}
