package receipt

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

const d1 = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
const d2 = "sha256:2222222222222222222222222222222222222222222222222222222222222222"

func sample(t *testing.T) map[string]any {
	t.Helper()
	v, err := canon.Parse([]byte(`{"contract":"algal.run.v1","runtime":{"name":"algal","version":"0.1.0"},
	 "manifestDigest":"`+d1+`","manifestKey":"organism:t","args":{"in":{"t":"x"}},"outcome":"complete",
	 "cells":{"in":{"status":"committed","work":100,"outputs":{"t":"x"}},
	  "route":{"status":"committed","work":612,"effectDigest":"`+d2+`","outputs":{"out":"bug"},"shadowOut":"a"},
	  "skip":{"status":"skipped","work":0},
	  "loop":{"status":"committed","work":900,"rounds":2,"via":"bundles"},
	  "bad":{"status":"failed","work":100,"failure":{"code":"FN_FAILED","message":"m"},"slot":{"name":"s","mode":"read"}}},
	 "effects":[{"requestDigest":"`+d2+`","executor":"scripted","output":"bug"},
	  {"requestDigest":"`+d2+`","executor":"unbound","retryable":false,"error":{"code":"EFFECT_UNBOUND","message":"no"}}],
	 "events":[{"seq":0,"kind":"run.start","digest":"`+d1+`"},{"seq":1,"kind":"effect","path":"route","digest":"`+d2+`"},
	  {"seq":2,"kind":"run.end","outcome":"complete"}],
	 "work":{"steps":4,"agentCalls":2,"units":1712}}`), 0)
	if err != nil {
		t.Fatal(err)
	}
	r := v.(map[string]any)
	if _, err := Seal(r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestValidateAndCheck(t *testing.T) {
	t.Parallel()
	r := sample(t)
	if err := Check(r); err != nil {
		t.Fatalf("valid receipt rejected: %v", err)
	}
	d, _ := Digest(r)
	body := map[string]any{}
	for k, v := range r {
		if k != "digest" {
			body[k] = v
		}
	}
	if want, _ := canon.Digest(body); d != want || r["digest"] != want {
		t.Fatal("digest must cover the canonical receipt minus itself")
	}
	bad := []struct {
		name string
		edit func(r map[string]any)
		msg  string
	}{
		{"unknown top key", func(r map[string]any) { r["model"] = "x" }, `unknown key "model"`},
		{"unknown cell key", func(r map[string]any) { cellOf(r, "in")["extra"] = 1.0 }, `unknown key "extra"`},
		{"skipped with work", func(r map[string]any) { cellOf(r, "skip")["work"] = 1.0 }, "skipped cell spends no work"},
		{"skipped with outputs", func(r map[string]any) { cellOf(r, "skip")["outputs"] = map[string]any{"a": 1.0} }, `unknown key "outputs"`},
		{"failed without failure", func(r map[string]any) { delete(cellOf(r, "bad"), "failure") }, "records its failure"},
		{"failed with effectDigest", func(r map[string]any) { cellOf(r, "bad")["effectDigest"] = d1 }, `unknown key "effectDigest"`},
		{"rounds of one", func(r map[string]any) { cellOf(r, "loop")["rounds"] = 1.0 }, "more than one round"},
		{"unknown code", func(r map[string]any) {
			cellOf(r, "bad")["failure"] = map[string]any{"code": "NOPE", "message": "m"}
		}, "unknown failure code"},
		{"output and error", func(r map[string]any) { effectOf(r, 1)["output"] = 1.0 }, "exactly one of output and error"},
		{"cached false", func(r map[string]any) { effectOf(r, 0)["cached"] = false }, "cached may only be true"},
		{"retryable true", func(r map[string]any) { effectOf(r, 1)["retryable"] = true }, "retryable may only be false"},
		{"event seq", func(r map[string]any) { r["events"].([]any)[1].(map[string]any)["seq"] = 5.0 }, "out of order"},
		{"work fraction", func(r map[string]any) { r["work"].(map[string]any)["units"] = 1.5 }, "safe integer"},
		{"failed outcome without failure", func(r map[string]any) { r["outcome"] = "failed" }, "must record its failure"},
		{"bad outcome", func(r map[string]any) { r["outcome"] = "done" }, "unknown outcome"},
		{"bad digest", func(r map[string]any) { r["manifestDigest"] = "sha256:abc" }, "sha256 digest"},
		{"args not ports", func(r map[string]any) { r["args"] = map[string]any{"in": "x"} }, "object of ports"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			r := sample(t)
			c.edit(r)
			err := Validate(r)
			if err == nil || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("want %q, got %v", c.msg, err)
			}
			if err.(*fault.Error).ErrorCode() != fault.Parse {
				t.Fatal("validation errors are PARSE_FAILED")
			}
		})
	}
	r = sample(t)
	r["outcome"] = "stuck"
	if err := Check(r); err == nil || err.(*fault.Error).Code != fault.DigestMismatch {
		t.Fatalf("edited content must fail the digest check: %v", err)
	}
}

