package openai

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/golden"
)

func budget() map[string]any {
	return map[string]any{"maxContextBytes": float64(65536), "maxOutputBytes": float64(1000)}
}

// renderCases cover each part of the rendering rules: prompt and view,
// each output contract, decide questions and the agent tool loop.
func renderCases() []struct {
	name  string
	req   effect.Request
	tools []Tool
	cfg   Config
} {
	temp := 0.7
	return []struct {
		name  string
		req   effect.Request
		tools []Tool
		cfg   Config
	}{
		{"classifier-choice", effect.Request{
			"contract": effect.EffectContract, "cellId": "route", "kind": "classifier",
			"prompt":  "Route the ticket to a queue.",
			"context": map[string]any{"inputs": map[string]any{"ticket": "I was charged twice"}, "turn": float64(0), "note": "billing wins ties"},
			"output":  map[string]any{"kind": "choice", "labels": []any{"billing", "bug", "other"}},
			"budget":  budget(),
		}, nil, Config{Model: "small-1"}},
		{"agent-text-view", effect.Request{
			"contract": effect.EffectContract, "cellId": "draft", "kind": "agent",
			"prompt": "Draft a reply.",
			"context": map[string]any{"inputs": map[string]any{"tag": "billing"}, "turn": float64(0),
				"cells": map[string]any{"route": map[string]any{"status": "committed", "outputs": map[string]any{"out": "billing"}}},
				"graph": map[string]any{"edges": []any{map[string]any{"from": "route.out", "to": "draft.tag"}}}},
			"output": map[string]any{"kind": "text"},
			"budget": budget(),
			"route":  map[string]any{"provider": "frontier"},
		}, nil, Config{Model: "big-2", Temperature: &temp, MaxOutputTokens: 300}},
		{"agent-json-strict", effect.Request{
			"contract": effect.EffectContract, "cellId": "extract", "kind": "agent", "prompt": "",
			"context": map[string]any{"inputs": map[string]any{"text": "Ada, 36"}, "turn": float64(0)},
			"output": map[string]any{"kind": "json", "schema": map[string]any{
				"type": "object", "additionalProperties": false, "required": []any{"age", "name"},
				"properties": map[string]any{"name": map[string]any{"type": "string"}, "age": map[string]any{"type": "integer"}}}},
			"budget": budget(),
		}, nil, Config{Model: "small-1"}},
		{"agent-json-loose-object-mode", effect.Request{
			"contract": effect.EffectContract, "cellId": "extract", "kind": "agent", "prompt": "Extract.",
			"context": map[string]any{"inputs": map[string]any{}, "turn": float64(0)},
			"output":  map[string]any{"kind": "json", "schema": map[string]any{"type": "object"}},
			"budget":  budget(),
		}, nil, Config{Model: "small-1", ResponseFormat: FormatJSONObject}},
		{"decide-questions", effect.Request{
			"contract": effect.EffectContract, "cellId": "judge", "kind": "decide", "prompt": "Is it urgent?",
			"context": map[string]any{"inputs": map[string]any{"ticket": "server down"}, "turn": float64(0)},
			"output": map[string]any{"kind": "json", "schema": map[string]any{"type": "object", "required": []any{"answers"},
				"properties": map[string]any{"answers": map[string]any{"type": "object", "required": []any{"urgent"},
					"properties": map[string]any{"urgent": map[string]any{"type": "object", "required": []any{"noul"},
						"properties": map[string]any{"type": map[string]any{"type": "string"}, "noul": map[string]any{"type": "number"}}}}}}}},
			"budget":    budget(),
			"questions": map[string]any{"urgent": map[string]any{"type": "noul", "instructions": "Is the ticket urgent?"}},
		}, []Tool{{Name: "ignored.v1"}}, Config{Model: "judge-1"}},
		{"agent-tool-loop", effect.Request{
			"contract": effect.EffectContract, "cellId": "agent", "kind": "agent", "prompt": "Pick a number, then report it.",
			"context": map[string]any{"inputs": map[string]any{}, "turn": float64(1),
				"toolLog": []any{map[string]any{"fn": "pick.v1", "inputs": map[string]any{"max": float64(9)}, "output": map[string]any{"n": float64(4)}}}},
			"output": map[string]any{"kind": "text"},
			"budget": budget(),
		}, []Tool{
			{Name: "pick.v1", Parameters: map[string]any{"type": "object", "properties": map[string]any{"max": map[string]any{"type": "number"}}, "required": []any{"max"}}},
			{Name: "memory.query.v1"},
		}, Config{Model: "small-1", ResponseFormat: FormatPrompt}},
	}
}

func TestRenderGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range renderCases() {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Render(tc.req, tc.tools, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			again, err := Render(tc.req, tc.tools, tc.cfg)
			if err != nil || !bytes.Equal(r.Body, again.Body) {
				t.Fatalf("Render is not deterministic")
			}
			var pretty bytes.Buffer
			if err := json.Indent(&pretty, r.Body, "", "  "); err != nil {
				t.Fatal(err)
			}
			pretty.WriteByte('\n')
			golden.Check(t, filepath.Join("testdata", "render", tc.name+".json"), pretty.Bytes())
		})
	}
}

func TestRenderStrictOnlyForStrictSchemas(t *testing.T) {
	t.Parallel()
	cases := renderCases()
	strictOf := func(i int) any {
		r, err := Render(cases[i].req, cases[i].tools, cases[i].cfg)
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatal(err)
		}
		rf, _ := body["response_format"].(map[string]any)
		js, _ := rf["json_schema"].(map[string]any)
		return js["strict"]
	}
	if got := strictOf(0); got != true {
		t.Errorf("choice labels: strict = %v, want true", got)
	}
	if got := strictOf(2); got != true {
		t.Errorf("closed object schema: strict = %v, want true", got)
	}
	if got := strictOf(4); got != false {
		t.Errorf("decide answer schema (open objects): strict = %v, want false", got)
	}
}

func TestRenderRejectsCollidingToolNames(t *testing.T) {
	t.Parallel()
	req := renderCases()[5].req
	_, err := Render(req, []Tool{{Name: "a.b"}, {Name: "a_b"}}, Config{Model: "m"})
	if err == nil {
		t.Fatal("two tools with one wire name were rendered")
	}
}

func TestConfigDigestLeavesOutSecretsAndTransport(t *testing.T) {
	t.Parallel()
	base := Config{Model: "m", Headers: map[string]string{"X-Team": "secret-team-value"}}
	d := base.Digest()
	same := []Config{
		{Model: "m", Headers: map[string]string{"X-Team": "other"}, TimeoutMs: 5, MaxConcurrency: 9, RequestsPerMinute: 3, MaxRetries: 5, APIKeyEnv: "OTHER_KEY"},
	}
	for _, c := range same {
		if c.Digest() != d {
			t.Errorf("digest moved with transport-only or secret fields: %+v", c)
		}
	}
	temp := 0.5
	differ := []Config{
		{Model: "m2", Headers: base.Headers},
		{Model: "m", Headers: base.Headers, Temperature: &temp},
		{Model: "m", Headers: base.Headers, MaxOutputTokens: 10},
		{Model: "m", Headers: base.Headers, BaseURL: "http://127.0.0.1:1/v1"},
		{Model: "m", Headers: base.Headers, ResponseFormat: FormatPrompt},
		{Model: "m"},
	}
	for _, c := range differ {
		if c.Digest() == d {
			t.Errorf("digest did not move with an answer-deciding field: %+v", c)
		}
	}
	v, _ := json.Marshal(base.Value())
	if bytes.Contains(v, []byte("secret-team-value")) {
		t.Errorf("configuration value carries a header value: %s", v)
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	bad := []Config{
		{},
		{Model: "m", BaseURL: "http://example.com/v1"},
		{Model: "m", BaseURL: "https://user:pw@example.com/v1"},
		{Model: "m", BaseURL: "https://example.com/v1?key=x"},
		{Model: "m", APIKeyEnv: "NOT-A-NAME"},
		{Model: "m", MaxConcurrency: 100000},
		{Model: "m", Headers: map[string]string{"Authorization": "Bearer x"}},
		{Model: "m", ResponseFormat: "xml"},
	}
	for _, c := range bad {
		if c.Validate() == nil {
			t.Errorf("accepted %+v", c)
		}
	}
	good := []Config{{Model: "m"}, {Model: "m", BaseURL: "http://localhost:11434/v1"}, {Model: "m", BaseURL: "https://api.example.com/openai/v1"}}
	for _, c := range good {
		if err := c.Validate(); err != nil {
			t.Errorf("rejected %+v: %v", c, err)
		}
	}
}
