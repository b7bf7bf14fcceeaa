package vm

import (
	"strconv"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/receipt"
	"github.com/algal-assay/assay/engine/store"
)

// sample is a real receipt with what verifying it needs.
type sample struct {
	name string
	m    *manifest.Manifest
	rec  map[string]any
	st   store.Store
}

// samples produces receipts covering every record shape: effects, tool
// calls, shadowOut, failures and fail edges, slots, nested paths, rounds,
// items, suspension.
func samples(t *testing.T) []sample {
	var out []sample
	add := func(name, mj, args, responses string, st store.Store) {
		if st == nil {
			st = store.NewMemStore()
		}
		m := mustManifest(t, mj)
		rec := runAndVerify(t, m, args, scriptedHost(t, st, responses))
		out = append(out, sample{name, m, rec, st})
	}
	add("triage", triageJSON, `{"ticket":{"text":"app crashes"}}`, `{"route":"bug"}`, nil)
	add("tools", organism("tools",
		`{"id":"in","kind":"input","outputs":{"rec":"json"}},
		 {"id":"agent","kind":"agent","prompt":"p","inputs":{"rec":"json"},"output":{"kind":"text"},"tools":["pick.v1"],"retry":{"attempts":2}}`,
		edge("in", "rec", "agent", "rec")), `{"in":{"rec":{"name":"wisp"}}}`,
		`{"agent":[{"tool":"pick.v1","inputs":{"record":{"name":"wisp"},"field":"name"}},7,"done"]}`, nil)
	add("shadow-fail", organism("sf",
		`{"id":"in","kind":"input","outputs":{"t":"text"}},
		 {"id":"route","kind":"classifier","prompt":"p","inputs":{"t":"text"},"output":{"kind":"choice","labels":["a","b"]},"shadow":{"take":"a"}},
		 {"id":"chk","kind":"fn","fn":"assert.v1"},{"id":"h","kind":"fn","fn":"echo.v1"},
		 {"id":"s","kind":"slot","name":"seen","mode":"read","default":{"n":0}}`,
		edge("in", "t", "route", "t")+","+edge("route", "out", "chk", "value")+","+edge("in", "t", "chk", "expect")+","+
			edge("chk", "value", "h", "value", `"on":"fail"`)), `{"in":{"t":"x"}}`, `{"route":"b"}`, nil)
	st := store.NewMemStore()
	child := storedManifest(t, st, echoChild)
	add("each", organism("map",
		`{"id":"in","kind":"input","outputs":{"qs":"json"}},
		 {"id":"map","kind":"each","manifest":"`+child.Digest+`","over":"q","maxItems":3}`,
		edge("in", "qs", "map", "q")), `{"in":{"qs":["a","b"]}}`, `{}`, st)
	add("failed", organism("two",
		`{"id":"a","kind":"const","outputs":{"x":{"type":"json","value":"n"}}},{"id":"f1","kind":"fn","fn":"inc.v1"}`,
		edge("a", "x", "f1", "value")), ``, `{}`, nil)
	return out
}

// leaves lists every leaf path of v (as key/index steps).
func leaves(v any, path []any, out *[][]any) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			*out = append(*out, clonePath(path))
		}
		for _, k := range canon.SortedKeys(x) {
			leaves(x[k], append(path, k), out)
		}
	case []any:
		if len(x) == 0 {
			*out = append(*out, clonePath(path))
		}
		for i, e := range x {
			leaves(e, append(path, i), out)
		}
	default:
		*out = append(*out, clonePath(path))
	}
}

// fields lists every object key path of v.
func fields(v any, path []any, out *[][]any) {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range canon.SortedKeys(x) {
			p := append(clonePath(path), k)
			*out = append(*out, p)
			fields(x[k], p, out)
		}
	case []any:
		for i, e := range x {
			fields(e, append(clonePath(path), i), out)
		}
	}
}

func clonePath(p []any) []any { return append([]any(nil), p...) }

func mutateLeaf(v any) any {
	switch x := v.(type) {
	case string:
		return x + "~"
	case float64:
		return x + 1
	case bool:
		return !x
	case nil:
		return "tampered"
	case map[string]any:
		return map[string]any{"tampered": true}
	case []any:
		return []any{"tampered"}
	}
	return v
}

// mutatedAt returns a copy of rec whose leaf at path is mutateLeaf of it.
func mutatedAt(rec map[string]any, path []any) map[string]any {
	mut := canon.Clone(rec).(map[string]any)
	edit(mut, path, func(parent any, step any) {
		switch st := step.(type) {
		case string:
			parent.(map[string]any)[st] = mutateLeaf(parent.(map[string]any)[st])
		case int:
			parent.([]any)[st] = mutateLeaf(parent.([]any)[st])
		}
	})
	return mut
}

