package openai

import (
	"fmt"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/effect/live"
)

// OutputSchemaName is the json_schema name structured outputs carry.
const OutputSchemaName = "algal_cell_output"

// Rendered is a request ready for the wire.
type Rendered struct {
	// Body is the canonical JSON request body, exactly the bytes sent.
	Body []byte
	// Functions maps the function names on the wire back to tool names
	// (function names allow only [A-Za-z0-9_-]).
	Functions map[string]string
}

// Render turns one algal.effect.v1 request into a chat-completions body.
// It is the only place request shapes are decided, and it is a pure
// function of the request, the cell's tools and the configuration, so the
// same request always sends the same bytes.
//
// The rules (RenderContract):
//
//   - model, temperature (0 unless configured) and max_tokens (configured,
//     else budget.maxOutputBytes/4 rounded up, 1..16384); top_p and stop
//     when configured. A reasoning model (Config.Reasons) gets
//     max_completion_tokens instead (configured, else the same plus
//     ReasoningAllowance), reasoning_effort when configured, and no
//     temperature, top_p or stop. seed when configured.
//   - A system message states the contract: the context is data, and the
//     answer is one JSON object {"value": V} where V satisfies the cell's
//     output contract. Kind-specific sentences follow (a classifier picks
//     a label; a decide request answers every question; an agent with
//     tools may call one function per turn).
//   - One user message: the prompt under "Task:", the context minus its
//     tool log as canonical JSON under "Context (JSON):", a decide
//     request's questions under "Questions (JSON):", and the output
//     contract under "Output:" (a string; one of the labels; or a value
//     matching the JSON Schema shown).
//   - The tool log (context.toolLog) becomes the conversation it records:
//     for entry i an assistant message calling function call_i with the
//     canonical inputs as arguments, then a tool message with the
//     canonical output.
//   - With json_schema, response_format carries {"value": V}'s schema
//     (text: a string; choice: an enum of the labels; json: the declared
//     schema), strict only when the schema meets structured outputs'
//     strict subset; with json_object only the mode is sent; prompt sends
//     neither and relies on the system message.
//   - An agent or classifier cell with tools gets them as function tools
//     (dots and other characters outside [A-Za-z0-9_-] become "_") with
//     parallel_tool_calls false: a turn makes at most one call.
func Render(req effect.Request, tools []Tool, c Config) (Rendered, error) {
	c = c.normalized()
	kind, _ := req["kind"].(string)
	if kind == effect.KindDecide {
		tools = nil
	}
	wireTools, functions, err := live.WireTools(tools)
	if err != nil {
		return Rendered{}, err
	}
	p, err := live.NewPrompt(req, len(wireTools) > 0)
	if err != nil {
		return Rendered{}, err
	}
	messages := []any{
		map[string]any{"role": "system", "content": p.System},
		map[string]any{"role": "user", "content": p.User},
	}
	back := map[string]string{}
	for w, n := range functions {
		back[n] = w
	}
	for i, call := range p.Log {
		name := back[call.Fn]
		if name == "" {
			name = live.WireName(call.Fn)
		}
		id := fmt.Sprintf("call_%d", i)
		messages = append(messages,
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
				"id": id, "type": "function", "function": map[string]any{"name": name, "arguments": call.Inputs}}}},
			map[string]any{"role": "tool", "tool_call_id": id, "content": call.Output})
	}
	var wire []any
	for _, t := range wireTools {
		wire = append(wire, map[string]any{"type": "function", "function": map[string]any{
			"name": t.Name, "description": t.Description, "parameters": t.Parameters}})
	}

	body := map[string]any{
		"model":    c.Model,
		"messages": messages,
	}
	if c.Reasons() {
		// Reasoning models reject max_tokens and any sampling setting;
		// max_completion_tokens covers the hidden reasoning tokens too.
		body["max_completion_tokens"] = float64(maxTokens(req, c))
		if c.ReasoningEffort != "" {
			body["reasoning_effort"] = c.ReasoningEffort
		}
	} else {
		temp := 0.0
		if c.Temperature != nil {
			temp = *c.Temperature
		}
		body["temperature"] = temp
		body["max_tokens"] = float64(maxTokens(req, c))
		if c.TopP != nil {
			body["top_p"] = *c.TopP
		}
		if len(c.Stop) > 0 {
			stops := make([]any, len(c.Stop))
			for i, s := range c.Stop {
				stops[i] = s
			}
			body["stop"] = stops
		}
	}
	if c.Seed != nil {
		body["seed"] = float64(*c.Seed)
	}
	wrapper := p.Wrapper()
	switch c.ResponseFormat {
	case FormatJSONSchema:
		body["response_format"] = map[string]any{"type": "json_schema", "json_schema": map[string]any{
			"name": OutputSchemaName, "strict": strictSubset(wrapper), "schema": wrapper}}
	case FormatJSONObject:
		body["response_format"] = map[string]any{"type": "json_object"}
	}
	if len(wire) > 0 {
		body["tools"] = wire
		body["parallel_tool_calls"] = false
	}
	b, err := canon.Encode(body)
	if err != nil {
		return Rendered{}, fmt.Errorf("request body is not canonical JSON: %w", err)
	}
	return Rendered{Body: b, Functions: functions}, nil
}

// maxTokens is the configured cap, else a quarter of the output byte
// budget (a token is about four bytes), 1..16384; a reasoning model gets
// ReasoningAllowance more for the tokens it thinks in.
func maxTokens(req effect.Request, c Config) int {
	if c.MaxOutputTokens > 0 {
		return c.MaxOutputTokens
	}
	if c.Reasons() {
		return live.VisibleTokens(req) + ReasoningAllowance
	}
	return live.VisibleTokens(req)
}

// ReasoningAllowance is the default room a reasoning model gets for its
// hidden reasoning tokens on top of the answer's own.
const ReasoningAllowance = 8192

// strictSubset reports whether schema stays inside structured outputs'
// strict subset: every object lists its properties, forbids others and
// requires all of them, and nothing is left untyped. Strict mode rejects
// other schemas outright, so those are sent non-strict.
func strictSubset(schema any) bool {
	m, ok := schema.(map[string]any)
	if !ok {
		return false
	}
	if enum, ok := m["enum"].([]any); ok && len(enum) > 0 {
		return true
	}
	if anyOf, ok := m["anyOf"].([]any); ok {
		for _, s := range anyOf {
			if !strictSubset(s) {
				return false
			}
		}
		return len(anyOf) > 0
	}
	switch m["type"] {
	case "string", "number", "integer", "boolean", "null":
		return true
	case "array":
		return strictSubset(m["items"])
	case "object":
		props, ok := m["properties"].(map[string]any)
		if !ok || m["additionalProperties"] != false {
			return false
		}
		req, _ := m["required"].([]any)
		if len(req) != len(props) {
			return false
		}
		for _, r := range req {
			s, _ := r.(string)
			if _, ok := props[s]; !ok {
				return false
			}
		}
		for _, p := range props {
			if !strictSubset(p) {
				return false
			}
		}
		return true
	}
	return false
}
