package vm

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/expr"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/receipt"
)

// Wire constants of recall rerank and tool-log compaction requests; they
// enter request digests, so they are byte-exact.
const (
	rerankPrompt     = "Semantic rerank for recall cell %q. Score every hit's direct relevance to the query; do not summarize or rewrite the source text."
	rerankQuestion   = "Is context.hits[%d] directly relevant to context.query?"
	rerankTrue       = "The hit directly helps answer context.query."
	rerankFalse      = "The hit does not help answer context.query."
	compactPrompt    = "Tool-log triage for cell %q. The log exceeds %dB; for each indexed entry decide whether the call and its result must be preserved verbatim for the remaining work. Task: %s"
	compactQuestion  = "Retain context.toolLog[%d] verbatim \u2014 the %q call and its result. Is it still needed for the remaining task?"
	toolOutputRefCtr = "algal.tool-output-ref.v1"
)

var recallOutput = map[string]any{"kind": "json", "schema": map[string]any{"type": "object", "required": []any{"hits"},
	"properties": map[string]any{"hits": map[string]any{"type": "array"}}}}

func checkHits(raw any, k int) ([]any, string) {
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, "recall output must be an object"
	}
	for _, key := range canon.SortedKeys(m) {
		if key != "hits" {
			return nil, fmt.Sprintf("recall output has unexpected field %q", key)
		}
	}
	hits, ok := m["hits"].([]any)
	if !ok {
		return nil, "recall output must carry a hits list"
	}
	if len(hits) > k {
		return nil, fmt.Sprintf("recall returned %d hits, over k %d", len(hits), k)
	}
	for i, h := range hits {
		hm, ok := h.(map[string]any)
		if !ok {
			return nil, fmt.Sprintf("hit %d must be an object", i)
		}
		for _, key := range canon.SortedKeys(hm) {
			if !contains([]string{"id", "source", "seq", "score", "text", "ref"}, key) {
				return nil, fmt.Sprintf("hit %d has unexpected field %q", i, key)
			}
		}
		id, _ := hm["id"].(string)
		src, okSrc := hm["source"].(string)
		seq, okSeq := hm["seq"].(float64)
		score, okScore := hm["score"].(float64)
		text, okText := hm["text"].(string)
		switch {
		case !canon.IsDigest(id):
			return nil, fmt.Sprintf("hit %d: id must be a digest", i)
		case !okSrc || src == "":
			return nil, fmt.Sprintf("hit %d: source must be text", i)
		case !okSeq || seq < 0 || seq != math.Trunc(seq):
			return nil, fmt.Sprintf("hit %d: seq must be a non-negative integer", i)
		case !okScore || math.IsInf(score, 0) || math.IsNaN(score):
			return nil, fmt.Sprintf("hit %d: score must be finite", i)
		case !okText || len(text) > MaxHitText:
			return nil, fmt.Sprintf("hit %d: text must be at most %d bytes", i, MaxHitText)
		}
		if ref, has := hm["ref"]; has {
			rs, _ := ref.(string)
			hex, isValue := strings.CutPrefix(src, "value:")
			if !canon.IsDigest(rs) || !isValue || rs != "sha256:"+hex {
				return nil, fmt.Sprintf("hit %d: ref must be the token its value: source names", i)
			}
		}
	}
	return hits, ""
}

