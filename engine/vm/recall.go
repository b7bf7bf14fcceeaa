package vm

import (
	"fmt"
	"math"
	"slices"
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
	rerankPrompt    = "Semantic rerank for recall cell %q. Score every hit's direct relevance to the query; do not summarize or rewrite the source text."
	rerankQuestion  = "Is context.hits[%d] directly relevant to context.query?"
	rerankTrue      = "The hit directly helps answer context.query."
	rerankFalse     = "The hit does not help answer context.query."
	compactPrompt   = "Tool-log triage for cell %q. The log exceeds %dB; for each indexed entry decide whether the call and its result must be preserved verbatim for the remaining work. Task: %s"
	compactQuestion = "Retain context.toolLog[%d] verbatim \u2014 the %q call and its result. Is it still needed for the remaining task?"
)

// recallOutput is the output contract of a recall request.
var recallOutput = jsonValue(`{"kind":"json","schema":{"type":"object","required":["hits"],"properties":{"hits":{"type":"array"}}}}`)

// rerankCriteria are the criteria of every rerank question.
var rerankCriteria = jsonValue(`{"true":"` + rerankTrue + `","false":"` + rerankFalse + `"}`)

// jsonValue parses a JSON literal of this package (a wire constant).
func jsonValue(text string) any {
	v, err := canon.Parse([]byte(text), 0)
	if err != nil {
		panic("vm: bad JSON literal: " + err.Error())
	}
	return v
}

// hitFields is the closed key set of a recall hit.
var hitFields = []string{"id", "source", "seq", "score", "text", "ref"}

// recallHit is one checked hit of a recall answer: the hit as the index
// answered it (what the cell's output and a rerank context carry) and
// its ref, the token its value: source names ("" when it has none).
type recallHit struct {
	value any
	ref   string
}

// hitValues are hits as the index answered them.
func hitValues(hits []recallHit) []any {
	out := make([]any, len(hits))
	for i, h := range hits {
		out[i] = h.value
	}
	return out
}

// checkHits reads a recall answer: {"hits": [...]} with at most k hits,
// each well-formed.
func checkHits(raw any, k int) ([]recallHit, string) {
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, "recall output must be an object"
	}
	if key, bad := canon.UnknownKey(m, "hits"); bad {
		return nil, fmt.Sprintf("recall output has unexpected field %q", key)
	}
	values, ok := m["hits"].([]any)
	if !ok {
		return nil, "recall output must carry a hits list"
	}
	if len(values) > k {
		return nil, fmt.Sprintf("recall returned %d hits, over k %d", len(values), k)
	}
	hits := make([]recallHit, len(values))
	for i, h := range values {
		var msg string
		if hits[i], msg = checkHit(h); msg != "" {
			return nil, fmt.Sprintf("hit %d%s", i, msg)
		}
	}
	return hits, ""
}

// checkHit checks one hit; what is wrong follows "hit <i>" in the message.
func checkHit(h any) (recallHit, string) {
	hm, ok := h.(map[string]any)
	if !ok {
		return recallHit{}, " must be an object"
	}
	if key, bad := canon.UnknownKey(hm, hitFields...); bad {
		return recallHit{}, fmt.Sprintf(" has unexpected field %q", key)
	}
	id, _ := hm["id"].(string)
	src, okSrc := hm["source"].(string)
	seq, okSeq := hm["seq"].(float64)
	score, okScore := hm["score"].(float64)
	text, okText := hm["text"].(string)
	switch {
	case !canon.IsDigest(id):
		return recallHit{}, ": id must be a digest"
	case !okSrc || src == "":
		return recallHit{}, ": source must be text"
	case !okSeq || seq < 0 || seq != math.Trunc(seq):
		return recallHit{}, ": seq must be a non-negative integer"
	case !okScore || math.IsInf(score, 0) || math.IsNaN(score):
		return recallHit{}, ": score must be finite"
	case !okText || len(text) > MaxHitText:
		return recallHit{}, fmt.Sprintf(": text must be at most %d bytes", MaxHitText)
	}
	ref, hasRef := hm["ref"]
	rs, msg := hitRef(ref, hasRef, src)
	return recallHit{value: h, ref: rs}, msg
}

