package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/receipt"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/spf13/cobra"
)

func newVerifyCmd(c *cli) *cobra.Command {
	var dir, modules, transports, tools string
	cmd := &cobra.Command{
		Use:   "verify RECEIPT [MANIFEST]",
		Short: "Replay a run receipt offline and report every divergence",
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(_ *cobra.Command, args []string) error {
			// Modules and fetched closures go into an overlay, so
			// verification never writes the store it reads.
			_, st, err := vm.OpenOverlay(dir, modules)
			if err != nil {
				return err
			}
			rec, err := receipt.ReadFile(args[0])
			if err != nil {
				return err
			}
			m, err := manifestFor(st, rec, args[1:])
			if err != nil {
				return err
			}
			if err := vm.PrefetchFile(context.Background(), st, m, transports); err != nil {
				return err
			}
			opts := vm.VerifyOptions{Store: st}
			if opts.ToolSignatures, err = vm.ToolSignaturesFile(tools); err != nil {
				return err
			}
			rep, err := vm.Verify(rec, m, opts)
			if err != nil {
				return err
			}
			if c.readable() {
				_, err = fmt.Fprint(c.stdout, rep.Readable())
			} else {
				err = c.emit(rep.Value(), "")
			}
			if err != nil {
				return err
			}
			if !rep.OK {
				return reported(errors.New("receipt does not verify"))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", store.DefaultDir, "file store `DIR` (read only)")
	cmd.Flags().StringVar(&modules, "modules", "", "`DIR` of *.algal.json modules to admit first")
	cmd.Flags().StringVar(&transports, "transports", "", "transports `FILE`: fetch missing closures before the offline replay")
	cmd.Flags().StringVar(&tools, "tools", "", "host tool registry `FILE` (signatures of recorded tool effects)")
	return cmd
}

// manifestFor reads the manifest file given, or the receipt's manifest
// from the store.
func manifestFor(st store.Store, rec map[string]any, file []string) (*manifest.Manifest, error) {
	d, _ := rec["manifestDigest"].(string)
	path := ""
	if len(file) > 0 {
		path = file[0]
	}
	return vm.ManifestFor(st, d, path)
}
