package main

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/receipt"
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
			v, ok, err := st.Get(store.Values, args[0])
			if err != nil {
				return err
			}
			if !ok {
				return fault.New(fault.StoreMiss, "value not in store")
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

// listed reads every object of a namespace for a listing; an unreadable
// object is listed with its error, as upstream lists it. Every object is
// verified as it is read: the store re-hashes it against its name, and
// check (objectCheck) holds it to its own contract, so a listing never
// shows what an object claims about itself unchecked.
func listed(st *store.FileStore, ns store.Namespace, row func(digest string, v map[string]any) map[string]any) ([]map[string]any, error) {
	digests, err := st.List(ns)
	if err != nil {
		return nil, err
	}
	out := make([]map[string]any, 0, len(digests))
	for _, d := range digests {
		v, _, err := st.Get(ns, d)
		if err == nil {
			err = objectCheck(ns, v)
		}
		if err != nil {
			out = append(out, map[string]any{"digest": d, "error": fault.MessageOf(err)})
			continue
		}
		m, _ := v.(map[string]any)
		out = append(out, row(d, m))
	}
	return out, nil
}

// objectCheck holds a store object to its contract beyond its name: a
// receipt's recorded digest must be its intrinsic digest (receipt.Check),
// a manifest must be an admissible organism.
func objectCheck(ns store.Namespace, v any) error {
	switch ns {
	case store.Runs:
		return receipt.Check(v)
	case store.Manifests:
		_, err := manifest.ParseValue(v)
		return err
	}
	return nil
}

// sortedRows orders rows by a text field then digest, as upstream does.
func sortedRows(rows []map[string]any, field string) []any {
	sort.SliceStable(rows, func(i, j int) bool {
		a, _ := rows[i][field].(string)
		b, _ := rows[j][field].(string)
		return a+rows[i]["digest"].(string) < b+rows[j]["digest"].(string)
	})
	out := make([]any, len(rows))
	for i, r := range rows {
		out[i] = r
	}
	return out
}

// newListingCmd builds a verb that lists one namespace of the store under
// --dir: {"dir", NAMESPACE: [row of every object]}, sorted by the row's
// sortBy text then digest.
func newListingCmd(c *cli, short, sortBy string, ns store.Namespace, row func(digest string, v map[string]any) map[string]any) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   string(ns),
		Short: short,
		Args:  cobra.NoArgs,
		RunE: withStore(&dir, func(st *store.FileStore, _ []string) error {
			rows, err := listed(st, ns, row)
			if err != nil {
				return err
			}
			return c.emit(map[string]any{"dir": filepath.Join(dir, string(ns)), string(ns): sortedRows(rows, sortBy)}, "")
		}),
	}
	storeDirFlag(cmd, &dir)
	return cmd
}

func newRunsCmd(c *cli) *cobra.Command {
	cmd := newListingCmd(c, "List the receipts stored under --dir", "manifestKey", store.Runs, func(d string, r map[string]any) map[string]any {
		effects, _ := r["effects"].([]any)
		return map[string]any{"digest": d, "manifestKey": r["manifestKey"], "outcome": r["outcome"], "effects": float64(len(effects))}
	})
	cmd.Long = "Prints {\"dir\",\"runs\":[{digest,manifestKey,outcome,effects}]}, sorted by manifest key then digest."
	return cmd
}

func newManifestsCmd(c *cli) *cobra.Command {
	cmd := newListingCmd(c, "List the manifests stored under --dir (spawned children included)", "key", store.Manifests, func(d string, m map[string]any) map[string]any {
		cells, _ := m["cells"].([]any)
		return map[string]any{"digest": d, "key": m["key"], "name": m["name"], "cells": float64(len(cells))}
	})
	cmd.Long = "Prints {\"dir\",\"manifests\":[{digest,key,name,cells}]}, sorted by key then digest."
	return cmd
}

func newManifestCmd(c *cli) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "manifest DIGEST",
		Short: "Print a stored manifest",
		Args:  cobra.ExactArgs(1),
		RunE: withStore(&dir, func(st *store.FileStore, args []string) error {
			v, ok, err := st.Get(store.Manifests, args[0])
			if err != nil {
				return err
			}
			if !ok {
				return fault.New(fault.StoreMiss, "manifest %s not found", args[0])
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
		Long:  "Prints {\"dir\",\"slots\":[{name,value}]}, sorted by name.",
		Args:  cobra.NoArgs,
		RunE: withStore(&dir, func(st *store.FileStore, _ []string) error {
			slotDir := filepath.Join(dir, "slots")
			entries, err := os.ReadDir(slotDir)
			if err != nil && !os.IsNotExist(err) {
				return &fault.Error{Code: fault.IOFailed, Message: slotDir, Err: err}
			}
			var names []string
			for _, e := range entries {
				if n, ok := strings.CutSuffix(e.Name(), ".json"); ok && e.Type().IsRegular() {
					names = append(names, n)
				}
			}
			sort.Strings(names)
			slots := make([]any, 0, len(names))
			for _, n := range names {
				v, _, err := st.GetSlot(n)
				if err != nil {
					slots = append(slots, map[string]any{"name": n, "error": fault.MessageOf(err)})
					continue
				}
				slots = append(slots, map[string]any{"name": n, "value": v})
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
			v, ok, err := st.GetSlot(args[0])
			if err != nil {
				return err
			}
			if !ok {
				return fault.New(fault.StoreMiss, "slot %q is empty", args[0])
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
