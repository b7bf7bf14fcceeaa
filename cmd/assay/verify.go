package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/algal-assay/assay/engine/bundle"
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/spf13/cobra"
)

func init() {
	register(func(c *cli) *cobra.Command {
		var dir, modules, transports string
		cmd := &cobra.Command{
			Use:   "verify RECEIPT [MANIFEST]",
			Short: "Replay a run receipt offline and report every divergence",
			Long: "Verify an algal.run.v1 receipt by replaying its run offline with its own recorded\n" +
				"effects, then comparing the whole replayed receipt with it. Prints {\"ok\":true}, or\n" +
				"{\"ok\":false,\"mismatches\":[...]} and exits 1. Without MANIFEST the manifest is read\n" +
				"from the store (--dir) by the receipt's manifestDigest. Nothing runs live.",
			Args: cobra.RangeArgs(1, 2),
			RunE: func(_ *cobra.Command, args []string) error {
				st, err := openStore(dir)
				if err != nil {
					return err
				}
				if err := admitModules(st, modules); err != nil {
					return err
				}
				rec, err := readReceipt(args[0])
				if err != nil {
					return err
				}
				var m *manifest.Manifest
				if len(args) == 2 {
					if m, err = manifest.ReadFile(args[1]); err != nil {
						return err
					}
				} else {
					d, _ := rec["manifestDigest"].(string)
					mv, err := store.Load(st, store.Manifests, d)
					if err != nil {
						return err
					}
					if m, err = manifest.ParseValue(mv); err != nil {
						return err
					}
				}
				// The replay itself consults no transports: a closure the
				// store lacks is fetched first, into an overlay, so
				// verification never writes the store it reads.
				var vst store.Store = st
				if transports != "" {
					t, err := bundle.LoadTransports(transports)
					if err != nil {
						return err
					}
					vst = store.NewOverlay(st)
					if _, err := bundle.Prefetch(context.Background(), vst, m, t); err != nil {
						return err
					}
				}
				rep, err := vm.Verify(rec, m, vm.VerifyOptions{Store: vst})
				if err != nil {
					return err
				}
				out := map[string]any{"ok": rep.OK}
				if !rep.OK {
					out["mismatches"] = rep.Value()["mismatches"]
				}
				b, err := canon.Encode(out)
				if err != nil {
					return err
				}
				fmt.Fprintf(c.stdout, "%s\n", b)
				if !rep.OK {
					return reported(errors.New("receipt does not verify"))
				}
				return nil
			},
		}
		cmd.Flags().StringVar(&dir, "dir", "", "file store directory")
		cmd.Flags().StringVar(&modules, "modules", "", "directory of *.algal.json modules to admit first")
		cmd.Flags().StringVar(&transports, "transports", "", "transports JSON file: fetch missing closures before the offline replay")
		return cmd
	})
}
