package harness

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/algal-assay/assay/engine/effect/openai/openaitest"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness/archive"
)

// writeWideBench writes a bench of cases x systems, each system a
// single-classifier organism with its own prompt (so no two requests are
// the same), all on one backend with the given max-concurrency.
func writeWideBench(b *testing.B, base string, cases, systems, concurrency int) string {
	b.Helper()
	dir := b.TempDir()
	src, err := os.ReadFile(filepath.Join("..", "fixtures", "triage", "triage-single.algal.json"))
	if err != nil {
		b.Fatal(err)
	}
	var y strings.Builder
	fmt.Fprintf(&y, "name: wide\nrevision: 1\nbackends:\n  model: { api: openai, model: m-1, base-url: %q, max-concurrency: %d, max-retries: 0 }\nsystems:\n", base, concurrency)
	for s := range systems {
		m := bytes.Replace(src, []byte("Route this customer support ticket"), []byte("Route ticket variant "+strconv.Itoa(s)), 1)
		name := fmt.Sprintf("s%d.algal.json", s)
		if err := os.WriteFile(filepath.Join(dir, name), m, 0o644); err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(&y, "  - { id: s%d, manifest: %s, executors: { cheap: \"openai:model\" } }\n", s, name)
	}
	y.WriteString("cases:\n")
	for c := range cases {
		fmt.Fprintf(&y, "  - { id: c%d, args: { ticket: \"ticket %d: I was charged twice\" }, expect: { queue: billing } }\n", c, c)
	}
	path := filepath.Join(dir, "wide.bench.yaml")
	if err := os.WriteFile(path, []byte(y.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

// peakRSS is the process's resident high-water mark (VmHWM) in MiB.
func peakRSS() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return -1
}

// BenchmarkLiveBench runs 256 cases x 3 systems live against a fake
// server that takes 50 ms per answer, with the backend's max-concurrency 1
// and then 32. Run it once per size:
//
//	go test ./harness/ -run '^$' -bench BenchmarkLiveBench -benchtime=1x
//
// ns/op is the whole run (compile, evaluate, verify, summarize, archive);
// s-evaluate is the evaluate phase alone, from the start until the last of
// the 768 case runs is answered, which is what the backend's concurrency
// changes. The concurrency-32 run reports that phase's speedup over the
// sequential one (when both ran in this process) and both report the
// process's peak RSS.
func BenchmarkLiveBench(b *testing.B) { benchLiveRecord(b, 256, 3) }

// BenchmarkLiveRecord128 is issue 28's figure: a live --record all of 128
// requests (128 cases, one system) answered after 50 ms each, at
// max-concurrency 1 and then 32, side by side in one process:
//
//	go test ./harness/ -run '^$' -bench BenchmarkLiveRecord128 -benchtime=1x
//
// Besides BenchmarkLiveBench's metrics, each run reports s-requests, from
// the first request reaching the server to the last case answered (what
// the backend's concurrency changes, without the setup before the first
// request, which is the same at both settings), the concurrency-32 run
// that span's speedup (x-speedup-requests) and the whole run's
// (x-speedup-run), and each run the durability
// barriers (fsync or syncfs) the stores issued per recorded answer, the
// receipts' and the archive's (barriers/answer; the run directory's few
// files are synced on their own, whatever the number of answers).
func BenchmarkLiveRecord128(b *testing.B) { benchLiveRecord(b, 128, 1) }

// benchLiveRecord records cases x systems distinct requests live, at
// max-concurrency 1 and then 32.
func benchLiveRecord(b *testing.B, cases, systems int) {
	requests := cases * systems
	var sequential, sequentialRun, sequentialRequests time.Duration // at max-concurrency 1
	for _, conc := range []int{1, 32} {
		b.Run("max-concurrency-"+strconv.Itoa(conc), func(b *testing.B) {
			var mu sync.Mutex
			var firstAnswer time.Time
			fake := openaitest.New(func(int, openaitest.Request) openaitest.Reply {
				mu.Lock()
				if firstAnswer.IsZero() {
					firstAnswer = time.Now()
				}
				mu.Unlock()
				return openaitest.Reply{Value: "billing"}
			})
			fake.Latency = 50 * time.Millisecond
			defer fake.Close()
			path := writeWideBench(b, fake.BaseURL(), cases, systems, conc)
			w := loadWorkload(b, path)
			var elapsed, evaluate, asking time.Duration
			var barriers int64
			for i := 0; i < b.N; i++ {
				dir := b.TempDir()
				wb, err := vm.NewWorkbench(filepath.Join(dir, "store"))
				if err != nil {
					b.Fatal(err)
				}
				fake.Reset()
				var lastCase time.Time
				firstAnswer = time.Time{}
				before := store.Barriers()
				start := time.Now()
				o, err := Run(context.Background(), w, Options{Runner: wb, Store: wb, Out: filepath.Join(dir, "runs"),
					Record: archive.All, Archive: filepath.Join(dir, "receipts"),
					Env:        func(string) (string, bool) { return "", false },
					OnProgress: func(Progress) { mu.Lock(); lastCase = time.Now(); mu.Unlock() }})
				elapsed += time.Since(start)
				evaluate += lastCase.Sub(start)
				// The fake answers after its latency: the first request
				// arrived that long before its answer was made.
				asking += lastCase.Sub(firstAnswer.Add(-fake.Latency))
				barriers += store.Barriers() - before
				if err != nil || !o.Passed() {
					b.Fatalf("run failed: %v", err)
				}
				if fake.Count() != requests {
					b.Fatalf("%d requests reached the server, want %d", fake.Count(), requests)
				}
				if p := fake.PeakInFlight(); p > conc {
					b.Fatalf("%d requests in flight with max-concurrency %d", p, conc)
				}
			}
			per, perRun, perRequests := evaluate/time.Duration(b.N), elapsed/time.Duration(b.N), asking/time.Duration(b.N)
			b.ReportMetric(per.Seconds(), "s-evaluate")
			b.ReportMetric(perRequests.Seconds(), "s-requests")
			if conc == 1 {
				sequential, sequentialRun, sequentialRequests = per, perRun, perRequests
			} else if sequential > 0 {
				b.ReportMetric(float64(sequential)/float64(per), "x-speedup")
				b.ReportMetric(float64(sequentialRun)/float64(perRun), "x-speedup-run")
				b.ReportMetric(float64(sequentialRequests)/float64(perRequests), "x-speedup-requests")
			}
			b.ReportMetric(float64(barriers)/float64(b.N*requests), "barriers/answer")
			b.ReportMetric(peakRSS(), "MiB-peak-rss")
		})
	}
}
