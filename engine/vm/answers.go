package vm

import (
	"fmt"
	"sort"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
)

// Decision answers: what a decide request asks for (one answer per
// question, shaped by the question's type) and how an answer is bound.

// answerTypes are the answer schemas by question type; any type but noul
// and score is answered as a choice.
var answerTypes = map[string]any{
	"noul": jsonValue(`{"type":"object","required":["noul"],"properties":{"type":{"type":"string"},"noul":{"type":"number"}}}`),
	"choice": jsonValue(`{"type":"object","required":["choice","confidence","probabilities"],` +
		`"properties":{"type":{"type":"string"},"choice":{"type":"string"},"confidence":{"type":"number"},"probabilities":{"type":"object"}}}`),
	"score": jsonValue(`{"type":"object","required":["score","confidence","probabilities"],` +
		`"properties":{"type":{"type":"string"},"score":{"type":"number"},"confidence":{"type":"number"},"probabilities":{"type":"object"}}}`),
}

// answerType is a fresh copy of the answer schema of question type t.
func answerType(t string) any {
	schema, ok := answerTypes[t]
	if !ok {
		schema = answerTypes["choice"]
	}
	return canon.Clone(schema)
}

// answerFields are the keys an answer of question type t may carry.
func answerFields(t string) []string {
	if t == "noul" {
		return []string{"type", "noul"}
	}
	return []string{"type", t, "confidence", "probabilities"}
}

// answerSchema derives the output contract of a question map. The
// required list is in UTF-8 byte order of the names (the native
// runtime's map order).
func answerSchema(qs []manifest.Question) map[string]any {
	names := make([]string, 0, len(qs))
	props := make(map[string]any, len(qs))
	for _, q := range qs {
		names = append(names, q.Name)
		props[q.Name] = answerType(q.Type)
	}
	sort.Strings(names)
	return map[string]any{"kind": "json", "schema": map[string]any{"type": "object", "required": []any{"answers"},
		"properties": map[string]any{"answers": map[string]any{"type": "object", "required": canon.Strings(names), "properties": props}}}}
}

// questionsValue is the questions object of a decide request the VM
// issues itself (recall rerank, tool-log compaction).
func questionsValue(qs []manifest.Question) map[string]any {
	v := make(map[string]any, len(qs))
	for _, q := range qs {
		qv := map[string]any{"type": q.Type, "instructions": q.Instructions}
		if q.Criteria != nil {
			qv["criteria"] = q.Criteria
		}
		v[q.Name] = qv
	}
	return v
}

// decideRequest is an algal.effect.v1 decide request asking qs
// (questions is their request value).
func decideRequest(cellID, prompt string, ctx effect.Context, qs []manifest.Question, questions any, budget effect.Budget, route *manifest.Route) effect.Request {
	req := effect.ModelRequest{CellID: cellID, Kind: effect.KindDecide, Prompt: prompt, Context: ctx,
		Output: answerSchema(qs), Budget: budget, Route: routeValue(route), Questions: questions}
	return req.Value()
}

// firstUnexpected returns the first key of m, in canonical key order, that
// is not among allowed.
func firstUnexpected[V any](m map[string]V, allowed ...string) (string, bool) {
	for _, k := range canon.SortedKeys(m) {
		if !contains(allowed, k) {
			return k, true
		}
	}
	return "", false
}

// bindAnswers checks a decision record: exactly the declared answers, each
// well-formed for its type. It returns the record, or what is wrong.
func bindAnswers(qs []manifest.Question, raw any) (any, string) {
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, "output must be an object"
	}
	if k, bad := firstUnexpected(m, "answers"); bad {
		return nil, fmt.Sprintf("unexpected field %q", k)
	}
	ans, ok := m["answers"].(map[string]any)
	if !ok {
		return nil, "missing required property \"answers\""
	}
	for _, k := range canon.SortedKeys(ans) {
		if !questionNamed(qs, k) {
			return nil, fmt.Sprintf("unexpected answer %q", k)
		}
	}
	for _, q := range qs {
		if msg := checkAnswer(q, ans[q.Name]); msg != "" {
			return nil, msg
		}
	}
	return m, ""
}

func questionNamed(qs []manifest.Question, name string) bool {
	for _, q := range qs {
		if q.Name == name {
			return true
		}
	}
	return false
}

// checkAnswer checks the answer to q: its schema, its closed keys, its
// type tag and, for a choice with criteria, that it chose a criterion.
func checkAnswer(q manifest.Question, v any) string {
	a, ok := v.(map[string]any)
	if !ok {
		return fmt.Sprintf("missing answer %q", q.Name)
	}
	if msg := manifest.ValidateValue(answerType(q.Type), a, 1); msg != "" {
		return fmt.Sprintf("answer %q: %s", q.Name, msg)
	}
	if k, bad := firstUnexpected(a, answerFields(q.Type)...); bad {
		return fmt.Sprintf("answer %q: unexpected field %q", q.Name, k)
	}
	if t, ok := a["type"]; ok && t != q.Type {
		return fmt.Sprintf("answer %q: type must be %q", q.Name, q.Type)
	}
	if q.Type == "choice" {
		if crit, ok := q.Criteria.(map[string]any); ok {
			if _, ok := crit[a["choice"].(string)]; !ok {
				return fmt.Sprintf("answer %q: choice is not a declared criterion", q.Name)
			}
		}
	}
	return ""
}

// answerBinder binds a decide-shaped answer to qs; a malformed one is
// EFFECT_UNPARSEABLE with the message format(id, what is wrong).
func answerBinder(qs []manifest.Question, format, id string) bindFn {
	return func(raw any) (any, bool, *Failure) {
		m, msg := bindAnswers(qs, raw)
		if msg != "" {
			return nil, false, failf(fault.EffectUnparseable, format, id, msg)
		}
		return m, false, nil
	}
}

// nouls reads the noul answer to each of qs from a bound decision (0
// when it has none).
func nouls(bound any, qs []manifest.Question) []float64 {
	ans := bound.(map[string]any)["answers"].(map[string]any)
	out := make([]float64, len(qs))
	for i, q := range qs {
		out[i], _ = ans[q.Name].(map[string]any)["noul"].(float64)
	}
	return out
}