// deletedAt returns a copy of rec without the object key at path.
func deletedAt(rec map[string]any, path []any) map[string]any {
	mut := canon.Clone(rec).(map[string]any)
	edit(mut, path, func(parent any, step any) {
		if st, ok := step.(string); ok {
			delete(parent.(map[string]any), st)
		}
	})
	return mut
}

// edit applies f to the parent container of path's last step.
func edit(root any, path []any, leaf func(parent any, step any)) {
	cur := root
	for _, s := range path[:len(path)-1] {
		switch st := s.(type) {
		case string:
			cur = cur.(map[string]any)[st]
		case int:
			cur = cur.([]any)[st]
		}
	}
	leaf(cur, path[len(path)-1])
}

func renderPath(path []any) string {
	var b strings.Builder
	for i, s := range path {
		switch st := s.(type) {
		case string:
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(st)
		case int:
			b.WriteString("[" + strconv.Itoa(st) + "]")
		}
	}
	return b.String()
}

func rejects(t *testing.T, s sample, rec map[string]any, what string) []string {
	t.Helper()
	roundTrip(t, rec, s.name+": "+what)
	rep, err := Verify(rec, s.m, VerifyOptions{Store: s.st})
	if err != nil {
		return []string{err.Error()}
	}
	if rep.OK {
		t.Errorf("%s: %s accepted", s.name, what)
	}
	if len(rep.Mismatches) == 0 {
		t.Errorf("%s: %s rejected without naming a mismatch", s.name, what)
	}
	return rep.Mismatches
}

func TestTamperEveryLeafAndField(t *testing.T) {
	t.Parallel()
	total := 0
	for _, s := range samples(t) {
		total += tamperLeaves(t, s, func(p []any) bool { return worldFact(s.rec, p) })
		var fs [][]any
		fields(s.rec, nil, &fs)
		for _, p := range fs {
			mut := deletedAt(s.rec, p)
			rejects(t, s, mut, "deleted "+renderPath(p))
			total++
		}
	}
	if total < 500 {
		t.Fatalf("only %d tamper cases", total)
	}
	t.Logf("%d tampered receipts rejected", total)
}

// tamperLeaves mutates every leaf of the sample's receipt once as is and
// once re-sealed, and requires verification to reject each: an unsealed
// edit must be named (the leaf, or the digest that no longer covers it);
// a re-sealed edit of a world fact is skipped, since it is a different,
// self-consistent receipt. It returns how many tampered receipts it tried.
func tamperLeaves(t *testing.T, s sample, world func(p []any) bool) int {
	t.Helper()
	total := 0
	var ls [][]any
	leaves(s.rec, nil, &ls)
	for _, p := range ls {
		if len(p) == 0 {
			continue
		}
		for _, reseal := range []bool{false, true} {
			mut := mutatedAt(s.rec, p)
			what := "mutated " + renderPath(p)
			if reseal {
				if renderPath(p) == "digest" || world(p) {
					continue
				}
				_, _ = receipt.Seal(mut)
				what += " (re-sealed)"
			}
			mm := rejects(t, s, mut, what)
			total++
			if !reseal && !names(mm, renderPath(p)) {
				t.Errorf("%s: %s: mismatches do not name it: %v", s.name, what, mm)
			}
		}
	}
	return total
}

// worldFact reports whether path holds something the world returned
// (effect answers, executor ids, slot reads, args): verification serves
// those from the record, so a consistently re-sealed edit of them is a
// different, self-consistent receipt. Everything else is derived by the
// replay and must be rejected even when re-sealed.
func worldFact(rec map[string]any, p []any) bool {
	switch p[0] {
	case "args":
		return true
	case "effects":
		return len(p) > 2 && p[2] != "requestDigest"
	case "cells":
		c, _ := rec["cells"].(map[string]any)[p[1].(string)].(map[string]any)
		sl, _ := c["slot"].(map[string]any)
		return sl != nil && sl["mode"] == "read" && len(p) > 2 && p[2] == "outputs"
	}
	return false
}

func names(mm []string, path string) bool {
	for _, m := range mm {
		if strings.Contains(m, path) || m == "digest differs" || strings.HasPrefix(m, "receipt ") {
			return true
		}
	}
	return false
}

// TestTamperUpstreamReceipts mutates every leaf of the upstream examples'
// receipts.
func TestTamperUpstreamReceipts(t *testing.T) {
	t.Parallel()
	st := store.NewMemStore()
	suite := loadSuite(t, st)
	n := 0
	for _, ex := range suite {
		if _, skip := notYet[ex.id]; skip {
			continue
		}
		rec := runExample(t, ex, st, false)
		s := sample{ex.id, ex.m, rec, st}
		var ls [][]any
		leaves(rec, nil, &ls)
		for _, p := range ls {
			mut := mutatedAt(rec, p)
			rejects(t, s, mut, "mutated "+renderPath(p))
			n++
		}
	}
	t.Logf("%d tampered upstream receipts rejected", n)
}
