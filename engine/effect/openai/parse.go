package openai

import (
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/effect/live"
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
	// ReasoningTokens is the server's reasoning token count (part of
	// tokensOut), -1 when it reports none.
	ReasoningTokens int64
	// Malformed says the body was not a chat completion at all (not JSON,
	// not exactly one choice, no message): a server failure, not an
	// answer (live.Report.Malformed).
	Malformed bool
}

// Parse reads a chat-completions response body strictly. Anything that is
// not one complete answer in the agreed shape is EFFECT_UNPARSEABLE, with
// upstream's messages where upstream has one: a body that is not JSON, not
// exactly one choice, an answer cut short (finish_reason other than stop
// or tool_calls), content that is not text or not a JSON object whose only
// key is "value", a call to a function the cell did not declare, or call
// arguments that are not a JSON object. The value itself is bound to the
// cell's output contract by the run engine, as for every executor. The
// usage the server reported is returned with an unparseable answer too.
func Parse(body []byte, functions map[string]string, model string) (Answer, error) {
	v, err := canon.Parse(body, 0)
	if err != nil {
		return Answer{CachedTokensIn: -1, ReasoningTokens: -1, Malformed: true}, unparseable("provider response is not JSON")
	}
	resp, ok := v.(map[string]any)
	if !ok {
		return Answer{CachedTokensIn: -1, ReasoningTokens: -1, Malformed: true}, unparseable("provider response is not JSON")
	}
	// Usage first: tokens the server reports were spent whether or not
	// the answer can be read, so an unreadable answer keeps them.
	a := usageOf(resp, model)
	fail := func(err error) (Answer, error) {
		return Answer{Usage: a.Usage, CachedTokensIn: a.CachedTokensIn, ReasoningTokens: a.ReasoningTokens}, err
	}
	choices, ok := resp["choices"].([]any)
	if !ok || len(choices) != 1 {
		return fail(unparseable("provider must return one choice"))
	}
	choice, _ := choices[0].(map[string]any)
	finish := choice["finish_reason"]
	if finish != nil && finish != "stop" && finish != "tool_calls" {
		return fail(unparseable("provider did not complete the output"))
	}
	msg, _ := choice["message"].(map[string]any)
	if msg == nil {
		a.Malformed = true
		return fail(unparseable("provider choice has no message"))
	}
	if calls, ok := msg["tool_calls"].([]any); ok && len(calls) > 0 {
		if a.Output, err = toolCall(calls, functions); err != nil {
			return fail(err)
		}
		return a, nil
	}
	content, ok := msg["content"].(string)
	if !ok {
		return fail(unparseable("provider content must be text"))
	}
	if a.Output, err = ValueOf(content); err != nil {
		return fail(err)
	}
	return a, nil
}

// ValueOf reads answer text that must be one JSON object whose only key
// is "value" and returns the value.
func ValueOf(content string) (any, error) {
	structured, err := canon.Parse([]byte(content), 0)
	if err != nil {
		return nil, unparseable("provider structured output is not JSON")
	}
	obj, ok := structured.(map[string]any)
	value, has := obj["value"]
	if !ok || !has || len(obj) != 1 {
		return nil, unparseable("provider output must be a JSON object whose only key is value")
	}
	return value, nil
}

// usageOf reads the served model and the token counts a response
// reports. completion_tokens already includes a reasoning model's hidden
// reasoning tokens (completion_tokens_details.reasoning_tokens), so
// tokensOut, and the cost priced from it, counts them.
func usageOf(resp map[string]any, model string) Answer {
	a := Answer{CachedTokensIn: -1, ReasoningTokens: -1}
	served := model
	if s, ok := resp["model"].(string); ok && CheckModel(s) == nil {
		served = s
	}
	a.Usage = map[string]any{"model": served}
	u, ok := resp["usage"].(map[string]any)
	if !ok {
		return a
	}
	if n, ok := live.Count(u["prompt_tokens"]); ok {
		a.Usage["tokensIn"] = float64(n)
	}
	out, hasOut := live.Count(u["completion_tokens"])
	if d, ok := u["completion_tokens_details"].(map[string]any); ok {
		if n, ok := live.Count(d["reasoning_tokens"]); ok {
			a.ReasoningTokens = n
			// A server that reports reasoning tokens beside, not inside,
			// its completion count (or only them) still has them counted.
			if !hasOut || n > out {
				out, hasOut = n, true
			}
		}
	}
	if hasOut {
		a.Usage["tokensOut"] = float64(out)
	}
	if d, ok := u["prompt_tokens_details"].(map[string]any); ok {
		if n, ok := live.Count(d["cached_tokens"]); ok {
			a.CachedTokensIn = n
		}
	}
	return a
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
		return nil, unparseable("provider called function %q, which the cell does not declare", live.Truncate(wire, 64))
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

func unparseable(format string, a ...any) *fault.Error {
	return effect.Errorf(fault.EffectUnparseable, format, a...)
}
