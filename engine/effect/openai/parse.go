package openai

import (
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/fault"
)

// Answer is one parsed chat completion.
type Answer struct {
	// Output is the raw cell output: the "value" of the answer, or
	// {"tool": name, "inputs": {...}} for a function call.
	Output any
	// Usage is the receipt's usage record: the model the server reports
	// (the configured model when it reports none) and the token counts it
	// reports. A count the server omits is absent, never zero.
	Usage map[string]any
	// CachedTokensIn is the server's cached prompt token count, -1 when it
	// reports none. Receipts have no field for it (upstream's usage record
	// is closed), so it travels beside the record.
	CachedTokensIn int64
}

// Parse reads a chat-completions response body strictly. Anything that is
// not one complete answer in the agreed shape is EFFECT_UNPARSEABLE, with
// upstream's messages where upstream has one: a body that is not JSON, not
// exactly one choice, an answer cut short (finish_reason other than stop
// or tool_calls), content that is not text or not a JSON object whose only
// key is "value", a call to a function the cell did not declare, or call
// arguments that are not a JSON object. The value itself is bound to the
// cell's output contract by the run engine, as for every executor.
func Parse(body []byte, functions map[string]string, model string) (Answer, error) {
	v, err := canon.Parse(body, 0)
	if err != nil {
		return Answer{}, unparseable("provider response is not JSON")
	}
	resp, ok := v.(map[string]any)
	if !ok {
		return Answer{}, unparseable("provider response is not JSON")
	}
	choices, ok := resp["choices"].([]any)
	if !ok || len(choices) != 1 {
		return Answer{}, unparseable("provider must return one choice")
	}
	choice, _ := choices[0].(map[string]any)
	finish := choice["finish_reason"]
	if finish != nil && finish != "stop" && finish != "tool_calls" {
		return Answer{}, unparseable("provider did not complete the output")
	}
	msg, _ := choice["message"].(map[string]any)
	if msg == nil {
		return Answer{}, unparseable("provider choice has no message")
	}
	a := Answer{CachedTokensIn: -1}
	if calls, ok := msg["tool_calls"].([]any); ok && len(calls) > 0 {
		if a.Output, err = toolCall(calls, functions); err != nil {
			return Answer{}, err
		}
	} else {
		content, ok := msg["content"].(string)
		if !ok {
			return Answer{}, unparseable("provider content must be text")
		}
		structured, err := canon.Parse([]byte(content), 0)
		if err != nil {
			return Answer{}, unparseable("provider structured output is not JSON")
		}
		obj, ok := structured.(map[string]any)
		value, has := obj["value"]
		if !ok || !has || len(obj) != 1 {
			return Answer{}, unparseable("provider output must be a JSON object whose only key is value")
		}
		a.Output = value
	}
	served := model
	if s, ok := resp["model"].(string); ok && CheckModel(s) == nil {
		served = s
	}
	a.Usage = map[string]any{"model": served}
	if u, ok := resp["usage"].(map[string]any); ok {
		if n, ok := count(u["prompt_tokens"]); ok {
			a.Usage["tokensIn"] = float64(n)
		}
		if n, ok := count(u["completion_tokens"]); ok {
			a.Usage["tokensOut"] = float64(n)
		}
		if d, ok := u["prompt_tokens_details"].(map[string]any); ok {
			if n, ok := count(d["cached_tokens"]); ok {
				a.CachedTokensIn = n
			}
		}
	}
	return a, nil
}

func toolCall(calls []any, functions map[string]string) (any, error) {
	if len(calls) != 1 {
		return nil, unparseable("provider made %d function calls in one turn; a turn makes at most one", len(calls))
	}
	call, _ := calls[0].(map[string]any)
	fn, _ := call["function"].(map[string]any)
	wire, _ := fn["name"].(string)
	name, ok := functions[wire]
	if !ok {
		return nil, unparseable("provider called function %q, which the cell does not declare", truncate(wire, 64))
	}
	args, _ := fn["arguments"].(string)
	if args == "" {
		args = "{}"
	}
	parsed, err := canon.Parse([]byte(args), 0)
	if err != nil {
		return nil, unparseable("provider function call arguments are not JSON")
	}
	inputs, ok := parsed.(map[string]any)
	if !ok {
		return nil, unparseable("provider function call arguments must be a JSON object")
	}
	return map[string]any{"tool": name, "inputs": inputs}, nil
}

// count admits a token count: a non-negative integer a double holds
// exactly.
func count(v any) (int64, bool) {
	f, ok := v.(float64)
	if !ok || f < 0 || f > 1<<53-1 || f != float64(int64(f)) {
		return 0, false
	}
	return int64(f), true
}

func unparseable(format string, a ...any) *fault.Error {
	return effect.Errorf(fault.EffectUnparseable, format, a...)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
