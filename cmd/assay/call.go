package main

import (
	"fmt"

	"github.com/algal-assay/assay/engine/bundle"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/receipt"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/harness/liverun"
	"github.com/spf13/cobra"
)

func newCallCmd(c *cli) *cobra.Command {
	var f runFlags
	var iface bool
	cmd := &cobra.Command{
		Use:   "call BUNDLE",
		Short: "Run a bundle and print a short result",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := bundle.ReadFile(args[0])
			if err != nil {
				return err
			}
			in := map[string]any{}
			if f.args != "" {
				if in, err = receipt.ReadArgs(f.args, c.stdin); err != nil {
					return err
				}
			}
			f.write = true // upstream's call always persists
			st, err := store.OpenFileStore(f.dir)
			if err != nil {
				return err
			}
			if err := b.Install(st); err != nil {
				return err
			}
			m := b.Manifests[b.Root]
			if iface {
				if m.Interface == nil {
					return usagef("call --interface: %s declares no interface", m.Key)
				}
				in = evidence.CellArgs(m, in)
			}
			rec, err := c.runHosted(cmd, args, f, st, m, "call", nil, liverun.RunArgs(m, in))
			if err != nil {
				return err
			}
			ref, err := st.Put(store.Runs, rec)
			if err != nil {
				return err
			}
			result, ok := evidence.CallResult(m, rec, ref)
			if err := c.emit(result, ""); err != nil {
				return err
			}
			if !ok {
				return reported(fmt.Errorf("run outcome %v", rec["outcome"]))
			}
			return nil
		},
	}
	f.add(cmd)
	addLiveFlags(cmd.Flags(), &f.live)
	cmd.Flags().BoolVar(&iface, "interface", false, "--args are keyed by the interface's input names")
	return cmd
}
