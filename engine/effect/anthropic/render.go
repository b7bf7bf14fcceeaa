package anthropic

import (
	"fmt"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/effect/live"
)

// OutputTool is the tool the answer is given through: structured output
// on the Messages API is a tool whose input schema is the answer's, and
// which the model is made to call.
const OutputTool = "algal_cell_output"

// Rendered is a request ready for the wire.
type Rendered struct {
	// Body is the canonical JSON request body, exactly the bytes sent.
	Body []byte
	// Tools maps the tool names on the wire back to the manifest's.
	Tools map[string]string
}

// Render turns one algal.effect.v1 request into a Messages request body.
// It is a pure function of the request, the cell's tools and the
// configuration. The rules (RenderContract):
//
//   - model, max_tokens (configured, else budget.maxOutputBytes/4, 1..16384),
//     temperature (0 unless configured), top_p and stop_sequences when
//     configured; stream is never set.
//   - system: the contract every live backend states (live.Prompt); one
//     user turn with the task, the context, the questions and the output
//     contract.
//   - The answer is the input of the tool algal_cell_output, whose
//     input_schema is {"value": V}'s. Without cell tools tool_choice forces
//     it; an agent or classifier with tools is offered them too, with
//     tool_choice any (it must call one: a cell tool or the answer) and
//     parallel tool use disabled.
//   - The tool log becomes the turns it records: an assistant tool_use
//     (id call_i) and a user tool_result with the canonical output.
func Render(req effect.Request, tools []live.Tool, c Config) (Rendered, error) {
	c = c.normalized()
	kind, _ := req["kind"].(string)
	if kind == effect.KindDecide {
		tools = nil
	}
	p, err := live.NewPrompt(req, len(tools) > 0)
	if err != nil {
		return Rendered{}, err
	}
	wire, names, err := live.WireTools(tools)
	if err != nil {
		return Rendered{}, err
	}
	back := map[string]string{}
	for w, n := range names {
		back[n] = w
	}
	messages := []any{map[string]any{"role": "user", "content": p.User}}
	for i, call := range p.Log {
		name := back[call.Fn]
		if name == "" {
			name = live.WireName(call.Fn)
		}
		inputs, err := canon.Parse([]byte(call.Inputs), 0)
		if err != nil {
			return Rendered{}, fmt.Errorf("tool log entry %d: %w", i, err)
		}
		if _, ok := inputs.(map[string]any); !ok {
			inputs = map[string]any{"inputs": inputs}
		}
		id := fmt.Sprintf("call_%d", i)
		messages = append(messages,
			map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": id, "name": name, "input": inputs}}},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": call.Output}}})
	}
	temp := 0.0
	if c.Temperature != nil {
		temp = *c.Temperature
	}
	max := live.VisibleTokens(req)
	if c.MaxOutputTokens > 0 {
		max = c.MaxOutputTokens
	}
	toolList := []any{map[string]any{
		"name":         OutputTool,
		"description":  "Give your answer: the value that satisfies the output contract.",
		"input_schema": p.Wrapper(),
	}}
	for _, t := range wire {
		toolList = append(toolList, map[string]any{"name": t.Name, "description": t.Description, "input_schema": t.Parameters})
	}
	body := map[string]any{
		"model":       c.Model,
		"max_tokens":  float64(max),
		"system":      p.System,
		"messages":    messages,
		"temperature": temp,
		"tools":       toolList,
	}
	if len(wire) == 0 {
		body["tool_choice"] = map[string]any{"type": "tool", "name": OutputTool, "disable_parallel_tool_use": true}
	} else {
		body["tool_choice"] = map[string]any{"type": "any", "disable_parallel_tool_use": true}
	}
	if c.TopP != nil {
		body["top_p"] = *c.TopP
	}
	if len(c.Stop) > 0 {
		stops := make([]any, len(c.Stop))
		for i, s := range c.Stop {
			stops[i] = s
		}
		body["stop_sequences"] = stops
	}
	b, err := canon.Encode(body)
	if err != nil {
		return Rendered{}, fmt.Errorf("request body is not canonical JSON: %w", err)
	}
	return Rendered{Body: b, Tools: names}, nil
}
