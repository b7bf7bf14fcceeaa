package receipt

import (
	"testing"

	"github.com/algal-assay/assay/engine/canon"
)

const minimal = `{"contract":"algal.run.v1","runtime":{"name":"algal","version":"0.1.0"},
 "manifestDigest":"sha256:1111111111111111111111111111111111111111111111111111111111111111",
 "manifestKey":"organism:x","args":{"in":{"t":"x"}},"outcome":"complete",
 "cells":{"a":{"status":"committed","work":100,"outputs":{"out":null},"effectDigest":"sha256:2222222222222222222222222222222222222222222222222222222222222222",
   "toolCalls":[{"fn":"pick.v1","inputs":{},"output":null}],"shadowOut":null,"via":"","rounds":2,"items":1,"slot":{"name":"s","mode":"read"}},
  "b":{"status":"failed","work":100,"failure":{"code":"FN_FAILED","message":""}},"c":{"status":"skipped","work":0}},
 "effects":[{"requestDigest":"sha256:2222222222222222222222222222222222222222222222222222222222222222","executor":"m","output":null,
   "usage":{"model":"","tokensIn":0},"cached":true,"retryable":false,"configurationDigest":"sha256:3333333333333333333333333333333333333333333333333333333333333333"},
  {"requestDigest":"sha256:2222222222222222222222222222222222222222222222222222222222222222","executor":"m","error":{"code":"EFFECT_SUSPENDED","message":"wait"},"wake":[]}],
 "events":[{"seq":0,"kind":"run.start","path":"","outcome":""},{"seq":1,"kind":"effect","path":"a","digest":"sha256:2222222222222222222222222222222222222222222222222222222222222222"}],
 "work":{"steps":0,"agentCalls":0,"units":0},"failure":{"code":"FN_FAILED","message":"","path":""},
 "digest":"sha256:4444444444444444444444444444444444444444444444444444444444444444"}`

// Every optional field, each at a value a lossy model would drop or
// rewrite (empty text, null, zero, an empty list), survives the round trip.
func TestModelRoundTripEveryField(t *testing.T) {
	t.Parallel()
	v, err := canon.Parse([]byte(minimal), 0)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Decode(v)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := canon.Encode(v)
	got, err := canon.Encode(r.Value())
	if err != nil || string(got) != string(want) {
		t.Fatalf("round trip:\n got %s\nwant %s", got, want)
	}
	if out, ok := r.CommittedOutput("a", "out"); !ok || out != nil {
		t.Errorf("committed output: %v %v", out, ok)
	}
	if _, ok := r.CommittedOutput("b", "out"); ok {
		t.Error("a failed cell has no committed output")
	}
}

// Decode rejects what Validate rejects; FromValue reports an effect record
// the effect contract refuses but still returns the receipt's identity.
func TestDecodeRejects(t *testing.T) {
	t.Parallel()
	v, _ := canon.Parse([]byte(minimal), 0)
	m := v.(map[string]any)
	m["outcome"] = "done"
	if _, err := Decode(m); err == nil {
		t.Fatal("an unknown outcome must not decode")
	}
	m["outcome"] = "complete"
	m["effects"].([]any)[0].(map[string]any)["executor"] = ""
	if err := Validate(m); err != nil {
		t.Fatalf("an empty executor is structurally valid: %v", err)
	}
	r, err := FromValue(m)
	if err == nil || r == nil || r.ManifestDigest == "" || r.Effects != nil {
		t.Fatalf("empty executor: %v, %+v", err, r)
	}
}
