package manifest

import (
	"reflect"
	"testing"

	"github.com/algal-assay/assay/engine/fault"
)

// toolManifest declares an interface over a text, a choice and an optional
// json input.
const toolManifest = `{"contract":"algal.organism.v1","key":"organism:triage","name":"Triage",
 "cells":[{"id":"in","kind":"input","outputs":{"ticket":"text","tier":{"type":"choice","labels":["free","pro"]},
   "meta":{"type":"json","optional":true,"schema":{"type":"object"}}}}],
 "interface":{"inputs":{"ticket":{"cell":"in","port":"ticket"},"tier":{"cell":"in","port":"tier"},
   "meta":{"cell":"in","port":"meta"}},"outputs":{}}}`

func compiledFor(t *testing.T, src string) (*Manifest, *Compiled) {
	t.Helper()
	m, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Compile(m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m, c
}

func TestToolDefinitionDescribesTheInterfaceInputs(t *testing.T) {
	t.Parallel()
	m, c := compiledFor(t, toolManifest)
	schema := map[string]any{"type": "object", "additionalProperties": false,
		"properties": map[string]any{
			"ticket": map[string]any{"type": "string"},
			"tier":   map[string]any{"type": "string", "enum": []any{"free", "pro"}},
			"meta":   map[string]any{"type": "object"},
		},
		"required": []any{"ticket", "tier"}}
	for format, want := range map[string]map[string]any{
		"openai":    {"type": "function", "function": map[string]any{"name": "triage", "description": "Triage", "parameters": schema}},
		"anthropic": {"name": "triage", "description": "Triage", "input_schema": schema},
	} {
		got, err := ToolDefinition(m, c, format)
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %v\nwant %v", format, got, want)
		}
	}
}

func TestToolDefinitionRefusesWhatItCannotDescribe(t *testing.T) {
	t.Parallel()
	m, c := compiledFor(t, toolManifest)
	if _, err := ToolDefinition(m, c, "yaml"); fault.CodeOf(err) != fault.Parse {
		t.Errorf("format yaml: %v, want %s", err, fault.Parse)
	}
	bare, bc := compiledFor(t, `{"contract":"algal.organism.v1","key":"organism:bare","name":"Bare","cells":[{"id":"in","kind":"input","outputs":{"q":"text"}}]}`)
	if _, err := ToolDefinition(bare, bc, "openai"); fault.CodeOf(err) != fault.InterfaceMismatch {
		t.Errorf("no interface: %v, want %s", err, fault.InterfaceMismatch)
	}
}

func TestExplainListsResolvedPortsAndEdges(t *testing.T) {
	t.Parallel()
	m, c := compiledFor(t, toolManifest)
	got := Explain(m, c)
	cells := got["cells"].([]any)
	if len(cells) != 1 || got["manifestDigest"] != m.Digest || !reflect.DeepEqual(got["edges"], []any{}) {
		t.Fatalf("explain = %v", got)
	}
	outputs := cells[0].(map[string]any)["outputs"].(map[string]any)
	want := map[string]any{
		"ticket": map[string]any{"type": "text"},
		"tier":   map[string]any{"type": "choice", "labels": []any{"free", "pro"}},
		"meta":   map[string]any{"type": "json", "optional": true, "schema": map[string]any{"type": "object"}},
	}
	if !reflect.DeepEqual(outputs, want) {
		t.Errorf("outputs:\n got %v\nwant %v", outputs, want)
	}
}

// A many port is an array of its element's schema, in both renderings.
func TestManyPortsAreArrays(t *testing.T) {
	t.Parallel()
	p := Port{Name: "tags", Type: "choice", Labels: []string{"a"}, Many: true}
	if got, want := portSchema(p), map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": []any{"a"}}}; !reflect.DeepEqual(got, want) {
		t.Errorf("schema %v, want %v", got, want)
	}
	if got, want := p.declaration(), map[string]any{"type": "choice", "many": true, "labels": []any{"a"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("declaration %v, want %v", got, want)
	}
}
