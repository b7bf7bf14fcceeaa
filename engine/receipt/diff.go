package receipt

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/algal-assay/assay/engine/canon"
)

// Diff compares a recorded receipt (a) with a replayed one (b) and returns
// one message per divergence, in the upstream order: outcome, the set of
// cell paths, each shared cell's fields, the effects list, events, the work
// ledger, failure, and finally whole-receipt equality. The upstream messages
// are kept byte-for-byte ("cell route: outputs differ", "work.units: 1240
// vs 1180"); when the receipts differ but no named check fired, "receipt
// records differ" is followed by one "<field path> differs" line per
// differing leaf so a change the upstream checks do not name (args,
// identity, a cached flag) is still named. An empty result means the
// receipts are canonically identical.
func Diff(a, b map[string]any) []string {
	var out []string
	if sa, sb := str(a["outcome"]), str(b["outcome"]); sa != sb {
		out = append(out, fmt.Sprintf("outcome: %s vs %s", sa, sb))
	}
	out = append(out, diffCells(a, b)...)
	out = append(out, diffEffects(a, b)...)
	if !same(a, b, "events") {
		out = append(out, "events: event logs differ")
	}
	out = append(out, diffWork(a, b)...)
	out = append(out, diffFailure(a, b)...)
	// The catch-all is reported only when no named check fired (native
	// diff); the leaf lines after it name what the named checks do not
	// cover (args, identity, a cached flag).
	if len(out) == 0 && !equal(a, b) {
		out = append(out, "receipt records differ")
		var leaves []string
		leafDiff(nil, a, b, &leaves)
		out = append(out, leaves...)
	}
	return out
}

// diffCells compares the sets of cell paths, then each shared cell.
func diffCells(a, b map[string]any) []string {
	var out []string
	ca, _ := a["cells"].(map[string]any)
	cb, _ := b["cells"].(map[string]any)
	ka, kb := canon.SortedKeys(ca), canon.SortedKeys(cb)
	if !slices.Equal(ka, kb) {
		out = append(out, fmt.Sprintf("cells: %s vs %s", strings.Join(ka, ","), strings.Join(kb, ",")))
	}
	for _, p := range ka {
		if rb, ok := cb[p]; ok {
			out = append(out, diffCell(p, obj(ca[p]), obj(rb))...)
		}
	}
	return out
}

// diffEffects compares the effects lists' lengths and, when they are
// equal, each pair.
func diffEffects(a, b map[string]any) []string {
	ea, _ := a["effects"].([]any)
	eb, _ := b["effects"].([]any)
	if len(ea) != len(eb) {
		return []string{fmt.Sprintf("effects: %d vs %d", len(ea), len(eb))}
	}
	// Per-effect checks only pair lists of equal length (native diff): an
	// inserted or missing effect would misalign every later pair.
	var out []string
	for i := range ea {
		out = append(out, diffEffect(i, obj(ea[i]), obj(eb[i]))...)
	}
	return out
}

func diffEffect(i int, x, y map[string]any) []string {
	var out []string
	for _, f := range []string{"requestDigest", "output", "error"} {
		if !same(x, y, f) {
			out = append(out, fmt.Sprintf("effect %d: %s differs", i, f))
		}
	}
	if !same(x, y, "executor") {
		out = append(out, fmt.Sprintf("effect %d: executor %s vs %s", i, str(x["executor"]), str(y["executor"])))
	}
	if !same(x, y, "usage") {
		out = append(out, fmt.Sprintf("effect %d: usage differs", i))
	}
	return out
}

func diffWork(a, b map[string]any) []string {
	var out []string
	wa, wb := obj(a["work"]), obj(b["work"])
	for _, f := range workKeys {
		if !same(wa, wb, f) {
			out = append(out, fmt.Sprintf("work.%s: %s vs %s", f, render(wa, f, "undefined"), render(wb, f, "undefined")))
		}
	}
	return out
}

