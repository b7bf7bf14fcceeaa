package main

import (
	"fmt"

	"github.com/algal-assay/assay/engine/catalog"
	"github.com/algal-assay/assay/engine/receipt"
	"github.com/algal-assay/assay/engine/store"

	"github.com/spf13/cobra"
)

func newInspectCmd(c *cli) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "inspect RECEIPT",
		Short: "Summarize a run: cell statuses, work and effect counts",
		Long: "Prints upstream's bounded receipt summary {contract,manifestKey,outcome,work,cells,effects,\n" +
			"failure,digest}: per cell its status, work when non-zero, failure, shadowOut, rounds, items,\n" +
			"via, slot, effectDigest when present, and the number of tool calls. The receipt is checked\n" +
			"first (structure, and its digest against its content): a summary never shows a digest the\n" +
			"receipt only claims. RECEIPT is a file, or the sha256: digest of a receipt in the --dir\n" +
			"store (what `assay runs` lists).",
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			rec, err := catalog.ReadReceipt(args[0], dir)
			if err != nil {
				return err
			}
			if err := receipt.CheckFile(rec, args[0]); err != nil {
				return err
			}
			return c.emit(receipt.Summary(rec), "")
		},
	}
	cmd.Flags().StringVar(&dir, "dir", store.DefaultDir, "store `DIR` a sha256: RECEIPT is read from")
	return cmd
}

func newDiffCmd(c *cli) *cobra.Command {
	return &cobra.Command{
		Use:   "diff RECEIPT_A RECEIPT_B",
		Short: "Compare two runs: which cells diverged, what each one cost",
		Long: "Prints {\"same\",\"a\",\"b\",\"mismatches\"} with one line per difference (manifest digest,\n" +
			"outcome, cell set, per-cell status, outputs, work, rounds, items, failure, tool calls, shadow\n" +
			"output, via and slot, effects, events, work totals, failure code); exit 1 when they differ.",
		Args: cobra.ExactArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			a, err := receipt.ReadFile(args[0])
			if err != nil {
				return err
			}
			b, err := receipt.ReadFile(args[1])
			if err != nil {
				return err
			}
			cmp, same := receipt.Comparison(a, b)
			if err := c.emit(cmp, ""); err != nil {
				return err
			}
			if !same {
				return reported(fmt.Errorf("the receipts differ"))
			}
			return nil
		},
	}
}
