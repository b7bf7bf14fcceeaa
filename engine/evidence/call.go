package evidence

import "github.com/algal-assay/assay/engine/manifest"

// CallResult is what `assay call` prints for a run of a bundle's root m
// stored as ref: {"ok","outputs","receiptDigest","manifestDigest","error"},
// outputs being the interface outputs (InterfaceOutputs), ok whether the
// run completed.
func CallResult(m *manifest.Manifest, rec map[string]any, ref string) (map[string]any, bool) {
	ok := rec["outcome"] == "complete"
	outputs := map[string]any{}
	if m.Interface != nil {
		outputs = InterfaceOutputs(m, rec)
	}
	return map[string]any{"ok": ok, "outputs": outputs, "receiptDigest": ref,
		"manifestDigest": rec["manifestDigest"], "error": rec["failure"]}, ok
}
