package harness

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/harness/parts"
	"github.com/algal-assay/assay/harness/synth"
	"github.com/algal-assay/assay/harness/workload"
)

// BenchmarkLoad loads a synthetic 3-system bench workload whose cases are
// JSONL files (harness/synth), as `assay run` and `assay ci verify` do
// before anything else, with the JSONL lines' nodes built without yaml.v3
// (lines=json, jsonline.go) and, side by side, every line read by yaml.v3
// (lines=yaml, as before):
//
//	go test ./harness/ -run '^$' -bench BenchmarkLoad -benchmem -count 6 > load.txt
//	go run golang.org/x/perf/cmd/benchstat@latest -col /lines load.txt
func BenchmarkLoad(b *testing.B) {
	for _, n := range []int{2000, 20000} {
		path, err := synth.Write(b.TempDir(), synth.Spec{Systems: 3, Cases: n, Triage: filepath.Join("..", "fixtures", "triage")})
		if err != nil {
			b.Fatal(err)
		}
		for _, lines := range []string{"yaml", "json"} {
			b.Run(fmt.Sprintf("cases=%d/lines=%s", n, lines), func(b *testing.B) {
				defer func(was bool) { workload.JsonlFast = was }(workload.JsonlFast)
				workload.JsonlFast = lines == "json"
				b.ReportAllocs()
				for b.Loop() {
					w, err := workload.Load(path)
					if err != nil {
						b.Fatal(err)
					}
					if len(w.Cases) != n {
						b.Fatalf("%d cases", len(w.Cases))
					}
				}
			})
		}
	}
}

// BenchmarkCompileParts compiles a loaded 3 x 20,000 workload as `assay
// run` and `assay ci verify` do (every part's tables and config admitted),
// then writes out every part's files and re-derives each part's admitted
// config and declared calls as ci verify does.
//
//	go test ./harness/ -run '^$' -bench BenchmarkCompileParts -benchmem
func BenchmarkCompileParts(b *testing.B) {
	path, err := synth.Write(b.TempDir(), synth.Spec{Systems: 3, Cases: 20000, Triage: filepath.Join("..", "fixtures", "triage")})
	if err != nil {
		b.Fatal(err)
	}
	w, err := workload.Load(path)
	if err != nil {
		b.Fatal(err)
	}
	out := b.TempDir()
	b.ReportAllocs()
	for b.Loop() {
		c, err := workload.Compile(w, out, foundry.AdmitOptions{})
		if err != nil {
			b.Fatal(err)
		}
		load := parts.ManifestCache()
		for _, p := range c.Parts {
			if _, err := c.PartFiles(p); err != nil {
				b.Fatal(err)
			}
			if _, err := c.PartConfig(p, load); err != nil {
				b.Fatal(err)
			}
			workload.DeclaredCalls(w.PartView(p), 1)
		}
	}
}