func cellOf(r map[string]any, p string) map[string]any {
	return r["cells"].(map[string]any)[p].(map[string]any)
}

func effectOf(r map[string]any, i int) map[string]any {
	return r["effects"].([]any)[i].(map[string]any)
}

func TestDiffMessages(t *testing.T) {
	t.Parallel()
	a := sample(t)
	if mm := Diff(a, sample(t)); len(mm) != 0 {
		t.Fatalf("identical receipts differ: %v", mm)
	}
	b := sample(t)
	b["outcome"] = "failed"
	b["failure"] = map[string]any{"code": "STUCK", "message": "m", "path": "x"}
	delete(b["cells"].(map[string]any), "skip")
	cellOf(b, "in")["status"] = "failed"
	cellOf(b, "route")["outputs"] = map[string]any{"out": "feature"}
	cellOf(b, "route")["work"] = 700.0
	delete(cellOf(b, "route"), "shadowOut")
	delete(cellOf(b, "loop"), "rounds")
	delete(cellOf(b, "loop"), "via")
	effectOf(b, 0)["executor"] = "other"
	effectOf(b, 1)["error"] = map[string]any{"code": "EFFECT_FAILED", "message": "x"}
	b["work"].(map[string]any)["units"] = 1180.0
	b["events"] = b["events"].([]any)[:2]
	_, _ = Seal(b)
	got := Diff(a, b)
	wantPrefix := []string{
		"outcome: complete vs failed",
		"cells: bad,in,loop,route,skip vs bad,in,loop,route",
		"cell in: status committed vs failed",
		"cell loop: rounds 2 vs undefined",
		"cell loop: via bundles vs local",
		"cell route: outputs differ",
		"cell route: work 612 vs 700",
		"cell route: shadowOut differs",
		"effect 0: executor scripted vs other",
		"effect 1: error differs",
		"events: event logs differ",
		"work.units: 1712 vs 1180",
		"failure presence differs",
	}
	// Named checks fired, so the native diff adds no catch-all.
	if !reflect.DeepEqual(got, wantPrefix) {
		t.Fatalf("diff:\n%s", strings.Join(got, "\n"))
	}
	// With only unnamed differences the catch-all is followed by leaf
	// lines naming every differing field.
	b2 := sample(t)
	b2["manifestKey"] = "organism:other"
	effectOf(b2, 0)["cached"] = true
	_, _ = Seal(b2)
	got = Diff(a, b2)
	if got[0] != "receipt records differ" {
		t.Fatalf("diff: %v", got)
	}
	for _, leaf := range []string{"manifestKey differs", "digest differs",
		"effects[0].cached differs (absent from the recorded receipt)"} {
		found := false
		for _, m := range got {
			if m == leaf {
				found = true
			}
		}
		if !found {
			t.Errorf("missing %q in %v", leaf, got)
		}
	}
	c := sample(t)
	c["failure"] = map[string]any{"code": "A", "message": "", "path": ""}
	d := sample(t)
	d["failure"] = map[string]any{"code": "B", "message": "", "path": ""}
	if mm := Diff(c, d); mm[0] != "failure.code: A vs B" {
		t.Fatalf("failure code: %v", mm)
	}
}

func TestParseRejectsDuplicatesAndTrailing(t *testing.T) {
	t.Parallel()
	b, _ := canon.Encode(sample(t))
	if _, err := Parse(b); err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(append(b, 'x')); err == nil {
		t.Fatal("trailing data accepted")
	}
	dup := strings.Replace(string(b), `{"args"`, `{"args":{},"args"`, 1)
	if _, err := Parse([]byte(dup)); err == nil {
		t.Fatal("duplicate key accepted")
	}
}

// SealEncoded seals as Seal does and returns exactly the canonical bytes
// of the sealed receipt, whatever digest the receipt held before.
func TestSealEncodedIsSealThenEncode(t *testing.T) {
	t.Parallel()
	r := sample(t)
	r["digest"] = "sha256:" + strings.Repeat("0", 64) // stale: replaced
	d, b, err := SealEncoded(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(r); err != nil || r["digest"] != d {
		t.Fatalf("sealed receipt does not check: %v (%v vs %s)", err, r["digest"], d)
	}
	want, _ := canon.Encode(r)
	if !bytes.Equal(b, want) {
		t.Fatalf("bytes differ from the sealed receipt's encoding:\n%s\n%s", b, want)
	}
	if ref, _ := StorageRef(r); canon.DigestBytes(b) != ref {
		t.Fatal("the bytes do not hash to the storage reference")
	}
}
