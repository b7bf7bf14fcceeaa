package vm

import (
	"fmt"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
)

// Decision answers: what a decide request asks for (one answer per
// question, shaped by the question's type) and how an answer is bound.

// decideRequest is an algal.effect.v1 decide request asking qs
// (questions is their request value).
func decideRequest(cellID, prompt string, ctx effect.Context, qs []manifest.Question, questions any, budget effect.Budget, route *manifest.Route) effect.Request {
	req := effect.ModelRequest{CellID: cellID, Kind: effect.KindDecide, Prompt: prompt, Context: ctx,
		Output: effect.DecideOutput(qs), Budget: budget, Route: routeValue(route), Questions: questions}
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
// well-formed for its type. It returns the record, or what is wrong. With
// nouls (one per question) it also reads each question's noul answer
// into it, in question order (0 when an answer has none).
func bindAnswers(qs []manifest.Question, raw any, nouls []float64) (any, string) {
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
	for i, q := range qs {
		noul, msg := checkAnswer(q, ans[q.Name])
		if msg != "" {
			return nil, msg
		}
		if nouls != nil {
			nouls[i] = noul
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
// type tag and, for a choice with criteria, that it chose a criterion. It
// returns the answer's noul (0 when it has none), or what is wrong.
func checkAnswer(q manifest.Question, v any) (float64, string) {
	a, ok := v.(map[string]any)
	if !ok {
		return 0, fmt.Sprintf("missing answer %q", q.Name)
	}
	if msg := manifest.ValidateValue(effect.AnswerSchema(q.Type), a, 1); msg != "" {
		return 0, fmt.Sprintf("answer %q: %s", q.Name, msg)
	}
	if k, bad := firstUnexpected(a, effect.AnswerFields(q.Type)...); bad {
		return 0, fmt.Sprintf("answer %q: unexpected field %q", q.Name, k)
	}
	if t, ok := a["type"]; ok && t != q.Type {
		return 0, fmt.Sprintf("answer %q: type must be %q", q.Name, q.Type)
	}
	if q.Type == "choice" {
		if crit, ok := q.Criteria.(map[string]any); ok {
			if _, ok := crit[a["choice"].(string)]; !ok {
				return 0, fmt.Sprintf("answer %q: choice is not a declared criterion", q.Name)
			}
		}
	}
	noul, _ := a["noul"].(float64)
	return noul, ""
}

// answerBinder binds a decide-shaped answer to qs: the bound value is the
// decision record, and with nouls the binder reads each question's noul
// answer into it (recall rerank and tool-log compaction score by them).
// A malformed answer is EFFECT_UNPARSEABLE with the message format(id,
// what is wrong).
func answerBinder(qs []manifest.Question, format, id string, nouls []float64) bindFn {
	return func(raw any) (any, bool, *Failure) {
		m, msg := bindAnswers(qs, raw, nouls)
		if msg != "" {
			return nil, false, failf(fault.EffectUnparseable, format, id, msg)
		}
		return m, false, nil
	}
}
