package workload

import (
	"path/filepath"
	"reflect"
	"runtime"
	"testing"

	"github.com/algal-assay/assay/engine/heaptest"
	"github.com/algal-assay/assay/harness/synth"
)

// A released workload answers what a run in parts still asks of its
// cases (count, ids, parts, run count, each part's declared calls)
// exactly as the loaded one does, for workloads in one part and in many,
// with cases that declare no responses, queues and per-repeat values.
func TestReleaseAnswersAsLoaded(t *testing.T) {
	t.Parallel()
	triage := filepath.Join("..", "..", "fixtures", "triage")
	parts, err := synth.Write(t.TempDir(), synth.Spec{Systems: 9, Cases: 600, Triage: triage})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path string }{
		{"one part", suitePath("ticket-triage.bench.yaml")},
		{"invoices", suitePath("invoice-extraction.bench.yaml")},
		{"in parts", parts},
		{"per repeat", writeFlaky(t, "")},
	} {
		w := loadWorkload(t, tc.path)
		r := w.Release()
		if r.Cases != nil || len(w.Cases) == 0 {
			t.Fatalf("%s: released %d cases, loaded %d", tc.name, len(r.Cases), len(w.Cases))
		}
		if r.NumCases() != len(w.Cases) || r.InParts() != w.InParts() || !reflect.DeepEqual(r.Parts(), w.Parts()) {
			t.Fatalf("%s: released %d cases, parts %v; loaded %d, %v", tc.name, r.NumCases(), r.Parts(), len(w.Cases), w.Parts())
		}
		if n, shape := r.RunCount(); n == 0 {
			t.Fatalf("%s: run count %d (%s)", tc.name, n, shape)
		} else if wn, wshape := w.RunCount(); n != wn || shape != wshape {
			t.Fatalf("%s: run count %d (%s) released, %d (%s) loaded", tc.name, n, shape, wn, wshape)
		}
		for i, c := range w.Cases {
			if r.CaseID(i) != c.ID || w.CaseID(i) != c.ID {
				t.Fatalf("%s: case %d is %q released, %q loaded, want %q", tc.name, i, r.CaseID(i), w.CaseID(i), c.ID)
			}
		}
		for _, p := range w.Parts() {
			want := DeclaredCalls(w.PartView(p), 1)
			if got := r.PartDeclared(p); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: %s declares %v released, %v loaded", tc.name, p.Name(), got, want)
			}
			if got := w.PartDeclared(p); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: %s declares %v loaded", tc.name, p.Name(), got)
			}
		}
	}
}

// A released workload holds a few bytes a case, not the hundreds its
// cases take (issue 31: a run in parts kept about 230 bytes a case).
// Measures the live heap, so not parallel.
func TestReleasedCasesStayFlat(t *testing.T) {
	const cases, perCase = 8000, 32
	path, err := synth.Write(t.TempDir(), synth.Spec{Systems: 8, Cases: cases, Triage: filepath.Join("..", "..", "fixtures", "triage")})
	if err != nil {
		t.Fatal(err)
	}
	w := loadWorkload(t, path)
	before := heaptest.Live()
	r := w.Release()
	after := heaptest.Live()
	runtime.KeepAlive(w)
	runtime.KeepAlive(r)
	grown := int64(after) - int64(before)
	t.Logf("released: %d bytes live, %d per case", grown, grown/cases)
	if grown > cases*perCase {
		t.Errorf("the released workload holds %d bytes live, %d per case; want at most %d per case", grown, grown/cases, perCase)
	}
}
