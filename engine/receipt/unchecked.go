package receipt

import "math"

// Unchecked reads fields of a receipt value that has not been validated:
// a stored receipt a report claims to describe. The report verifiers
// (bench, foundry) compare each claimed field with it and name every
// disagreement, and only then replay it; a tampered receipt must still be
// read field by field, so these accessors do not decode the whole receipt
// (Decode would refuse it at its first structural error). A missing or
// mistyped field reads as its zero value, which never equals a valid claim.
// A receipt known to be valid (one the VM just produced) reads the same
// through either this or the typed model.
type Unchecked map[string]any

// ManifestDigest is the manifest the run ran ("" when absent).
func (u Unchecked) ManifestDigest() string { s, _ := u["manifestDigest"].(string); return s }

// Outcome is the run outcome ("" when absent).
func (u Unchecked) Outcome() string { s, _ := u["outcome"].(string); return s }

// Args is the recorded args value as it is (nil when absent), for a
// canonical comparison with claimed args.
func (u Unchecked) Args() any { return u["args"] }

// Arg is one recorded input port value of a cell.
func (u Unchecked) Arg(cell, port string) (any, bool) {
	args, _ := u["args"].(map[string]any)
	ports, _ := args[cell].(map[string]any)
	v, ok := ports[port]
	return v, ok
}

// CommittedOutput is the committed value of a cell's output port.
func (u Unchecked) CommittedOutput(path, port string) (any, bool) {
	cells, _ := u["cells"].(map[string]any)
	rec, _ := cells[path].(map[string]any)
	if rec == nil || rec["status"] != StatusCommitted {
		return nil, false
	}
	outputs, _ := rec["outputs"].(map[string]any)
	v, ok := outputs[port]
	return v, ok
}

// Work is the work ledger; a field that is not a count reads as 0.
func (u Unchecked) Work() Work {
	w, _ := u["work"].(map[string]any)
	return Work{Steps: count(w["steps"]), AgentCalls: count(w["agentCalls"]), Units: count(w["units"])}
}

// EffectUsage is what one effect record says about its cost.
type EffectUsage struct {
	Model, Executor     string
	TokensIn, TokensOut int
	// TokensUnknown: an answer (not a failure) whose usage names the
	// model that served it but leaves a count out, as a live server that
	// omits usage does; its counts are then unknown, not 0. A record with
	// no usage at all (scripted, command) claims nothing, and a failure
	// carries no usage.
	TokensUnknown bool
}

// Effects lists what each effect record says about its cost, in order;
// an entry that is not an object is left out.
func (u Unchecked) Effects() []EffectUsage {
	list, _ := u["effects"].([]any)
	out := make([]EffectUsage, 0, len(list))
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		usage, _ := m["usage"].(map[string]any)
		var eu EffectUsage
		eu.Model, _ = usage["model"].(string)
		eu.Executor, _ = m["executor"].(string)
		eu.TokensIn, eu.TokensOut = count(usage["tokensIn"]), count(usage["tokensOut"])
		if _, named := usage["model"].(string); named && (m["error"] == nil || m["output"] != nil) {
			_, in := usage["tokensIn"]
			_, out := usage["tokensOut"]
			eu.TokensUnknown = !in || !out
		}
		out = append(out, eu)
	}
	return out
}

// count reads a non-negative safe integer, zero for anything else.
func count(v any) int {
	f, _ := v.(float64)
	if f < 0 || f != math.Trunc(f) || f > MaxSafeInteger {
		return 0
	}
	return int(f)
}
