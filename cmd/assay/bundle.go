package main

import (
	"github.com/algal-assay/assay/engine/bundle"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/spf13/cobra"
)

func newBundleCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bundle",
		Short: "Pack and unpack algal.bundle.v1 closures",
	}
	var dir, out string
	pack := &cobra.Command{
		Use:   "pack MANIFEST",
		Short: "Pack a manifest's closure (embedded children, const ref payloads) from a store",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			st, err := store.OpenFileStore(dir)
			if err != nil {
				return err
			}
			b, err := bundle.PackManifest(st, args[0])
			if err != nil {
				return err
			}
			if out == "" {
				return c.emit(b.Value(), "")
			}
			if err := bundle.Replace(out, b); err != nil {
				return err
			}
			return c.emit(b.Summary(out), "")
		},
	}
	pack.Flags().StringVar(&dir, "dir", store.DefaultDir, "file store directory")
	pack.Flags().StringVar(&out, "out", "", "write the bundle to this file")
	var udir string
	unpack := &cobra.Command{
		Use:   "unpack FILE",
		Short: "Admit a bundle (every entry re-hashed) and install it into a store",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			b, err := bundle.InstallFile(udir, args[0])
			if err != nil {
				return err
			}
			return c.emit(b.Summary(""), "")
		},
	}
	unpack.Flags().StringVar(&udir, "dir", store.DefaultDir, "file store directory")
	cmd.AddCommand(pack, unpack)
	return cmd
}

// newPackCmd is upstream's `pack MANIFEST [--modules DIR] [--out DIR]`:
// print the manifest's closure as a canonical algal.bundle.v1, and with
// --out also write it into DIR as <hex>.bundle.json.
func newPackCmd(c *cli) *cobra.Command {
	var dir, modules, out string
	cmd := &cobra.Command{
		Use:   "pack MANIFEST",
		Short: "Bundle a manifest with everything it embeds and references (algal.bundle.v1)",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			_, st, err := vm.OpenOverlay(dir, modules)
			if err != nil {
				return err
			}
			b, err := bundle.PackFile(st, args[0])
			if err != nil {
				return err
			}
			if out != "" {
				if _, err := bundle.WriteInto(out, b); err != nil {
					return err
				}
			}
			return c.emit(b.Value(), "")
		},
	}
	cmd.Flags().StringVar(&dir, "dir", store.DefaultDir, "file store `DIR` (read only)")
	cmd.Flags().StringVar(&modules, "modules", "", "`DIR` of *.algal.json modules to admit first")
	cmd.Flags().StringVar(&out, "out", "", "also write the bundle into `DIR` as <hex>.bundle.json")
	return cmd
}

// newUnpackCmd is upstream's `unpack BUNDLE`: admit and install a bundle
// into --dir and print {"ok":true,"root"}.
func newUnpackCmd(c *cli) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "unpack BUNDLE",
		Short: "Install a bundle into the store, checking every digest",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			b, err := bundle.InstallFile(dir, args[0])
			if err != nil {
				return err
			}
			v := b.Summary("")
			v["ok"] = true
			return c.emit(v, "")
		},
	}
	cmd.Flags().StringVar(&dir, "dir", store.DefaultDir, "file store `DIR` to install into")
	return cmd
}