// hitRef reads a hit's optional ref: the token its value: source names.
func hitRef(ref any, has bool, src string) (string, string) {
	if !has {
		return "", ""
	}
	rs, _ := ref.(string)
	hex, isValue := strings.CutPrefix(src, "value:")
	if !canon.IsDigest(rs) || !isValue || rs != "sha256:"+hex {
		return "", ": ref must be the token its value: source names"
	}
	return rs, ""
}

// recallQuery evaluates a recall cell's query: non-empty text within
// MaxRecallQuery bytes.
func (s *scope) recallQuery(c *manifest.Cell, in ports) (string, *Failure) {
	q, burn, err := c.Recall.Query.Compiled.Eval(in, MaxExprFuel)
	s.r.units += burn
	if err != nil {
		if fault.CodeOf(err) == expr.CodeFuel {
			return "", failf(fault.BudgetExhausted, "recall query fuel exhausted")
		}
		return "", failf(fault.ExprFailed, "recall query %s", expr.Canonical(err))
	}
	query, ok := q.(string)
	switch {
	case !ok:
		return "", failf(fault.ExprFailed, "recall cell %q query must evaluate to text", c.ID)
	case query == "":
		return "", failf(fault.ExprFailed, "recall cell %q query must not be empty", c.ID)
	case len(query) > MaxRecallQuery:
		return "", failf(fault.BudgetExhausted, "recall cell %q query exceeds maxRecallQueryBytes %d", c.ID, MaxRecallQuery)
	}
	return query, nil
}

func (s *scope) recallCell(c *manifest.Cell, p string, in ports, rec *receipt.Cell) (ports, *Failure) {
	rc := c.Recall
	query, f := s.recallQuery(c, in)
	if f != nil {
		return nil, f
	}
	// min(cell ?? run, run) as for agent-family cells: the newest native
	// runtime caps a recall cell's byte budgets by the run's (an older one
	// did not, which changed the request digest).
	budget := s.requestBudget(rc.Budget)
	ctx := effect.RecallContext{Inputs: in.clone()}
	if n := encodedLen(ctx.Value()); n > budget.MaxContextBytes {
		return nil, failf(fault.BudgetExhausted, "recall context %dB exceeds maxContextBytes %dB", n, budget.MaxContextBytes)
	}
	k := rc.EffectiveK()
	req := effect.ModelRequest{CellID: c.ID, Kind: effect.KindRecall, Context: ctx, Output: recallOutput, Budget: budget,
		Route: routeValue(rc.Route), Recall: &effect.RecallQuery{Query: query, K: k, Embedder: rc.EffectiveEmbedder()}}
	bound, ok, f := s.issueFor(rec, call{path: p, req: req.Value(), kind: "recall", attempts: rc.Retry, maxOut: budget.MaxOutputBytes, effectMs: effectMs(rc.Budget),
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
	hits := bound.([]recallHit)
	if rc.Rerank != nil && len(hits) >= 2 {
		if hits, f = s.rerank(c, p, rec, query, hits, budget); hits == nil {
			return nil, f
		}
	}
	return recallOutputs(hits), nil
}

// recallOutputs are a recall cell's outputs: the hits, and the first
// hit's ref when it has one.
func recallOutputs(hits []recallHit) ports {
	out := ports{"out": map[string]any{"hits": hitValues(hits)}}
	if len(hits) > 0 && hits[0].ref != "" {
		out["ref"] = hits[0].ref
	}
	return out
}

// rerank orders hits by one recorded decide effect scoring each hit's
// relevance (a stable sort, highest first) and keeps the first
// rerank.take. It returns nil hits when the cell stops (a failure, or a
// suspension with a nil failure).
func (s *scope) rerank(c *manifest.Cell, p string, rec *receipt.Cell, query string, hits []recallHit, budget effect.Budget) ([]recallHit, *Failure) {
	rc := c.Recall
	qs := make([]manifest.Question, len(hits))
	for i := range hits {
		qs[i] = manifest.Question{Name: fmt.Sprintf("hit_%d", i), Type: "noul",
			Instructions: fmt.Sprintf(rerankQuestion, i), Criteria: rerankCriteria}
	}
	rctx := effect.RerankContext{Query: query, Hits: hitValues(hits)}
	if n := encodedLen(rctx.Value()); n > budget.MaxContextBytes {
		return nil, failf(fault.BudgetExhausted, "recall rerank context %dB exceeds maxContextBytes %dB", n, budget.MaxContextBytes)
	}
	rreq := decideRequest(c.ID, fmt.Sprintf(rerankPrompt, c.ID), rctx, qs, effect.DecideQuestions(qs), budget, &rc.Rerank.Route)
	score := make([]float64, len(qs))
	_, ok, f := s.issueFor(rec, call{path: p, req: rreq, kind: "decide", attempts: rc.Retry, maxOut: budget.MaxOutputBytes, effectMs: effectMs(rc.Budget),
		bind: answerBinder(qs, "cell %q: %s", c.ID, score)})
	if !ok {
		return nil, f
	}
	order := make([]int, len(hits))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return score[order[a]] > score[order[b]] })
	ranked := make([]recallHit, len(hits))
	for i, j := range order {
		ranked[i] = hits[j]
	}
	if rc.Rerank.Take > 0 && rc.Rerank.Take < len(ranked) {
		ranked = ranked[:rc.Rerank.Take]
	}
	return ranked, nil
}