func (s *scope) recallCell(c *manifest.Cell, p string, in map[string]any, rec *receipt.Cell) (map[string]any, *Failure) {
	rc := c.Recall
	q, burn, err := rc.Query.Compiled.Eval(in, MaxExprFuel)
	s.r.units += burn
	if err != nil {
		if fault.CodeOf(err) == expr.CodeFuel {
			return nil, failf(fault.BudgetExhausted, "recall query fuel exhausted")
		}
		return nil, failf(fault.ExprFailed, "recall query %s", expr.Canonical(err))
	}
	query, ok := q.(string)
	if !ok {
		return nil, failf(fault.ExprFailed, "recall cell %q query must evaluate to text", c.ID)
	}
	if query == "" {
		return nil, failf(fault.ExprFailed, "recall cell %q query must not be empty", c.ID)
	}
	if len(query) > MaxRecallQuery {
		return nil, failf(fault.BudgetExhausted, "recall cell %q query exceeds maxRecallQueryBytes %d", c.ID, MaxRecallQuery)
	}
	// min(cell ?? run, run) as for agent-family cells: the newest native
	// runtime caps a recall cell's byte budgets by the run's (an older one
	// did not, which changed the request digest).
	mc, mo, budget := s.requestBudget(rc.Budget)
	inputs := make(map[string]any, len(in))
	for k, v := range in {
		inputs[k] = v
	}
	ctx := map[string]any{"inputs": inputs}
	if n := encodedLen(ctx); n > mc {
		return nil, failf(fault.BudgetExhausted, "recall context %dB exceeds maxContextBytes %dB", n, mc)
	}
	k := rc.EffectiveK()
	req := effect.Request{"contract": effect.EffectContract, "cellId": c.ID, "kind": "recall", "prompt": "",
		"context": ctx, "output": recallOutput, "budget": budget,
		"recall": map[string]any{"query": query, "k": float64(k), "embedder": rc.EffectiveEmbedder()}}
	if rc.Route != nil {
		req["route"] = rc.Route.Value
	}
	bound, ok, f := s.issueFor(rec, call{path: p, req: req, kind: "recall", attempts: rc.Retry, maxOut: mo, effectMs: effectMs(rc.Budget),
		bind: func(raw any) (any, bool, *Failure) {
			hits, msg := checkHits(raw, k)
			if msg != "" {
				return nil, false, failf(fault.EffectUnparseable, "cell %q: %s", c.ID, msg)
			}
			return hits, false, nil
		}})
	if !ok {
		return nil, f
	}
	hits := bound.([]any)
	if rc.Rerank != nil && len(hits) >= 2 {
		qs := make([]manifest.Question, len(hits))
		qv := map[string]any{}
		for i := range hits {
			name := fmt.Sprintf("hit_%d", i)
			qs[i] = manifest.Question{Name: name, Type: "noul"}
			qv[name] = map[string]any{"type": "noul", "instructions": fmt.Sprintf(rerankQuestion, i),
				"criteria": map[string]any{"true": rerankTrue, "false": rerankFalse}}
		}
		rctx := map[string]any{"query": query, "hits": hits}
		if n := encodedLen(rctx); n > mc {
			return nil, failf(fault.BudgetExhausted, "recall rerank context %dB exceeds maxContextBytes %dB", n, mc)
		}
		rreq := effect.Request{"contract": effect.EffectContract, "cellId": c.ID, "kind": "decide",
			"prompt": fmt.Sprintf(rerankPrompt, c.ID), "context": rctx, "output": answerSchema(qs),
			"budget": budget, "route": rc.Rerank.Route.Value, "questions": qv}
		rbound, ok, f := s.issueFor(rec, call{path: p, req: rreq, kind: "decide", attempts: rc.Retry, maxOut: mo, effectMs: effectMs(rc.Budget),
			bind: answerBinder(qs, "cell %q: %s", c.ID)})
		if !ok {
			return nil, f
		}
		ans := rbound.(map[string]any)["answers"].(map[string]any)
		order := make([]int, len(hits))
		score := make([]float64, len(hits))
		for i := range hits {
			order[i] = i
			score[i], _ = ans[fmt.Sprintf("hit_%d", i)].(map[string]any)["noul"].(float64)
		}
		sort.SliceStable(order, func(a, b int) bool { return score[order[a]] > score[order[b]] })
		ranked := make([]any, len(hits))
		for i, j := range order {
			ranked[i] = hits[j]
		}
		if rc.Rerank.Take > 0 && rc.Rerank.Take < len(ranked) {
			ranked = ranked[:rc.Rerank.Take]
		}
		hits = ranked
	}
	out := map[string]any{"out": map[string]any{"hits": hits}}
	if len(hits) > 0 {
		if ref, ok := hits[0].(map[string]any)["ref"]; ok {
			out["ref"] = ref
		}
	}
	return out, nil
}

