package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/algal-assay/assay/engine/manifest"
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
			manifestFile := ""
			if len(args) > 1 {
				manifestFile = args[1]
			}
			rep, err := vm.VerifyFiles{Dir: dir, Modules: modules, Receipt: args[0], Manifest: manifestFile,
				Transports: transports, Tools: tools}.Verify(context.Background())
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
