package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/algal-assay/assay/engine/fault"
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
			rec, err := readReceiptOrStored(args[0], dir)
			if err != nil {
				return err
			}
			if err := receipt.Check(rec); err != nil {
				if e, ok := fault.As(err); ok && e.File == "" {
					named := *e
					named.File = args[0]
					return &named
				}
				return err
			}
			return c.emit(receipt.Summary(rec), "")
		},
	}
	cmd.Flags().StringVar(&dir, "dir", store.DefaultDir, "store `DIR` a sha256: RECEIPT is read from")
	return cmd
}

// readReceiptOrStored reads a receipt file or, for a sha256: digest that
// names no file, the receipt stored under it in dir (verified on read).
func readReceiptOrStored(arg, dir string) (map[string]any, error) {
	if _, err := os.Stat(arg); err == nil || !strings.HasPrefix(arg, "sha256:") {
		return readReceipt(arg)
	}
	st, err := store.OpenFileStore(dir)
	if err != nil {
		return nil, err
	}
	v, ok, err := st.Get(store.Runs, arg)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, &fault.Error{Code: fault.StoreMiss, File: dir, Message: "no receipt " + arg + " in the store",
			Hint: " (`assay runs --dir " + dir + "` lists the stored receipts)"}
	}
	return jsonObject(v, arg, "receipt")
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
			a, err := readReceipt(args[0])
			if err != nil {
				return err
			}
			b, err := readReceipt(args[1])
			if err != nil {
				return err
			}
			ms := receipt.Compare(a, b)
			list := make([]any, len(ms))
			for i, m := range ms {
				list[i] = m
			}
			if err := c.emit(map[string]any{"same": len(ms) == 0, "a": a["digest"], "b": b["digest"], "mismatches": list}, ""); err != nil {
				return err
			}
			if len(ms) > 0 {
				return reported(fmt.Errorf("the receipts differ"))
			}
			return nil
		},
	}
}