// compact runs tool-log triage before a turn when the log is over its
// byte bound: one recorded decide effect with a keep question per
// unpinned entry; entries scoring below 0.5 leave the log.
func (s *scope) compact(c *manifest.Cell, p string, in map[string]any, log []any, turn int, budget map[string]any, mc, mo int) ([]any, bool, *Failure) {
	a := c.Agent
	cp := a.Compact
	if len(log) <= cp.KeepRecent {
		return log, false, nil
	}
	lb, _ := canon.Encode(log)
	if len(lb) <= cp.MaxLogBytes {
		return log, false, nil
	}
	n := len(log) - cp.KeepRecent
	qs := make([]manifest.Question, n)
	qv := map[string]any{}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("keep_%d", i)
		fn, _ := log[i].(map[string]any)["fn"].(string)
		qs[i] = manifest.Question{Name: name, Type: "noul"}
		qv[name] = map[string]any{"type": "noul", "instructions": fmt.Sprintf(compactQuestion, i, fn)}
	}
	ctx := map[string]any{"inputs": viewInputs(a.View, in), "turn": float64(turn), "toolLog": log}
	if n := encodedLen(ctx); n > mc {
		return nil, false, failf(fault.BudgetExhausted, "compaction context %dB exceeds maxContextBytes %dB", n, mc)
	}
	req := effect.Request{"contract": effect.EffectContract, "cellId": c.ID, "kind": "decide",
		"prompt": fmt.Sprintf(compactPrompt, c.ID, cp.MaxLogBytes, a.Prompt), "context": ctx,
		"output": answerSchema(qs), "budget": budget, "questions": qv}
	if cp.Route != nil {
		req["route"] = cp.Route.Value
	} else if a.Route != nil {
		req["route"] = a.Route.Value
	}
	res, f := s.issue(call{path: p, req: req, kind: "decide", attempts: 1, maxOut: mo, effectMs: effectMs(a.Budget),
		bind: answerBinder(qs, "cell %q compaction: %s", c.ID)})
	if f != nil || res.suspended {
		return nil, res.suspended, f
	}
	ans := res.bound.(map[string]any)["answers"].(map[string]any)
	var kept []any
	for i, e := range log {
		if i >= n {
			kept = append(kept, e)
			continue
		}
		if v, _ := ans[fmt.Sprintf("keep_%d", i)].(map[string]any)["noul"].(float64); v >= 0.5 {
			kept = append(kept, e)
		}
	}
	return kept, false, nil
}

// elide projects a tool log for the request context: oldest unpinned
// outputs become algal.tool-output-ref.v1 stubs while the log or the
// context is over its bound. The receipt keeps the full outputs.
func elide(ctx map[string]any, log []any, cp *manifest.Compact, mc int) []any {
	out := make([]any, len(log))
	copy(out, log)
	over := func() bool {
		lb, _ := canon.Encode(out)
		if len(lb) > cp.MaxLogBytes {
			return true
		}
		ctx["toolLog"] = out
		cb, _ := canon.Encode(ctx)
		return len(cb) > mc
	}
	for i := 0; i < len(out)-cp.KeepRecent && over(); i++ {
		e := out[i].(map[string]any)
		ob, _ := canon.Encode(e["output"])
		d, _ := canon.Digest(e["output"])
		stub := map[string]any{"contract": toolOutputRefCtr, "source": d, "bytes": float64(len(ob))}
		sb, _ := canon.Encode(stub)
		if len(sb) < len(ob) {
			out[i] = map[string]any{"fn": e["fn"], "inputs": e["inputs"], "output": stub}
		}
	}
	ctx["toolLog"] = out
	return out
}

func encodedLen(v any) int {
	b, _ := canon.Encode(v)
	return len(b)
}