// compact runs tool-log triage before a turn when the log is over its
// byte bound: one recorded decide effect with a keep question per
// unpinned entry; entries scoring below 0.5 leave the log.
func (s *scope) compact(c *manifest.Cell, p string, in ports, log []effect.ToolCall, turn int, budget effect.Budget) ([]effect.ToolCall, bool, *Failure) {
	a := c.Agent
	cp := a.Compact
	if len(log) <= cp.KeepRecent {
		return log, false, nil
	}
	if encodedLen(effect.ToolLogValue(log)) <= cp.MaxLogBytes {
		return log, false, nil
	}
	n := len(log) - cp.KeepRecent
	qs := make([]manifest.Question, n)
	for i := range qs {
		qs[i] = manifest.Question{Name: fmt.Sprintf("keep_%d", i), Type: "noul",
			Instructions: fmt.Sprintf(compactQuestion, i, log[i].Fn)}
	}
	ctx := &effect.AgentContext{Inputs: viewInputs(a.View, in), Turn: turn, ToolLog: log}
	if n := encodedLen(ctx.Value()); n > budget.MaxContextBytes {
		return nil, false, failf(fault.BudgetExhausted, "compaction context %dB exceeds maxContextBytes %dB", n, budget.MaxContextBytes)
	}
	route := cp.Route
	if route == nil {
		route = a.Route
	}
	req := decideRequest(c.ID, fmt.Sprintf(compactPrompt, c.ID, cp.MaxLogBytes, a.Prompt), ctx, qs, effect.DecideQuestions(qs), budget, route)
	keep := make([]float64, len(qs))
	res, f := s.issue(call{path: p, req: req, kind: "decide", attempts: 1, maxOut: budget.MaxOutputBytes, effectMs: effectMs(a.Budget),
		bind: answerBinder(qs, "cell %q compaction: %s", c.ID, keep)})
	if f != nil || res.suspended {
		return nil, res.suspended, f
	}
	var kept []effect.ToolCall
	for i, e := range log {
		if i >= n || keep[i] >= 0.5 {
			kept = append(kept, e)
		}
	}
	return kept, false, nil
}

// elide projects a tool log for the request context: oldest unpinned
// outputs become algal.tool-output-ref.v1 stubs while the log or the
// context is over its bound. The receipt keeps the full outputs.
func elide(ctx *effect.AgentContext, log []effect.ToolCall, cp *manifest.Compact, mc int) []effect.ToolCall {
	sent := slices.Clone(log)
	values := effect.ToolLogValue(log)
	// The context with the log is the context without it plus one
	// canonical member: ,"toolLog":<log>.
	ctx.ToolLog = nil
	base := encodedLen(ctx.Value()) + len(`,"toolLog":`)
	over := func() bool {
		lb := encodedLen(values)
		return lb > cp.MaxLogBytes || base+lb > mc
	}
	for i := 0; i < len(values)-cp.KeepRecent && over(); i++ {
		ob, _ := canon.Encode(log[i].Output)
		d, _ := canon.Digest(log[i].Output)
		stub := effect.ToolOutputRef{Source: d, Bytes: len(ob)}.Value()
		if encodedLen(stub) < len(ob) {
			sent[i].Output = stub
			values[i] = sent[i].Value()
		}
	}
	return sent
}

func encodedLen(v any) int {
	n, _ := canon.EncodedSize(v)
	return n
}