func diffFailure(a, b map[string]any) []string {
	fa, hasA := a["failure"]
	fb, hasB := b["failure"]
	if hasA != hasB {
		return []string{"failure presence differs"}
	}
	if x, y := obj(fa), obj(fb); hasA && !same(x, y, "code") {
		return []string{fmt.Sprintf("failure.code: %s vs %s", str(x["code"]), str(y["code"]))}
	}
	return nil
}

func diffCell(p string, x, y map[string]any) []string {
	var out []string
	for _, d := range cellDiffs {
		if !same(x, y, d.field) {
			out = append(out, "cell "+p+": "+d.say(d.field, x, y))
		}
	}
	return out
}

// cellDiffs are the named checks of a shared cell, in the upstream order:
// each says, after "cell <path>: ", how its field differs.
var cellDiffs = []struct {
	field string
	say   func(field string, x, y map[string]any) string
}{
	{"status", func(f string, x, y map[string]any) string {
		return fmt.Sprintf("status %s vs %s", str(x[f]), str(y[f]))
	}},
	{"outputs", differ},
	{"work", counted},
	{"rounds", counted},
	{"items", counted},
	{"failure", differs},
	{"toolCalls", differ},
	{"shadowOut", differs},
	{"via", func(f string, x, y map[string]any) string {
		return fmt.Sprintf("via %s vs %s", render(x, f, "local"), render(y, f, "local"))
	}},
	{"slot", differs},
}

func differs(f string, _, _ map[string]any) string { return f + " differs" }

func differ(f string, _, _ map[string]any) string { return f + " differ" }

func counted(f string, x, y map[string]any) string {
	return fmt.Sprintf("%s %s vs %s", f, render(x, f, "undefined"), render(y, f, "undefined"))
}

// leafDiff appends "<path> differs" for every differing leaf, and for every
// key or element present on one side only.
func leafDiff(path []string, a, b any, out *[]string) {
	ma, okA := a.(map[string]any)
	mb, okB := b.(map[string]any)
	if okA && okB {
		keys := canon.SortedKeys(ma)
		for _, k := range canon.SortedKeys(mb) {
			if _, ok := ma[k]; !ok {
				keys = append(keys, k)
			}
		}
		for _, k := range keys {
			va, inA := ma[k]
			vb, inB := mb[k]
			p := append(slices.Clip(path), k)
			switch {
			case !inA:
				*out = append(*out, pathString(p)+" differs (absent from the recorded receipt)")
			case !inB:
				*out = append(*out, pathString(p)+" differs (absent from the replayed receipt)")
			default:
				leafDiff(p, va, vb, out)
			}
		}
		return
	}
	la, okA := a.([]any)
	lb, okB := b.([]any)
	if okA && okB {
		n := max(len(la), len(lb))
		for i := 0; i < n; i++ {
			p := slices.Clip(path)
			if len(p) > 0 {
				p = append(p[:len(p)-1:len(p)-1], p[len(p)-1]+"["+strconv.Itoa(i)+"]")
			} else {
				p = []string{"[" + strconv.Itoa(i) + "]"}
			}
			switch {
			case i >= len(la):
				*out = append(*out, pathString(p)+" differs (absent from the recorded receipt)")
			case i >= len(lb):
				*out = append(*out, pathString(p)+" differs (absent from the replayed receipt)")
			default:
				leafDiff(p, la[i], lb[i], out)
			}
		}
		return
	}
	if !equal(a, b) {
		*out = append(*out, pathString(path)+" differs")
	}
}

func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return "undefined"
	}
	b, err := canon.Encode(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func render(m map[string]any, key, missing string) string {
	v, ok := m[key]
	if !ok {
		return missing
	}
	return str(v)
}

func equal(a, b any) bool {
	x, err1 := canon.Encode(a)
	y, err2 := canon.Encode(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// same reports whether key is equally present and canonically equal in both.
func same(a, b map[string]any, key string) bool {
	x, okA := a[key]
	y, okB := b[key]
	if okA != okB {
		return false
	}
	return !okA || equal(x, y)
}
