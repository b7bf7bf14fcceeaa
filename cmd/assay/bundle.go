package main

import (
	"fmt"

	"github.com/algal-assay/assay/engine/atomicfile"
	"github.com/algal-assay/assay/engine/bundle"
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/store"
	"github.com/spf13/cobra"
)

func init() {
	register(func(c *cli) *cobra.Command {
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
				data = append(data, '\n')
				if out == "" {
					_, err = c.stdout.Write(data)
					return err
				}
				if err := atomicfile.Write(out, data); err != nil {
					return &fault.Error{Code: "IO_FAILED", Message: err.Error()}
				}
				return c.printCanonical(bundleSummary(b, out))
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
				st, err := store.OpenFileStore(udir)
				if err != nil {
					return err
				}
				b, err := bundle.ReadFile(args[0])
				if err != nil {
					return err
				}
				if err := b.Install(st); err != nil {
					return err
				}
				return c.printCanonical(bundleSummary(b, ""))
			},
		}
		unpack.Flags().StringVar(&udir, "dir", store.DefaultDir, "file store directory")
		cmd.AddCommand(pack, unpack)
		return cmd
	})
}

func bundleSummary(b *bundle.Bundle, out string) map[string]any {
	v := map[string]any{"root": b.Root, "manifests": float64(len(b.Manifests)), "values": float64(len(b.Values))}
	if out != "" {
		v["out"] = out
	}
	return v
}

// printCanonical prints one canonical JSON line.
func (c *cli) printCanonical(v any) error {
	b, err := canon.Encode(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(c.stdout, "%s\n", b)
	return err
}
