package main

import (
	"fmt"

	"github.com/algal-assay/assay/engine/bundle"
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/internal/atomicfile"
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
		Long: "Admit MANIFEST (a file, or a sha256:... digest already in the store) and pack its closure:\n" +
			"every manifest its organism/repeat/each cells reach and every value a const ref port names,\n" +
			"all read from --dir. Prints the canonical bundle, or with --out writes it there (atomically)\n" +
			"and prints {\"root\",\"manifests\",\"values\",\"out\"}. A missing child or payload is STORE_MISS.",
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			st, err := store.OpenFileStore(dir)
			if err != nil {
				return err
			}
			root := args[0]
			if !canon.IsDigest(root) {
				m, err := manifest.ReadFile(root)
				if err != nil {
					return err
				}
				if root, err = st.Put(store.Manifests, m.Value); err != nil {
					return err
				}
			}
			b, err := bundle.Pack(st, root)
			if err != nil {
				return err
			}
			data, err := canon.Encode(b.Value())
			if err != nil {
				return err
			}
			if out == "" {
				_, err = c.stdout.Write(append(data, '\n'))
				return err
			}
			if err := atomicfile.Write(out, data); err != nil {
				return &fault.Error{Code: fault.IOFailed, Message: err.Error()}
			}
			return c.printCanonical(b.Summary(out))
		},
	}
	pack.Flags().StringVar(&dir, "dir", store.DefaultDir, "file store directory")
	pack.Flags().StringVar(&out, "out", "", "write the bundle to this file")
	var udir string
	unpack := &cobra.Command{
		Use:   "unpack FILE",
		Short: "Admit a bundle (every entry re-hashed) and install it into a store",
		Long: "Read FILE (a regular file of at most 64 MiB; strict JSON, no BOM), re-hash every manifest and\n" +
			"value against its key (DIGEST_MISMATCH on tamper), require the root among the manifests, and\n" +
			"install the closure into --dir. Prints {\"root\",\"manifests\",\"values\"}.",
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			b, err := bundle.InstallFile(udir, args[0])
			if err != nil {
				return err
			}
			return c.printCanonical(b.Summary(""))
		},
	}
	unpack.Flags().StringVar(&udir, "dir", store.DefaultDir, "file store directory")
	cmd.AddCommand(pack, unpack)
	return cmd
}

func (c *cli) printCanonical(v any) error {
	b, err := canon.Encode(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(c.stdout, "%s\n", b)
	return err
}

// newPackCmd is upstream's `pack MANIFEST [--modules DIR] [--out DIR]`:
// print the manifest's closure as a canonical algal.bundle.v1, and with
// --out also write it into DIR as <hex>.bundle.json.
func newPackCmd(c *cli) *cobra.Command {
	var dir, modules, out string
	cmd := &cobra.Command{
		Use:   "pack MANIFEST",
		Short: "Bundle a manifest with everything it embeds and references (algal.bundle.v1)",
		Long: "Admit MANIFEST and pack its closure: every manifest its organism/repeat/each cells reach and\n" +
			"every value a const ref port names, read from --modules and the store (--dir, default .algal,\n" +
			"read only). Prints the canonical bundle; --out DIR also writes it to DIR/<hex>.bundle.json\n" +
			"(exactly the canonical bytes). A file already there with other bytes is DIGEST_MISMATCH.",
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			_, st, err := vm.OpenOverlay(dir, modules)
			if err != nil {
				return err
			}
			m, err := manifest.ReadFile(args[0])
			if err != nil {
				return err
			}
			root, err := st.Put(store.Manifests, m.Value)
			if err != nil {
				return err
			}
			b, err := bundle.Pack(st, root)
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
		Long: "Read BUNDLE (a regular file of at most 64 MiB; strict JSON), re-hash every manifest and value\n" +
			"against its key (DIGEST_MISMATCH on tamper), require the root among the manifests, install the\n" +
			"closure into --dir (default .algal) and print {\"ok\":true,\"root\",\"manifests\",\"values\"}.",
		Args: cobra.ExactArgs(1),
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

// writeBundleInto writes b into dir as <hex of root>.bundle.json, the name
// upstream's transports look up, and returns the path.
