package effect

import (
	"testing"

	"github.com/algal-assay/assay/engine/canon"
)

// FuzzParseRecord checks that every admitted record renders back to the
// same canonical bytes, so replay hands receipts back bit for bit.
func FuzzParseRecord(f *testing.F) {
	d, _ := canon.Digest("r")
	f.Add(`{"executor":"scripted","output":null,"requestDigest":"` + d + `"}`)
	f.Add(`{"cached":true,"executor":"e","output":[1,{"a":"b"}],"requestDigest":"` + d + `","usage":{"tokensIn":3}}`)
	f.Add(`{"error":{"code":"EFFECT_SUSPENDED","message":"m"},"executor":"e","requestDigest":"` + d + `","retryable":false,"wake":["h"]}`)
	f.Fuzz(func(t *testing.T, text string) {
		v, err := canon.Parse([]byte(text), 1<<16)
		if err != nil {
			return
		}
		rec, err := ParseRecord(v)
		if err != nil {
			return
		}
		want, _ := canon.Encode(v)
		got, err := canon.Encode(rec.Value())
		if err != nil || string(got) != string(want) {
			t.Fatalf("round trip changed the record:\n in  %s\n out %s", want, got)
		}
		if _, err := ParseRecord(rec.Value()); err != nil {
			t.Fatalf("rendered record rejected: %v", err)
		}
	})
}
