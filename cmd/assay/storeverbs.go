package main

import (
	"path/filepath"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/catalog"
	"github.com/algal-assay/assay/engine/store"
	"github.com/spf13/cobra"
)

// Upstream's bound for a value put from the command line or a slot seeded.
const (
	maxPutBytes  = 262_144
	maxSlotBytes = 1 << 20
)

// storeDirFlag adds upstream's --dir (default .algal) to a store verb.
func storeDirFlag(cmd *cobra.Command, dir *string) {
	cmd.PersistentFlags().StringVar(dir, "dir", store.DefaultDir, "file store `DIR`")
}

// withStore is the RunE of a verb that reads or writes the file store
// under --dir: it opens the store, then runs body.
func withStore(dir *string, body func(st *store.FileStore, args []string) error) func(*cobra.Command, []string) error {
	return func(_ *cobra.Command, args []string) error {
		st, err := store.OpenFileStore(*dir)
		if err != nil {
			return err
		}
		return body(st, args)
	}
}

func newStoreCmd(c *cli) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "store",
		Short: "Save and read JSON values by digest (put | get | has)",
	}
	storeDirFlag(cmd, &dir)
	put := &cobra.Command{
		Use:   "put FILE|-",
		Short: "Store a JSON value (at most 262144 bytes) and print {\"ref\":\"sha256:...\"}",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			v, err := c.readJSON(args[0], maxPutBytes)
			if err != nil {
				return err
			}
			st, err := store.OpenFileStore(dir)
			if err != nil {
				return err
			}
			ref, err := st.Put(store.Values, v)
			if err != nil {
				return err
			}
			return c.emit(map[string]any{"ref": ref}, "")
		},
	}
	get := &cobra.Command{
		Use:   "get DIGEST",
		Short: "Print a stored value (verified against its digest)",
		Args:  cobra.ExactArgs(1),
		RunE: withStore(&dir, func(st *store.FileStore, args []string) error {
			v, err := catalog.Value(st, args[0])
			if err != nil {
				return err
			}
			return c.emit(v, "")
		}),
	}
	has := &cobra.Command{
		Use:   "has DIGEST",
		Short: "Print {\"ref\",\"ok\"}: whether the store holds the value",
		Args:  cobra.ExactArgs(1),
		RunE: withStore(&dir, func(st *store.FileStore, args []string) error {
			ok, err := st.Has(store.Values, args[0])
			if err != nil {
				return err
			}
			return c.emit(map[string]any{"ref": args[0], "ok": ok}, "")
		}),
	}
	cmd.AddCommand(put, get, has)
	return cmd
}

// newListingCmd builds a verb that lists one namespace of the store under
// --dir: {"dir", NAMESPACE: [row of every object]}, sorted by the row's
// sortBy text then digest.
func newListingCmd(c *cli, short, sortBy string, ns store.Namespace, row catalog.Row) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   string(ns),
		Short: short,
		Args:  cobra.NoArgs,
		RunE: withStore(&dir, func(st *store.FileStore, _ []string) error {
			rows, err := catalog.List(st, ns, sortBy, row)
			if err != nil {
				return err
			}
			return c.emit(map[string]any{"dir": filepath.Join(dir, string(ns)), string(ns): rows}, "")
		}),
	}
	storeDirFlag(cmd, &dir)
	return cmd
}

func newRunsCmd(c *cli) *cobra.Command {
	cmd := newListingCmd(c, "List the receipts stored under --dir", "manifestKey", store.Runs, catalog.RunRow)
	return cmd
}

func newManifestsCmd(c *cli) *cobra.Command {
	cmd := newListingCmd(c, "List the manifests stored under --dir (spawned children included)", "key", store.Manifests, catalog.ManifestRow)
	return cmd
}

func newManifestCmd(c *cli) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "manifest DIGEST",
		Short: "Print a stored manifest",
		Args:  cobra.ExactArgs(1),
		RunE: withStore(&dir, func(st *store.FileStore, args []string) error {
			v, err := catalog.Manifest(st, args[0])
			if err != nil {
				return err
			}
			return c.emit(v, "")
		}),
	}
	storeDirFlag(cmd, &dir)
	return cmd
}

func newSlotsCmd(c *cli) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "slots",
		Short: "List the durable slots under --dir",
		Args:  cobra.NoArgs,
		RunE: withStore(&dir, func(st *store.FileStore, _ []string) error {
			slotDir := catalog.SlotDir(dir)
			slots, err := catalog.Slots(st, slotDir)
			if err != nil {
				return err
			}
			return c.emit(map[string]any{"dir": slotDir, "slots": slots}, "")
		}),
	}
	storeDirFlag(cmd, &dir)
	return cmd
}

func newSlotCmd(c *cli) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "slot",
		Short: "Read or seed one durable value (get NAME | set NAME FILE)",
	}
	storeDirFlag(cmd, &dir)
	get := &cobra.Command{
		Use:   "get NAME",
		Short: "Print a slot's value",
		Args:  cobra.ExactArgs(1),
		RunE: withStore(&dir, func(st *store.FileStore, args []string) error {
			v, err := catalog.Slot(st, args[0])
			if err != nil {
				return err
			}
			return c.emit(v, "")
		}),
	}
	set := &cobra.Command{
		Use:   "set NAME FILE",
		Short: "Seed a slot from a JSON file and print {\"name\",\"set\":true}",
		Args:  cobra.ExactArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			v, err := canon.ReadFile(args[1], maxSlotBytes)
			if err != nil {
				return err
			}
			st, err := store.OpenFileStore(dir)
			if err != nil {
				return err
			}
			if err := st.SetSlot(args[0], v); err != nil {
				return err
			}
			return c.emit(map[string]any{"name": args[0], "set": true}, "")
		},
	}
	cmd.AddCommand(get, set)
	return cmd
}
