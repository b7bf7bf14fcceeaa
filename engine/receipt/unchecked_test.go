package receipt

import (
	"testing"

	"github.com/algal-assay/assay/engine/canon"
)

// A valid receipt reads the same through Unchecked as through the typed
// model; a malformed one reads its readable fields and zero for the rest.
func TestUncheckedReads(t *testing.T) {
	t.Parallel()
	v, _ := canon.Parse([]byte(minimal), 0)
	r, err := Decode(v)
	if err != nil {
		t.Fatal(err)
	}
	u := Unchecked(v.(map[string]any))
	if u.ManifestDigest() != r.ManifestDigest || u.Outcome() != r.Outcome || u.Work() != r.Work {
		t.Errorf("unchecked %s %s %v, typed %s %s %v", u.ManifestDigest(), u.Outcome(), u.Work(), r.ManifestDigest, r.Outcome, r.Work)
	}
	if a, ok := u.Arg("in", "t"); !ok || a != "x" {
		t.Errorf("arg in.t: %v %v", a, ok)
	}
	if got := u.Effects(); len(got) != 2 || got[0].Executor != "m" || got[0].TokensIn != 0 {
		t.Errorf("effects: %+v", got)
	}

	bad, _ := canon.Parse([]byte(`{"manifestDigest":7,"outcome":"complete","work":{"steps":"x","units":-1,"agentCalls":2},
	 "cells":{"a":{"status":"committed","outputs":{"out":1}},"b":{"status":"failed","outputs":{"out":2}}},
	 "effects":[5,{"executor":"m","usage":{"model":"gpt","tokensIn":3,"tokensOut":1.5}}]}`), 0)
	u = Unchecked(bad.(map[string]any))
	if u.ManifestDigest() != "" || u.Outcome() != "complete" || u.Work() != (Work{AgentCalls: 2}) {
		t.Errorf("malformed: %q %q %v", u.ManifestDigest(), u.Outcome(), u.Work())
	}
	if v, ok := u.CommittedOutput("a", "out"); !ok || v != 1.0 {
		t.Errorf("committed output: %v %v", v, ok)
	}
	if _, ok := u.CommittedOutput("b", "out"); ok {
		t.Error("a failed cell's outputs are not committed")
	}
	if got := u.Effects(); len(got) != 1 || got[0] != (EffectUsage{Model: "gpt", Executor: "m", TokensIn: 3}) {
		t.Errorf("malformed effects: %+v", got)
	}
}
