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
		Args:  cobra.ExactArgs(1),
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
		Args:  cobra.ExactArgs(2),
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
