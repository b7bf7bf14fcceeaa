package canon

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"testing"
)

// realisticDoc builds a receipt-shaped value (cell records, effects with
// prompts and usage, nested outputs) of about the given canonical size.
func realisticDoc(targetBytes int) any {
	cells := map[string]any{}
	effects := []any{}
	for i := 0; ; i++ {
		id := fmt.Sprintf("cell-%03d", i)
		cells[id] = map[string]any{
			"status":  "committed",
			"work":    float64(600 + i*7),
			"outputs": map[string]any{"out": map[string]any{"label": "bug", "score": 0.875, "tags": []any{"ui", "login", float64(i)}}},
		}
		effects = append(effects, map[string]any{
			"requestDigest": fmt.Sprintf("sha256:%064x", i*7919),
			"executor":      "scripted",
			"output":        fmt.Sprintf("The ticket %d describes a login failure after the 2.3 update; route to bug.", i),
			"usage":         map[string]any{"inputTokens": float64(412 + i), "outputTokens": float64(37)},
		})
		doc := map[string]any{
			"contract":       "algal.run.v1",
			"manifestDigest": "sha256:94b94c4f1e559cf9c9d9218e9c2dab6deb0ad804d848c3f275f32d1b7a217e6a",
			"args":           map[string]any{"ticket": "Login fails on Safari — \"invalid token\" after update"},
			"outcome":        "complete",
			"cells":          cells,
			"effects":        effects,
			"work":           map[string]any{"units": float64(1240 + i), "steps": float64(i + 1), "agentCalls": float64(i + 1)},
		}
		if b, _ := Encode(doc); len(b) >= targetBytes {
			return doc
		}
	}
}

func benchDocs() []struct {
	name string
	doc  any
} {
	return []struct {
		name string
		doc  any
	}{{"4KiB", realisticDoc(4 << 10)}, {"256KiB", realisticDoc(256 << 10)}}
}

// BenchmarkDigest measures canonical encode + sha256 (Assay) side by side
// with encoding/json.Marshal + sha256 of the same value (the peer).
func BenchmarkDigest(b *testing.B) {
	for _, d := range benchDocs() {
		size, _ := Encode(d.doc)
		throughput(b, "assay/"+d.name, len(size), func() error {
			_, err := Digest(d.doc)
			return err
		})
		throughput(b, "encodingjson/"+d.name, len(size), func() error {
			out, err := json.Marshal(d.doc)
			_ = sha256.Sum256(out)
			return err
		})
	}
}

// BenchmarkParse compares the strict parser with encoding/json.Unmarshal
// into an interface value.
func BenchmarkParse(b *testing.B) {
	for _, d := range benchDocs() {
		data, _ := Encode(d.doc)
		throughput(b, "assay/"+d.name, len(data), func() error {
			_, err := Parse(data, 0)
			return err
		})
		throughput(b, "encodingjson/"+d.name, len(data), func() error {
			var v any
			return json.Unmarshal(data, &v)
		})
	}
}

// throughput runs op as the sub-benchmark name, each op handling size
// bytes; an error fails the benchmark.
func throughput(b *testing.B, name string, size int, op func() error) {
	b.Run(name, func(b *testing.B) {
		b.SetBytes(int64(size))
		b.ReportAllocs()
		for b.Loop() {
			if err := op(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
