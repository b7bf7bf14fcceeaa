// Package catalog lists what a file store holds, as upstream's store
// verbs print it (`assay runs`, `assay manifests`, `assay slots`): every
// object is verified as it is read, and one that does not verify is
// listed with its error rather than with what it claims about itself.
package catalog

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/receipt"
	"github.com/algal-assay/assay/engine/store"
)

// Row is one listed object's line, from its digest and its value.
type Row func(digest string, v map[string]any) map[string]any

// List reads every object of namespace ns, one row each, sorted by the
// row's sortBy text then digest. An unreadable object is listed with its
// error, as upstream lists it. Every object is verified as it is read:
// the store re-hashes it against its name, and check holds it to its own
// contract.
func List(st *store.FileStore, ns store.Namespace, sortBy string, row Row) ([]any, error) {
	digests, err := st.List(ns)
	if err != nil {
		return nil, err
	}
	out := make([]map[string]any, 0, len(digests))
	for _, d := range digests {
		v, _, err := st.Get(ns, d)
		if err == nil {
			err = check(ns, v)
		}
		if err != nil {
			out = append(out, map[string]any{"digest": d, "error": fault.MessageOf(err)})
			continue
		}
		m, _ := v.(map[string]any)
		out = append(out, row(d, m))
	}
	return sorted(out, sortBy), nil
}

// check holds a store object to its contract beyond its name: a receipt's
// recorded digest must be its intrinsic digest (receipt.Check), a manifest
// must be an admissible organism.
func check(ns store.Namespace, v any) error {
	switch ns {
	case store.Runs:
		return receipt.Check(v)
	case store.Manifests:
		_, err := manifest.ParseValue(v)
		return err
	}
	return nil
}

// sorted orders rows by a text field then digest, as upstream does.
func sorted(rows []map[string]any, field string) []any {
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

// RunRow is a receipt's line in `assay runs`.
func RunRow(d string, r map[string]any) map[string]any {
	effects, _ := r["effects"].([]any)
	return map[string]any{"digest": d, "manifestKey": r["manifestKey"], "outcome": r["outcome"], "effects": float64(len(effects))}
}

// ManifestRow is a manifest's line in `assay manifests`.
func ManifestRow(d string, m map[string]any) map[string]any {
	cells, _ := m["cells"].([]any)
	return map[string]any{"digest": d, "key": m["key"], "name": m["name"], "cells": float64(len(cells))}
}

// Slots lists the durable slots under slotDir (the store's slots/
// directory), sorted by name: {name, value}, or {name, error} for a slot
// that does not read.
func Slots(st *store.FileStore, slotDir string) ([]any, error) {
	entries, err := os.ReadDir(slotDir)
	if err != nil && !os.IsNotExist(err) {
		return nil, &fault.Error{Code: fault.IOFailed, Message: slotDir, Err: err}
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
	return slots, nil
}

// SlotDir is the directory of the slots of the store under dir.
func SlotDir(dir string) string { return filepath.Join(dir, "slots") }
