package main

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/receipt"
	"github.com/algal-assay/assay/engine/store"

	"github.com/spf13/cobra"
)

func newInspectCmd(c *cli) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "inspect RECEIPT",
		Short: "Summarize a run: cell statuses, work and effect counts",
		Long: "Prints upstream's bounded receipt summary {contract,manifestKey,outcome,work,cells,effects,\n" +
			"failure,digest}: per cell its status, work when non-zero, failure, shadowOut, rounds, items,\n" +
			"via, slot, effectDigest when present, and the number of tool calls. The receipt is checked\n" +
			"first (structure, and its digest against its content): a summary never shows a digest the\n" +
			"receipt only claims. RECEIPT is a file, or the sha256: digest of a receipt in the --dir\n" +
			"store (what `assay runs` lists).",
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			rec, err := readReceiptOrStored(args[0], dir)
			if err != nil {
				return err
			}
			if err := receipt.Check(rec); err != nil {
				if e, ok := fault.As(err); ok && e.File == "" {
					named := *e
					named.File = args[0]
					return &named
				}
				return err
			}
			return c.emit(inspectReceipt(rec), "")
		},
	}
	cmd.Flags().StringVar(&dir, "dir", store.DefaultDir, "store `DIR` a sha256: RECEIPT is read from")
	return cmd
}

// readReceiptOrStored reads a receipt file or, for a sha256: digest that
// names no file, the receipt stored under it in dir (verified on read).
func readReceiptOrStored(arg, dir string) (map[string]any, error) {
	if _, err := os.Stat(arg); err == nil || !strings.HasPrefix(arg, "sha256:") {
		return readReceipt(arg)
	}
	st, err := store.OpenFileStore(dir)
	if err != nil {
		return nil, err
	}
	v, ok, err := st.Get(store.Runs, arg)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, &fault.Error{Code: fault.StoreMiss, File: dir, Message: "no receipt " + arg + " in the store",
			Hint: " (`assay runs --dir " + dir + "` lists the stored receipts)"}
	}
	return jsonObject(v, arg, "receipt")
}

func inspectReceipt(rec map[string]any) map[string]any {
	cells := map[string]any{}
	raw, _ := rec["cells"].(map[string]any)
	for name, v := range raw {
		cell, _ := v.(map[string]any)
		e := map[string]any{"status": cell["status"]}
		if w, ok := cell["work"].(float64); ok && w > 0 {
			e["work"] = w
		}
		for _, k := range []string{"failure", "shadowOut", "rounds", "items", "via", "slot", "effectDigest"} {
			if x, ok := cell[k]; ok && x != nil {
				e[k] = x
			}
		}
		if calls, ok := cell["toolCalls"].([]any); ok && len(calls) > 0 {
			e["toolCalls"] = float64(len(calls))
		}
		cells[name] = e
	}
	effects, _ := rec["effects"].([]any)
	return map[string]any{"contract": rec["contract"], "manifestKey": rec["manifestKey"], "outcome": rec["outcome"],
		"work": rec["work"], "cells": cells, "effects": float64(len(effects)), "failure": rec["failure"], "digest": rec["digest"]}
}

func newDiffCmd(c *cli) *cobra.Command {
	return &cobra.Command{
		Use:   "diff RECEIPT_A RECEIPT_B",
		Short: "Compare two runs: which cells diverged, what each one cost",
		Long: "Prints {\"same\",\"a\",\"b\",\"mismatches\"} with one line per difference (manifest digest,\n" +
			"outcome, cell set, per-cell status, outputs, work, rounds, items, failure, tool calls, shadow\n" +
			"output, via and slot, effects, events, work totals, failure code); exit 1 when they differ.",
		Args: cobra.ExactArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			a, err := readReceipt(args[0])
			if err != nil {
				return err
			}
			b, err := readReceipt(args[1])
			if err != nil {
				return err
			}
			ms := diffReceipts(a, b)
			if a["manifestDigest"] != b["manifestDigest"] {
				ms = append([]string{fmt.Sprintf("manifestDigest: %s vs %s", display(a["manifestDigest"]), display(b["manifestDigest"]))}, ms...)
			}
			list := make([]any, len(ms))
			for i, m := range ms {
				list[i] = m
			}
			if err := c.emit(map[string]any{"same": len(ms) == 0, "a": a["digest"], "b": b["digest"], "mismatches": list}, ""); err != nil {
				return err
			}
			if len(ms) > 0 {
				return reported(fmt.Errorf("the receipts differ"))
			}
			return nil
		},
	}
}

