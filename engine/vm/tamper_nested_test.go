package vm

import (
	"path/filepath"
	"testing"

	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/mailbox"
	"github.com/algal-assay/assay/engine/receipt"
	"github.com/algal-assay/assay/engine/store"
)

// nestedSamples are receipts of organism, repeat, each (via a transport),
// spawn, a suspended nested gate and a resumed mailbox receive.
func nestedSamples(t *testing.T) []sample {
	var out []sample
	add := func(name, mj, args string, host *Host) {
		m := mustManifest(t, mj)
		rec := runAndVerify(t, m, args, host)
		out = append(out, sample{name, m, rec, host.Store})
	}
	st := store.NewMemStore()
	tri := storedManifest(t, st, triageJSON)
	add("organism", organism("inbox",
		`{"id":"in","kind":"input","outputs":{"t":"text"}},{"id":"tri","kind":"organism","manifest":"`+tri.Digest+`"}`,
		edge("in", "t", "tri", "ticket")), `{"in":{"t":"crash"}}`, scriptedHost(t, st, `{"route":"bug"}`))

	st = store.NewMemStore()
	round := storedManifest(t, st, roundJSON)
	add("repeat", organism("refine",
		`{"id":"in","kind":"input","outputs":{"d":"text"}},
		 {"id":"loop","kind":"repeat","manifest":"`+round.Digest+`","maxRounds":3,"carry":{"draft":"draft"},"until":{"output":"verdict","equals":"ship"}}`,
		edge("in", "d", "loop", "draft")), `{"in":{"d":"v0"}}`, scriptedHost(t, st, `{"editor":["v1","v2"],"critic":["revise","ship"]}`))

	child := mustManifest(t, echoChild)
	dir, _ := bundleDir(t, child)
	st = store.NewMemStore()
	add("each-via", organism("map",
		`{"id":"in","kind":"input","outputs":{"qs":"json"}},
		 {"id":"map","kind":"each","manifest":"`+child.Digest+`","over":"q","maxItems":3,"via":"far"},{"id":"all","kind":"fn","fn":"join.v1"}`,
		edge("in", "qs", "map", "q")+","+edge("map", "out", "all", "items")), `{"in":{"qs":["a","b"]}}`,
		&Host{Store: st, Transports: map[string]string{"far": dir}})

	st = store.NewMemStore()
	add("spawn", organism("breed",
		`{"id":"in","kind":"input","outputs":{"q":"text"}},
		 {"id":"writer","kind":"agent","prompt":"p","inputs":{"q":"text"},"output":{"kind":"json","schema":{"type":"object"}}},
		 {"id":"args","kind":"const","outputs":{"v":{"type":"json","value":{"q":"hello"}}}},
		 {"id":"run","kind":"spawn"}`,
		edge("in", "q", "writer", "q")+","+edge("writer", "out", "run", "manifest")+","+edge("args", "v", "run", "args")),
		`{"in":{"q":"x"}}`, scriptedHost(t, st, `{"writer":`+echoChild+`}`))

	st = store.NewMemStore()
	gated := storedManifest(t, st, gateJSON)
	add("nested-suspended", organism("outer",
		`{"id":"in","kind":"input","outputs":{"d":"text"}},{"id":"wrap","kind":"organism","manifest":"`+gated.Digest+`"}`,
		edge("in", "d", "wrap", "diff")), `{"in":{"d":"+1"}}`, approvalsHost(t, st, filepath.Join(t.TempDir(), "none.json")))

	// A mailbox receive resumed after a send: the resumed receipt holds
	// the live tool answer; verification serves it from the record.
	st = store.NewMemStore()
	svc := mailbox.Open(t.TempDir())
	box, _ := svc.Create("inbox", 4, 1000)
	m := mustManifest(t, receiveJSON)
	host := &Host{Store: st, Router: effect.NewRouter(mailbox.NewTools(svc))}
	cp := runAndVerify(t, m, `{"in":{"inbox":"`+box.ReceiveHandle+`"}}`, host)
	k, _ := mailbox.NewKey()
	if _, _, err := svc.Send(box.SendHandle, "go", k); err != nil {
		t.Fatal(err)
	}
	done, err := Resume(cp, m, host)
	if err != nil || done["outcome"] != "complete" {
		t.Fatalf("resume: %v", err)
	}
	out = append(out, sample{"mailbox-resumed", m, done, st})
	return out
}

// TestTamperNestedReceipts applies the run-engine tamper discipline to
// nested receipts: every leaf mutated (sealed or re-sealed) and every
// field deleted must fail verification.
func TestTamperNestedReceipts(t *testing.T) {
	t.Parallel()
	total := 0
	for _, s := range nestedSamples(t) {
		total += tamperLeaves(t, s, func(p []any) bool { return worldFact(s.rec, p) || nestedWorldFact(p) })
		var fs [][]any
		fields(s.rec, nil, &fs)
		for _, p := range fs {
			mut := deletedAt(s.rec, p)
			what := "deleted " + renderPath(p)
			if nestedWorldFact(p) || (len(p) > 1 && worldFact(s.rec, p)) || renderPath(p) == "digest" {
				// A deleted via or effect detail is a consistent claim
				// about the world once re-sealed (and re-sealing restores
				// a deleted digest); unsealed it still breaks the digest.
				rejects(t, s, mut, what)
				total++
				continue
			}
			rejects(t, s, mut, what)
			_, _ = receipt.Seal(mut)
			rejects(t, s, mut, what+" (re-sealed)")
			total += 2
		}
	}
	if total < 800 {
		t.Fatalf("only %d tamper cases", total)
	}
	t.Logf("%d tampered nested receipts rejected", total)
}

// nestedWorldFact: via names the transport that served a closure; like a
// slot read it is a fact of the world that verification (which uses no
// transports) copies from the record.
func nestedWorldFact(p []any) bool {
	return len(p) == 3 && p[0] == "cells" && p[2] == "via"
}
