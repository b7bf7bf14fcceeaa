package main

import (
	"fmt"

	"github.com/algal-assay/assay/engine/conformance"
	"github.com/algal-assay/assay/engine/store"
	"github.com/spf13/cobra"
)

func newSuiteCmd(c *cli) *cobra.Command {
	var examples, modules, dir string
	var write bool
	cmd := &cobra.Command{
		Use:   "suite",
		Short: "Run and verify every example of a directory, as upstream's `algal suite` does",
		Long: "Every top-level *.algal.json of --examples (default examples) is an example, id = the file\n" +
			"name without .algal.json. All are admitted first (so digest references resolve), then each runs\n" +
			"with the scripted executor of <id>.responses.json and the args of <id>.args.json (both {} when\n" +
			"absent), and its receipt is verified offline with no executor. <id>.transports.json maps\n" +
			"transport names to directories relative to the examples directory's parent; without one, a\n" +
			"bundles/ directory inside the examples serves the transport \"bundles\". Where <id>.cache.json\n" +
			"exists, the first receipt's outputs seed the memo index and a second, memoized run must\n" +
			"complete, verify and hit the memo at least once.\n" +
			"Prints {\"suite\":\"examples\",\"ok\",\"results\":[{example,outcome,verifyOk,receiptDigest[,cacheHits,\n" +
			"cacheOk]}]}; exit 1 unless every example is ok. The store (--dir, default .algal) is read through\n" +
			"an overlay and written only with --write.",
		Args: cobra.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			base, err := store.OpenFileStore(dir)
			if err != nil {
				return err
			}
			var st store.Store = base
			if !write {
				st = store.NewOverlay(base)
			}
			if err := admitModules(st, modules); err != nil {
				return err
			}
			suite, err := conformance.Load(examples)
			if err != nil {
				return err
			}
			rep, err := conformance.Run(st, suite)
			if err != nil {
				return err
			}
			if c.readable() {
				if _, err := fmt.Fprint(c.stdout, conformance.Readable(rep)); err != nil {
					return err
				}
			} else if err := c.emit(rep, ""); err != nil {
				return err
			}
			if rep["ok"] != true {
				return reported(fmt.Errorf("suite: not every example completed and verified"))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&examples, "examples", "examples", "examples `DIR` (only its top level is read)")
	cmd.Flags().StringVar(&modules, "modules", "", "`DIR` of *.algal.json modules to admit first")
	cmd.Flags().StringVar(&dir, "dir", store.DefaultDir, "file store `DIR`")
	cmd.Flags().BoolVar(&write, "write", false, "persist manifests and receipts into --dir")
	return cmd
}
