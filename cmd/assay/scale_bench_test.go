package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/harness/synth"
	"golang.org/x/sync/errgroup"
)

// scaleRun runs this binary as `assay args...` in dir and returns its peak
// RSS (VmHWM, as peakRSS reads it), wall time and user and system CPU
// time. ASSAY_SCALE_PROFILE=DIR writes the child's CPU profile and goroutine
// demand (sampleDemand) there, named after label.
func scaleRun(b *testing.B, dir, label string, args ...string) (rss int64, wall, user, sys time.Duration) {
	b.Helper()
	return scaleRunExit(b, dir, label, 0, args...)
}

// scaleRunExit is scaleRun of a command that must exit with code want.
func scaleRunExit(b *testing.B, dir, label string, want int, args ...string) (rss int64, wall, user, sys time.Duration) {
	b.Helper()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	hwm := filepath.Join(b.TempDir(), "hwm")
	cmd := exec.Command(exe, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ASSAY_TEST_AS_CLI=1", "ASSAY_TEST_HWM_FILE="+hwm)
	if p := os.Getenv("ASSAY_SCALE_PROFILE"); p != "" {
		cmd.Env = append(cmd.Env, "ASSAY_TEST_CPUPROFILE="+filepath.Join(p, label+".prof"), "ASSAY_TEST_DEMAND="+filepath.Join(p, label+".demand"))
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Run(); exitCode(err) != want {
		b.Fatalf("%v: %v (want exit %d)\n%s", args, err, want, out.String())
	}
	wall = time.Since(start)
	kb, err := os.ReadFile(hwm)
	if err != nil {
		b.Fatal(err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(kb)), 10, 64)
	if err != nil {
		b.Fatal(err)
	}
	return n * 1024, wall, cmd.ProcessState.UserTime(), cmd.ProcessState.SystemTime()
}

// BenchmarkScaleRun measures `assay run` (its verify phase included) and
// then `assay ci verify` of the run directory on one synthetic triage bench
// of systems x cases, fresh store each time: peak RSS, wall seconds, and
// CPU seconds (user+system) with the system share apart (issue 19;
// BENCHMARKS.md "Scale"). ASSAY_SCALE=8x20000 picks one size; a trailing
// "d" (8x20000d) gives every system its own organism (synth.Spec.Distinct),
// so every receipt is different and no per-system work is shared.
//
// Nothing is deleted until every size has run: the machine's ext4 root
// has no journal, and there a new inode skips every inode freed in the
// last 30 seconds one by one, so creating receipts right after removing a
// big store costs up to 15 times the system time (measured here: 6,000
// files took 3.5 s of system time after a 40,000-file tree was removed,
// 0.2 s 35 s later).
func BenchmarkScaleRun(b *testing.B) {
	sizes := []string{"3x1000", "3x5000", "3x20000", "8x1000", "8x5000", "8x20000"}
	if s := os.Getenv("ASSAY_SCALE"); s != "" {
		sizes = strings.Split(s, ",")
	}
	root := b.TempDir()
	triage, err := filepath.Abs(filepath.Join("..", "..", "fixtures", "triage"))
	if err != nil {
		b.Fatal(err)
	}
	for _, size := range sizes {
		var systems, cases int
		if _, err := fmt.Sscanf(strings.TrimSuffix(size, "d"), "%dx%d", &systems, &cases); err != nil {
			b.Fatalf("ASSAY_SCALE %q: want SYSTEMSxCASES, with a trailing d for distinct systems", size)
		}
		distinct := strings.HasSuffix(size, "d")
		b.Run(size, func(b *testing.B) {
			var rss, vrss int64
			var wall, user, sys, vwall, vuser, vsys time.Duration
			iter := 0
			for b.Loop() {
				iter++
				dir := filepath.Join(root, size, strconv.Itoa(iter))
				if _, err := synth.Write(filepath.Join(dir, "suites"), synth.Spec{Systems: systems, Cases: cases, Triage: triage, Gate: true, Distinct: distinct}); err != nil {
					b.Fatal(err)
				}
				rss, wall, user, sys = scaleRun(b, dir, size+"-run", "run", "suites", "--dir", ".algal", "--out", "runs")
				vrss, vwall, vuser, vsys = scaleRun(b, dir, size+"-verify", "ci", "verify", "runs", "--dir", ".algal", "--workloads", "suites")
			}
			b.ReportMetric(float64(rss>>20), "run-MiB")
			b.ReportMetric(wall.Seconds(), "run-s")
			b.ReportMetric((user + sys).Seconds(), "run-cpu-s")
			b.ReportMetric(sys.Seconds(), "run-sys-s")
			b.ReportMetric(float64(vrss>>20), "verify-MiB")
			b.ReportMetric(vwall.Seconds(), "verify-s")
			b.ReportMetric((vuser + vsys).Seconds(), "verify-cpu-s")
			b.ReportMetric(vsys.Seconds(), "verify-sys-s")
			floor, receipts := receiptFloor(b, filepath.Join(root, size, strconv.Itoa(iter), ".algal", "runs"))
			b.ReportMetric(floor.Seconds(), "floor-cpu-s")
			// ci verify's CPU per receipt reference (every case of every
			// system references one receipt) over the floor's per receipt.
			if refs := systems * cases; receipts > 0 && floor > 0 {
				b.ReportMetric(((vuser+vsys).Seconds()/float64(refs))/(floor.Seconds()/float64(receipts)), "verify/floor")
			}
		})
	}
}

// receiptFloor is what any verification of the run must at least do, the
// floor issue 31 measures ci verify against: every receipt file of the
// store's runs directory read, parsed, canonically encoded and hashed (the
// steps of engine/vm BenchmarkFloor), one worker per CPU as ci verify
// has. It returns the process CPU time (user + system) that took, measured
// in this otherwise idle process, and the number of receipts.
func receiptFloor(b *testing.B, runs string) (time.Duration, int) {
	b.Helper()
	names, err := filepath.Glob(filepath.Join(runs, "*.json"))
	if err != nil {
		b.Fatal(err)
	}
	before := processCPU(b)
	var next atomic.Int64
	var g errgroup.Group
	for range runtime.GOMAXPROCS(0) {
		g.Go(func() error {
			for i := next.Add(1) - 1; i < int64(len(names)); i = next.Add(1) - 1 {
				data, err := os.ReadFile(names[i])
				if err != nil {
					return err
				}
				v, err := canon.Parse(data, canon.MaxDocumentBytes)
				if err != nil {
					return err
				}
				if _, err := canon.Digest(v); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	return processCPU(b) - before, len(names)
}

// processCPU is this process's user + system CPU time so far.
func processCPU(b *testing.B) time.Duration {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkScaleBatch measures `assay run`, then `assay ci verify` and
// `assay ci diff` (both sides the one runs root) of a batch of
// default-sized workloads run together (8 systems x 256 cases
// each, one part each, all in one suites directory): peak RSS and CPU
// seconds, which must not grow with the number of workloads beyond each
// one's compact result (issue 19; BENCHMARKS.md "Scale").
// ASSAY_SCALE_BATCH=16,32 picks the batch sizes.
func BenchmarkScaleBatch(b *testing.B) {
	counts := []string{"16"}
	if s := os.Getenv("ASSAY_SCALE_BATCH"); s != "" {
		counts = strings.Split(s, ",")
	}
	root := b.TempDir()
	triage, err := filepath.Abs(filepath.Join("..", "..", "fixtures", "triage"))
	if err != nil {
		b.Fatal(err)
	}
	for _, count := range counts {
		n, err := strconv.Atoi(count)
		if err != nil || n < 1 {
			b.Fatalf("ASSAY_SCALE_BATCH %q: want workload counts", count)
		}
		b.Run(count+"x8x256", func(b *testing.B) {
			var rss, vrss, drss int64
			var wall, user, sys, vwall, vuser, vsys, dwall, duser, dsys time.Duration
			iter := 0
			for b.Loop() {
				iter++
				dir := filepath.Join(root, count, strconv.Itoa(iter))
				if _, err := synth.WriteBatch(filepath.Join(dir, "suites"), n, synth.Spec{Systems: 8, Cases: 256, Triage: triage, Gate: true}); err != nil {
					b.Fatal(err)
				}
				label := "batch" + count
				// At 256 cases the synthetic gate's outcome rule fails (its
				// last case is one the cheap model misroutes): exit 1.
				rss, wall, user, sys = scaleRunExit(b, dir, label+"-run", 1, "run", "suites", "--dir", ".algal", "--out", "runs")
				vrss, vwall, vuser, vsys = scaleRun(b, dir, label+"-verify", "ci", "verify", "runs", "--dir", ".algal", "--workloads", "suites")
				drss, dwall, duser, dsys = scaleRun(b, dir, label+"-diff", "ci", "diff", "--base", "runs", "--head", "runs", "--dir", ".algal", "--head-tree", ".", "--format", "json")
			}
			b.ReportMetric(float64(rss>>20), "run-MiB")
			b.ReportMetric(wall.Seconds(), "run-s")
			b.ReportMetric((user + sys).Seconds(), "run-cpu-s")
			b.ReportMetric(float64(vrss>>20), "verify-MiB")
			b.ReportMetric(vwall.Seconds(), "verify-s")
			b.ReportMetric((vuser + vsys).Seconds(), "verify-cpu-s")
			b.ReportMetric(float64(drss>>20), "diff-MiB")
			b.ReportMetric(dwall.Seconds(), "diff-s")
			b.ReportMetric((duser + dsys).Seconds(), "diff-cpu-s")
		})
	}
}

// startProfile starts a CPU profile and an execution trace of the command
// the test binary runs as (ASSAY_TEST_CPUPROFILE, ASSAY_TEST_TRACE: file
// paths, empty for none), so a scale run can be profiled as the process it
// is; the returned func stops both.
func startProfile(cpu, tr string) (stop func()) {
	var stops []func()
	if cpu != "" {
		if f, err := os.Create(cpu); err == nil && pprof.StartCPUProfile(f) == nil {
			stops = append(stops, func() { pprof.StopCPUProfile(); f.Close() })
		}
	}
	if tr != "" {
		if f, err := os.Create(tr); err == nil && trace.Start(f) == nil {
			stops = append(stops, func() { trace.Stop(); f.Close() })
		}
	}
	return func() {
		for _, s := range stops {
			s()
		}
	}
}

// sampleDemand samples, every millisecond, how many goroutines want a CPU
// (running or runnable, or in a system call) and on stop writes to path
// the share of samples by demand and, per tenth of a second, the mean
// demand: a phase whose demand stays under 2 leaves a core of a 2-core
// machine idle however quiet the machine is. A goroutine parked in a
// system call for the whole run (os/signal's loop) is not demand: the
// fewest seen in one sample is taken off.
func sampleDemand(path string) (stop func()) {
	if path == "" {
		return func() {}
	}
	samples := []metrics.Sample{{Name: "/sched/goroutines/running:goroutines"}, {Name: "/sched/goroutines/runnable:goroutines"}, {Name: "/sched/goroutines/not-in-go:goroutines"}}
	type point struct {
		at           time.Duration
		inGo, inCall int
	}
	var points []point
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		start := time.Now()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			metrics.Read(samples)
			// The sampler itself is running.
			points = append(points, point{time.Since(start), int(samples[0].Value.Uint64()+samples[1].Value.Uint64()) - 1, int(samples[2].Value.Uint64())})
		}
	}()
	return func() {
		close(done)
		<-finished
		if len(points) == 0 {
			return
		}
		parked := points[0].inCall
		for _, p := range points {
			parked = min(parked, p.inCall)
		}
		var hist [4]int
		var out strings.Builder
		slot, sum, n := 0, 0, 0
		for _, p := range points {
			d := max(0, p.inGo+p.inCall-parked)
			hist[min(d, 3)]++
			if s := int(p.at / (100 * time.Millisecond)); s != slot {
				if n > 0 {
					fmt.Fprintf(&out, "%6.1f %.2f\n", float64(slot)/10, float64(sum)/float64(n))
				}
				slot, sum, n = s, 0, 0
			}
			sum += d
			n++
		}
		pc := func(i int) float64 { return 100 * float64(hist[i]) / float64(len(points)) }
		fmt.Fprintf(&out, "demand 0: %.1f%%  1: %.1f%%  2: %.1f%%  3+: %.1f%%\n", pc(0), pc(1), pc(2), pc(3))
		_ = os.WriteFile(path, []byte(out.String()), 0o644)
	}
}
