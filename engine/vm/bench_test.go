package vm

import (
	"context"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/store"
)

// The benchmark organism is the six-cell triage: an input, one scripted
// classifier effect, three guarded tag fns and a coalesce.
const benchArgs = `{"ticket":{"text":"The export button crashes the app when the report has more than 500 rows."}}`

func benchStore(b *testing.B, kind string) store.Store {
	if kind == "file" {
		st, err := store.OpenFileStore(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		return st
	}
	return store.NewMemStore()
}

func benchRun(b *testing.B, kind string) {
	m := mustManifest(b, triageJSON)
	st := benchStore(b, kind)
	if _, err := st.Put(store.Manifests, m.Value); err != nil {
		b.Fatal(err)
	}
	host := scriptedHost(b, st, `{"route":"bug"}`)
	args := obj(b, benchArgs)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rec, err := Run(m, args, host)
		if err != nil || rec["outcome"] != "complete" {
			b.Fatal(err, rec["outcome"])
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "runs/s")
}

func benchVerify(b *testing.B, kind string) {
	m := mustManifest(b, triageJSON)
	st := benchStore(b, kind)
	if _, err := st.Put(store.Manifests, m.Value); err != nil {
		b.Fatal(err)
	}
	rec, err := Run(m, obj(b, benchArgs), scriptedHost(b, st, `{"route":"bug"}`))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rep, err := Verify(rec, m, VerifyOptions{Store: st})
		if err != nil || !rep.OK {
			b.Fatal(err, rep.Mismatches)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "verifications/s")
}

func BenchmarkRunMem(b *testing.B)     { benchRun(b, "mem") }
func BenchmarkRunFile(b *testing.B)    { benchRun(b, "file") }
func BenchmarkVerifyMem(b *testing.B)  { benchVerify(b, "mem") }
func BenchmarkVerifyFile(b *testing.B) { benchVerify(b, "file") }

// BenchmarkFloor is the cost verification is measured against: parse,
// canonicalize and hash the same receipt bytes.
func BenchmarkFloor(b *testing.B) {
	m := mustManifest(b, triageJSON)
	rec, err := Run(m, obj(b, benchArgs), scriptedHost(b, store.NewMemStore(), `{"route":"bug"}`))
	if err != nil {
		b.Fatal(err)
	}
	data, _ := canon.Encode(rec)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v, err := canon.Parse(data, 0)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := canon.Digest(v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyStored is what a verification does per receipt reference
// beyond the case's own claims: read the stored receipt through a
// workbench over the file store (bytes checked against the reference and
// parsed) and replay it, with a fresh memo each time so nothing is
// answered from it. BenchmarkFloor is its yardstick (issue 31: under 2x).
func BenchmarkVerifyStored(b *testing.B) {
	m := mustManifest(b, triageJSON)
	wb, err := NewWorkbench(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	if _, err := wb.Store.Put(store.Manifests, m.Value); err != nil {
		b.Fatal(err)
	}
	rec, err := Run(m, obj(b, benchArgs), scriptedHost(b, wb.Store, `{"route":"bug"}`))
	if err != nil {
		b.Fatal(err)
	}
	ref, err := wb.Store.Put(store.Runs, rec)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		wb.Verified = &VerifiedReceipts{}
		got, err := wb.Receipt(ref)
		if err != nil {
			b.Fatal(err)
		}
		diffs, err := wb.ReplayStored(ctx, ref, got, m)
		if err != nil || len(diffs) > 0 {
			b.Fatal(err, diffs)
		}
	}
}
