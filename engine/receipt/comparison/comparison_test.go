package comparison

import (
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

func enc(v any) string {
	b, err := canon.Encode(v)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

// FuzzParse: the parser never panics, and whatever it accepts
// renders to a record that parses back to itself.
func FuzzParse(f *testing.F) {
	zero := "sha256:" + strings.Repeat("0", 64)
	f.Add(`{"contract":"algal.replay-comparison.v1","receipt":"` + zero + `","manifest":"` + zero + `","supplied":"` + zero +
		`","revision":null,"args":"` + zero + `","verdict":"could-not-replay","prefix":[],"prefixTruncated":false,"added":[],` +
		`"addedTruncated":false,"divergence":null,"outcomes":{"original":"complete","revised":null},"effectsMatch":null,` +
		`"revisedReceipt":null,"reason":{"code":"manifest-invalid","detail":"x"}}`)
	f.Add(`{"contract":"algal.replay-comparison.v1","verdict":"diverged","divergence":{"kind":"cell","path":"a","original":null,"revised":{"status":"committed","digest":"` + zero + `"}}}`)
	f.Fuzz(func(t *testing.T, s string) {
		v, err := canon.Parse([]byte(s), 0)
		if err != nil {
			return
		}
		c, err := Parse(v)
		if err != nil {
			return
		}
		again, err := Parse(c.Value())
		if err != nil || enc(again.Value()) != enc(c.Value()) {
			t.Fatalf("accepted record does not round-trip (%v):\n%s\n%s", err, enc(v), enc(c.Value()))
		}
	})
}

// couldNotRecord is a could-not-replay record of a revision that did not
// admit, as the replay writes one.
func couldNotRecord() map[string]any {
	zero := "sha256:" + strings.Repeat("0", 64)
	return map[string]any{"contract": Contract, "receipt": zero, "manifest": zero, "supplied": zero, "revision": nil,
		"args": zero, "verdict": VerdictCouldNotReplay, "prefix": []any{}, "prefixTruncated": false, "added": []any{},
		"addedTruncated": false, "divergence": nil, "outcomes": map[string]any{"original": "complete", "revised": nil},
		"effectsMatch": nil, "revisedReceipt": nil, "reason": map[string]any{"code": ReasonManifestInvalid, "detail": "x"}}
}

func TestParseRoundTrips(t *testing.T) {
	t.Parallel()
	v := couldNotRecord()
	c, err := Parse(v)
	if err != nil {
		t.Fatal(err)
	}
	if c.Verdict != VerdictCouldNotReplay || c.Reason == nil || c.Reason.Code != ReasonManifestInvalid || *c.Reason.Detail != "x" ||
		c.Revision != "" || c.EffectsMatch != nil || c.RevisedOutcome != "" {
		t.Fatalf("fields: %+v", c)
	}
	if enc(c.Value()) != enc(v) {
		t.Fatalf("does not round-trip:\n%s\n%s", enc(c.Value()), enc(v))
	}
}

func TestParseRefusesIncoherentVerdicts(t *testing.T) {
	t.Parallel()
	cases := map[string]func(v map[string]any){
		"no reason":             func(v map[string]any) { v["reason"] = nil },
		"identical, no receipt": func(v map[string]any) { v["verdict"] = VerdictIdentical },
		"diverged, no receipt":  func(v map[string]any) { v["verdict"] = VerdictDiverged; v["reason"] = nil },
		"missing key":           func(v map[string]any) { delete(v, "added") },
		"reason path":           func(v map[string]any) { v["reason"] = map[string]any{"code": ReasonMissingEffect} },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			v := couldNotRecord()
			mutate(v)
			if _, err := Parse(v); fault.CodeOf(err) != fault.Parse {
				t.Fatalf("want %s, got %v", fault.Parse, err)
			}
		})
	}
}
