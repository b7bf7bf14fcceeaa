package receipt

import (
	"fmt"
	"sort"
	"strings"

	"github.com/algal-assay/assay/engine/canon"
)

// Compare is upstream's `algal diff` of two recorded runs: one line per
// difference, in upstream's order and wording (manifest digest, outcome,
// cell set, per-cell fields, effects, events, work totals, failure code).
// Unlike Diff (recorded against replayed, where a field's presence is
// itself a divergence), an absent field equals null here, and nothing
// past the named checks is reported.
func Compare(a, b map[string]any) []string {
	var out []string
	add := func(format string, x ...any) { out = append(out, fmt.Sprintf(format, x...)) }
	if a["manifestDigest"] != b["manifestDigest"] {
		add("manifestDigest: %s vs %s", shown(a["manifestDigest"]), shown(b["manifestDigest"]))
	}
	if a["outcome"] != b["outcome"] {
		add("outcome: %s vs %s", shown(a["outcome"]), shown(b["outcome"]))
	}
	an, bn := cellNames(a), cellNames(b)
	if strings.Join(an, ",") != strings.Join(bn, ",") {
		add("cells: %s vs %s", strings.Join(an, ","), strings.Join(bn, ","))
	}
	bc, _ := b["cells"].(map[string]any)
	for _, n := range an {
		if bcell, ok := bc[n]; ok && bcell != nil {
			out = append(out, compareCell(n, member(a["cells"], n), bcell)...)
		}
	}
	out = append(out, compareEffects(a, b)...)
	if !canonSame(a["events"], b["events"]) {
		add("events: event logs differ")
	}
	for _, k := range []string{"steps", "agentCalls", "units"} {
		if !canonSame(member(a["work"], k), member(b["work"], k)) {
			add("work.%s: %s vs %s", k, shown(member(a["work"], k)), shown(member(b["work"], k)))
		}
	}
	return append(out, compareFailure(a, b)...)
}

// cellNames is a receipt's cell paths, sorted.
func cellNames(r map[string]any) []string {
	m, _ := r["cells"].(map[string]any)
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// compareCell lists what differs between two records of cell n.
func compareCell(n string, a, b any) []string {
	var out []string
	add := func(format string, x ...any) { out = append(out, fmt.Sprintf(format, x...)) }
	if member(a, "status") != member(b, "status") {
		add("cell %s: status %s vs %s", n, shown(member(a, "status")), shown(member(b, "status")))
	}
	if !canonSame(outputsOf(a), outputsOf(b)) {
		add("cell %s: outputs differ", n)
	}
	for _, k := range []string{"work", "rounds", "items"} {
		if !canonSame(member(a, k), member(b, k)) {
			add("cell %s: %s %s vs %s", n, k, shown(member(a, k)), shown(member(b, k)))
		}
	}
	for _, k := range []string{"failure", "toolCalls", "shadowOut"} {
		if !canonSame(member(a, k), member(b, k)) {
			add("cell %s: %s %s", n, k, differVerb[k])
		}
	}
	if member(a, "via") != member(b, "via") {
		add("cell %s: via %s vs %s", n, viaOf(a), viaOf(b))
	}
	if !canonSame(member(a, "slot"), member(b, "slot")) {
		add("cell %s: slot differs", n)
	}
	return out
}

// differVerb agrees with the field's number: "toolCalls differ".
var differVerb = map[string]string{"failure": "differs", "toolCalls": "differ", "shadowOut": "differs"}

// outputsOf is a cell's outputs, {} when it has none.
func outputsOf(c any) any {
	if o := member(c, "outputs"); o != nil {
		return o
	}
	return map[string]any{}
}

// viaOf is where a cell ran: its via, else "local".
func viaOf(c any) string {
	if s, ok := member(c, "via").(string); ok {
		return s
	}
	return "local"
}

// compareEffects lists what differs between the effect lists, pairing
// effects only when the lists are equally long.
func compareEffects(a, b map[string]any) []string {
	ae, _ := a["effects"].([]any)
	be, _ := b["effects"].([]any)
	if len(ae) != len(be) {
		return []string{fmt.Sprintf("effects: %d vs %d", len(ae), len(be))}
	}
	var out []string
	for i := range ae {
		out = append(out, compareEffect(i, ae[i], be[i])...)
	}
	return out
}

func compareEffect(i int, e, o any) []string {
	var out []string
	add := func(format string, x ...any) { out = append(out, fmt.Sprintf(format, x...)) }
	if member(e, "requestDigest") != member(o, "requestDigest") {
		add("effect %d: requestDigest differs", i)
	}
	for _, k := range []string{"output", "error"} {
		if !canonSame(member(e, k), member(o, k)) {
			add("effect %d: %s differs", i, k)
		}
	}
	if member(e, "executor") != member(o, "executor") {
		add("effect %d: executor %s vs %s", i, shown(member(e, "executor")), shown(member(o, "executor")))
	}
	if !canonSame(member(e, "usage"), member(o, "usage")) {
		add("effect %d: usage differs", i)
	}
	return out
}

// compareFailure compares the run failures: presence, then code.
func compareFailure(a, b map[string]any) []string {
	af, aok := a["failure"]
	bf, bok := b["failure"]
	switch {
	case aok != bok:
		return []string{"failure presence differs"}
	case aok && member(af, "code") != member(bf, "code"):
		return []string{fmt.Sprintf("failure.code: %s vs %s", shown(member(af, "code")), shown(member(bf, "code")))}
	}
	return nil
}

// member reads a map field, nil when absent.
func member(m any, k string) any {
	if mm, ok := m.(map[string]any); ok {
		return mm[k]
	}
	return nil
}

// shown renders a receipt field as upstream's diff lines do: a string as
// itself, anything else as canonical JSON.
func shown(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := canon.Encode(v)
	if err != nil {
		return "null"
	}
	return string(b)
}

// canonSame compares two values canonically (absent equals null).
func canonSame(a, b any) bool { return canonText(a) == canonText(b) }

func canonText(v any) string {
	b, err := canon.Encode(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// summaryCellKeys are the fields of a cell record Summary shows when
// present.
var summaryCellKeys = []string{"failure", "shadowOut", "rounds", "items", "via", "slot", "effectDigest"}

// Summary is upstream's bounded receipt summary {contract, manifestKey,
// outcome, work, cells, effects, failure, digest}: per cell its status,
// work when non-zero, the fields of summaryCellKeys when present and the
// number of tool calls. It reads rec as it is: Check it first.
func Summary(rec map[string]any) map[string]any {
	cells := map[string]any{}
	raw, _ := rec["cells"].(map[string]any)
	for name, v := range raw {
		cells[name] = cellSummary(v)
	}
	effects, _ := rec["effects"].([]any)
	return map[string]any{"contract": rec["contract"], "manifestKey": rec["manifestKey"], "outcome": rec["outcome"],
		"work": rec["work"], "cells": cells, "effects": float64(len(effects)), "failure": rec["failure"], "digest": rec["digest"]}
}

func cellSummary(v any) map[string]any {
	cell, _ := v.(map[string]any)
	e := map[string]any{"status": cell["status"]}
	if w, ok := cell["work"].(float64); ok && w > 0 {
		e["work"] = w
	}
	for _, k := range summaryCellKeys {
		if x, ok := cell[k]; ok && x != nil {
			e[k] = x
		}
	}
	if calls, ok := cell["toolCalls"].([]any); ok && len(calls) > 0 {
		e["toolCalls"] = float64(len(calls))
	}
	return e
}
