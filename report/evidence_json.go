package report

// EvidenceValue is the JSON form of an evidence check:
// {"ok","store","roots","checked","failed","files":[...],"leftovers":[...]}.
func EvidenceValue(e *Evidence) map[string]any {
	roots := make([]any, len(e.Roots))
	for i, x := range e.Roots {
		roots[i] = x
	}
	files := make([]any, len(e.Files))
	for i, x := range e.Files {
		files[i] = evidenceFileValue(x)
	}
	left := make([]any, len(e.Leftovers))
	for i, l := range e.Leftovers {
		m := map[string]any{"path": l.Path, "kind": l.Kind}
		if l.Status != "" {
			m["status"] = l.Status
		}
		left[i] = m
	}
	return map[string]any{"ok": e.OK(), "store": e.Store, "roots": roots,
		"checked": float64(len(e.Files)), "failed": float64(e.Failed()), "files": files, "leftovers": left}
}

func evidenceFileValue(x EvidenceFile) map[string]any {
	ms := make([]any, len(x.Mismatches))
	for j, m := range x.Mismatches {
		ms[j] = m
	}
	f := map[string]any{"path": x.Path, "kind": x.Kind, "ok": x.OK, "mismatches": ms}
	if x.Digest != "" {
		f["digest"] = x.Digest
	}
	if x.Status != "" {
		f["status"] = x.Status
	}
	return f
}
