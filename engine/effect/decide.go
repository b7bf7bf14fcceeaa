package effect

import (
	"sort"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/manifest"
)

// What a decide request asks for: one answer per question, each shaped by
// the question's type. The output contract and the questions object are
// parts of the request (they enter its digest); binding an answer to them
// is the VM's.

// answerSchemas are the answer schemas by question type; any type but
// noul and score is answered as a choice.
var answerSchemas = map[string]any{
	"noul": jsonLiteral(`{"type":"object","required":["noul"],"properties":{"type":{"type":"string"},"noul":{"type":"number"}}}`),
	"choice": jsonLiteral(`{"type":"object","required":["choice","confidence","probabilities"],` +
		`"properties":{"type":{"type":"string"},"choice":{"type":"string"},"confidence":{"type":"number"},"probabilities":{"type":"object"}}}`),
	"score": jsonLiteral(`{"type":"object","required":["score","confidence","probabilities"],` +
		`"properties":{"type":{"type":"string"},"score":{"type":"number"},"confidence":{"type":"number"},"probabilities":{"type":"object"}}}`),
}

// jsonLiteral parses a JSON literal of this package (a wire constant).
func jsonLiteral(text string) any {
	v, err := canon.Parse([]byte(text), 0)
	if err != nil {
		panic("effect: bad JSON literal: " + err.Error())
	}
	return v
}

// AnswerSchema is a fresh copy of the answer schema of question type t.
func AnswerSchema(t string) any {
	schema, ok := answerSchemas[t]
	if !ok {
		schema = answerSchemas["choice"]
	}
	return canon.Clone(schema)
}

// AnswerFields are the keys an answer of question type t may carry.
func AnswerFields(t string) []string {
	if t == "noul" {
		return []string{"type", "noul"}
	}
	return []string{"type", t, "confidence", "probabilities"}
}

// DecideOutput is the output contract of a decide request asking qs. The
// required list is in UTF-8 byte order of the names (the native
// runtime's map order).
func DecideOutput(qs []manifest.Question) map[string]any {
	names := make([]string, 0, len(qs))
	props := make(map[string]any, len(qs))
	for _, q := range qs {
		names = append(names, q.Name)
		props[q.Name] = AnswerSchema(q.Type)
	}
	sort.Strings(names)
	return map[string]any{"kind": "json", "schema": map[string]any{"type": "object", "required": []any{"answers"},
		"properties": map[string]any{"answers": map[string]any{"type": "object", "required": canon.Strings(names), "properties": props}}}}
}

// DecideQuestions is the questions object of a decide request the VM
// issues itself (recall rerank, tool-log compaction); a decide cell's
// comes compiled with its manifest (manifest.DecideCell.QuestionsValue).
func DecideQuestions(qs []manifest.Question) map[string]any {
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
