package catalog

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/algal-assay/assay/engine/store"
)

// Slots lists every slot by name; one that does not read is listed with
// its error.
func TestSlotsListsByName(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := store.OpenFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"prod", "canary"} {
		if err := st.SetSlot(n, map[string]any{"name": n}); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(SlotDir(dir), "broken.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Slots(st, SlotDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("slots: %v", got)
	}
	names := []any{got[0].(map[string]any)["name"], got[1].(map[string]any)["name"], got[2].(map[string]any)["name"]}
	if !reflect.DeepEqual(names, []any{"broken", "canary", "prod"}) {
		t.Errorf("order: %v", names)
	}
	if e, _ := got[0].(map[string]any)["error"].(string); e == "" {
		t.Errorf("broken slot: %v", got[0])
	}
	if v := got[2].(map[string]any)["value"]; !reflect.DeepEqual(v, map[string]any{"name": "prod"}) {
		t.Errorf("prod: %v", v)
	}
}

// A stored value that is not an admissible manifest is listed with its
// error, never with what it claims.
func TestListChecksEveryObject(t *testing.T) {
	t.Parallel()
	st, err := store.OpenFileStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d, err := st.Put(store.Manifests, map[string]any{"key": "fake", "cells": []any{}})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := List(st, store.Manifests, "key", ManifestRow)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 {
		t.Fatalf("rows: %v", rows)
	}
	row := rows[0].(map[string]any)
	if row["digest"] != d || row["key"] != nil || row["error"] == nil || row["error"] == "" {
		t.Errorf("row: %v", row)
	}
}
