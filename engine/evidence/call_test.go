package evidence

import (
	"testing"

	"github.com/algal-assay/assay/engine/manifest"
)

func TestCallResultSaysWhetherTheRunCompleted(t *testing.T) {
	t.Parallel()
	m := &manifest.Manifest{}
	failure := map[string]any{"code": "X"}
	v, ok := CallResult(m, map[string]any{"outcome": "failed", "manifestDigest": "sha256:m", "failure": failure}, "sha256:r")
	if ok || v["ok"] != false || v["receiptDigest"] != "sha256:r" || v["manifestDigest"] != "sha256:m" || v["error"] == nil {
		t.Errorf("a failed run: %v", v)
	}
	if outs := v["outputs"].(map[string]any); len(outs) != 0 {
		t.Errorf("outputs without an interface: %v", outs)
	}
	if _, ok := CallResult(m, map[string]any{"outcome": "complete"}, ""); !ok {
		t.Error("a complete run is not ok")
	}
}
