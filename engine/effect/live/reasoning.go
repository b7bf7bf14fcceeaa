package live

import "strings"

// reasoningFamilies is the one table of model families that reason
// before they answer (OpenAI's o-series and GPT-5). Their chat API
// rejects max_tokens (it takes max_completion_tokens, which also covers
// the hidden reasoning tokens) and any temperature or top_p but the
// default, and accepts reasoning_effort. A model is in a family when its
// name is the family or starts with it and "-" or "." (o3-mini,
// gpt-5.1, gpt-5-mini-2025-08-07); a gateway's "vendor/" prefix is
// ignored. A backend's `reasoning:` setting overrides the table either
// way (an Azure deployment name says nothing about its model).
var reasoningFamilies = []string{"o1", "o3", "o4", "gpt-5"}

// Reasoning reports whether model belongs to a reasoning family.
func Reasoning(model string) bool {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	for _, f := range reasoningFamilies {
		if m == f || strings.HasPrefix(m, f+"-") || strings.HasPrefix(m, f+".") {
			return true
		}
	}
	return false
}

// Reasoning efforts a backend may configure.
var ReasoningEfforts = []string{"minimal", "low", "medium", "high"}