// field reads a map field, nil when absent.
func field(m any, k string) any {
	if mm, ok := m.(map[string]any); ok {
		return mm[k]
	}
	return nil
}

// diffReceipts lists what differs between two receipts, in upstream's
// order and wording.
func diffReceipts(a, b map[string]any) []string {
	var out []string
	add := func(format string, x ...any) { out = append(out, fmt.Sprintf(format, x...)) }
	if a["outcome"] != b["outcome"] {
		add("outcome: %s vs %s", display(a["outcome"]), display(b["outcome"]))
	}
	names := func(r map[string]any) []string {
		m, _ := r["cells"].(map[string]any)
		ks := make([]string, 0, len(m))
		for k := range m {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		return ks
	}
	an, bn := names(a), names(b)
	if strings.Join(an, ",") != strings.Join(bn, ",") {
		add("cells: %s vs %s", strings.Join(an, ","), strings.Join(bn, ","))
	}
	bc, _ := b["cells"].(map[string]any)
	for _, n := range an {
		ac := field(a["cells"], n)
		bcell, ok := bc[n]
		if !ok || bcell == nil {
			continue
		}
		if field(ac, "status") != field(bcell, "status") {
			add("cell %s: status %s vs %s", n, display(field(ac, "status")), display(field(bcell, "status")))
		}
		outs := func(c any) any {
			if o := field(c, "outputs"); o != nil {
				return o
			}
			return map[string]any{}
		}
		if !canonEqual(outs(ac), outs(bcell)) {
			add("cell %s: outputs differ", n)
		}
		for _, k := range []string{"work", "rounds", "items"} {
			if !canonEqual(field(ac, k), field(bcell, k)) {
				add("cell %s: %s %s vs %s", n, k, display(field(ac, k)), display(field(bcell, k)))
			}
		}
		for _, k := range []string{"failure", "toolCalls", "shadowOut"} {
			if !canonEqual(field(ac, k), field(bcell, k)) {
				verb := "differs"
				if k == "toolCalls" {
					verb = "differ"
				}
				add("cell %s: %s %s", n, k, verb)
			}
		}
		if field(ac, "via") != field(bcell, "via") {
			via := func(c any) string {
				if s, ok := field(c, "via").(string); ok {
					return s
				}
				return "local"
			}
			add("cell %s: via %s vs %s", n, via(ac), via(bcell))
		}
		if !canonEqual(field(ac, "slot"), field(bcell, "slot")) {
			add("cell %s: slot differs", n)
		}
	}
	ae, _ := a["effects"].([]any)
	be, _ := b["effects"].([]any)
	if len(ae) != len(be) {
		add("effects: %d vs %d", len(ae), len(be))
	} else {
		for i := range ae {
			e, o := ae[i], be[i]
			if field(e, "requestDigest") != field(o, "requestDigest") {
				add("effect %d: requestDigest differs", i)
			}
			for _, k := range []string{"output", "error"} {
				if !canonEqual(field(e, k), field(o, k)) {
					add("effect %d: %s differs", i, k)
				}
			}
			if field(e, "executor") != field(o, "executor") {
				add("effect %d: executor %s vs %s", i, display(field(e, "executor")), display(field(o, "executor")))
			}
			if !canonEqual(field(e, "usage"), field(o, "usage")) {
				add("effect %d: usage differs", i)
			}
		}
	}
	if !canonEqual(a["events"], b["events"]) {
		add("events: event logs differ")
	}
	for _, k := range []string{"steps", "agentCalls", "units"} {
		if !canonEqual(field(a["work"], k), field(b["work"], k)) {
			add("work.%s: %s vs %s", k, display(field(a["work"], k)), display(field(b["work"], k)))
		}
	}
	af, aok := a["failure"]
	bf, bok := b["failure"]
	if aok != bok {
		add("failure presence differs")
	} else if aok && field(af, "code") != field(bf, "code") {
		add("failure.code: %s vs %s", display(field(af, "code")), display(field(bf, "code")))
	}
	return out
}
