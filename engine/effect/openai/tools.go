package openai

import (
	"github.com/algal-assay/assay/engine/effect/live"
	"github.com/algal-assay/assay/engine/manifest"
)

// Tool is one function an agent cell may call (live.Tool).
type Tool = live.Tool

// ToolsOf returns the tool catalog of m's cells (live.ToolsOf).
func ToolsOf(m *manifest.Manifest, sigs map[string]manifest.Signature) func(cellID string) []Tool {
	return live.ToolsOf(m, sigs)
}
