package anthropic

import (
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/effect/live"
	"github.com/algal-assay/assay/engine/fault"
)

// Answer is one parsed Messages response.
type Answer struct {
	// Output is the raw cell output: the value given through OutputTool,
	// or {"tool": name, "inputs": {...}} for a call to a cell tool.
	Output any
	// Usage is the receipt's usage record: the served model and the token
	// counts reported. tokensIn counts every prompt token the request
	// spent: input_tokens plus cache_read_input_tokens plus
	// cache_creation_input_tokens.
	Usage map[string]any
	// CacheRead and CacheWrite are the cache token counts (-1: none
	// reported); receipts have no field for them.
	CacheRead, CacheWrite int64
}

// Parse reads a Messages response body strictly: a message whose content
// holds exactly one tool_use block, naming OutputTool (its input must be
// {"value": V}) or a declared cell tool (its input an object). stop_reason
// must be tool_use or end_turn; max_tokens is an answer cut short. The
// usage reported is returned with an unparseable answer too.
func Parse(body []byte, tools map[string]string, model string) (Answer, error) {
	v, err := canon.Parse(body, 0)
	if err != nil {
		return Answer{CacheRead: -1, CacheWrite: -1}, unparseable("provider response is not JSON")
	}
	resp, ok := v.(map[string]any)
	if !ok || resp["type"] != "message" {
		return Answer{CacheRead: -1, CacheWrite: -1}, unparseable("provider response is not a message")
	}
	a := usageOf(resp, model)
	fail := func(err error) (Answer, error) { a.Output = nil; return a, err }
	if stop := resp["stop_reason"]; stop != "tool_use" && stop != "end_turn" && stop != "stop_sequence" {
		return fail(unparseable("provider did not complete the output"))
	}
	content, _ := resp["content"].([]any)
	var uses []map[string]any
	for _, c := range content {
		if b, ok := c.(map[string]any); ok && b["type"] == "tool_use" {
			uses = append(uses, b)
		}
	}
	if len(uses) != 1 {
		return fail(unparseable("provider made %d tool calls in one turn; an answer is exactly one", len(uses)))
	}
	name, _ := uses[0]["name"].(string)
	input, ok := uses[0]["input"].(map[string]any)
	if !ok {
		return fail(unparseable("provider tool input must be a JSON object"))
	}
	if name == OutputTool {
		value, has := input["value"]
		if !has || len(input) != 1 {
			return fail(unparseable("provider output must be a JSON object whose only key is value"))
		}
		a.Output = value
		return a, nil
	}
	tool, ok := tools[name]
	if !ok {
		return fail(unparseable("provider called tool %q, which the cell does not declare", live.Truncate(name, 64)))
	}
	a.Output = map[string]any{"tool": tool, "inputs": input}
	return a, nil
}

func usageOf(resp map[string]any, model string) Answer {
	a := Answer{CacheRead: -1, CacheWrite: -1}
	served := model
	if s, ok := resp["model"].(string); ok && live.CheckModel(s) == nil {
		served = s
	}
	a.Usage = map[string]any{"model": served}
	u, ok := resp["usage"].(map[string]any)
	if !ok {
		return a
	}
	in, hasIn := live.Count(u["input_tokens"])
	if n, ok := live.Count(u["cache_read_input_tokens"]); ok {
		a.CacheRead, in = n, in+n
	}
	if n, ok := live.Count(u["cache_creation_input_tokens"]); ok {
		a.CacheWrite, in = n, in+n
	}
	if hasIn {
		a.Usage["tokensIn"] = float64(in)
	}
	if n, ok := live.Count(u["output_tokens"]); ok {
		a.Usage["tokensOut"] = float64(n)
	}
	return a
}

func unparseable(format string, a ...any) *fault.Error {
	return effect.Errorf(fault.EffectUnparseable, format, a...)
}
