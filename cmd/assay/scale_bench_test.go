package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/algal-assay/assay/harness/synth"
)

// scaleRun runs this binary as `assay args...` in dir and returns its peak
// RSS (VmHWM, as peakRSS reads it), wall time and CPU time (user+system).
func scaleRun(b *testing.B, dir string, args ...string) (rss int64, wall, cpu time.Duration) {
	b.Helper()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	hwm := filepath.Join(b.TempDir(), "hwm")
	cmd := exec.Command(exe, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ASSAY_TEST_AS_CLI=1", "ASSAY_TEST_HWM_FILE="+hwm)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("%v: %v\n%s", args, err, out.String())
	}
	wall = time.Since(start)
	cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	kb, err := os.ReadFile(hwm)
	if err != nil {
		b.Fatal(err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(kb)), 10, 64)
	if err != nil {
		b.Fatal(err)
	}
	return n * 1024, wall, cpu
}

// BenchmarkScaleRun measures `assay run` (its verify phase included) and
// then `assay ci verify` of the run directory on one synthetic triage bench
// of systems x cases, fresh store each time: peak RSS, wall and CPU
// seconds (issue 19; BENCHMARKS.md "Scale"). ASSAY_SCALE=8x20000 picks one
// size.
func BenchmarkScaleRun(b *testing.B) {
	sizes := []string{"3x1000", "3x5000", "3x20000", "8x1000", "8x5000", "8x20000"}
	if s := os.Getenv("ASSAY_SCALE"); s != "" {
		sizes = strings.Split(s, ",")
	}
	for _, size := range sizes {
		var systems, cases int
		if _, err := fmt.Sscanf(size, "%dx%d", &systems, &cases); err != nil {
			b.Fatalf("ASSAY_SCALE %q: want SYSTEMSxCASES", size)
		}
		b.Run(size, func(b *testing.B) {
			dir := b.TempDir()
			if _, err := synth.Write(filepath.Join(dir, "suites"), synth.Spec{Systems: systems, Cases: cases, Triage: filepath.Join("..", "..", "fixtures", "triage"), Gate: true}); err != nil {
				b.Fatal(err)
			}
			var rss, vrss int64
			var wall, cpu, vwall, vcpu time.Duration
			for b.Loop() {
				os.RemoveAll(filepath.Join(dir, "runs"))
				os.RemoveAll(filepath.Join(dir, ".algal"))
				rss, wall, cpu = scaleRun(b, dir, "run", "suites", "--dir", ".algal", "--out", "runs")
				vrss, vwall, vcpu = scaleRun(b, dir, "ci", "verify", "runs", "--dir", ".algal", "--workloads", "suites")
			}
			b.ReportMetric(float64(rss>>20), "run-MiB")
			b.ReportMetric(wall.Seconds(), "run-s")
			b.ReportMetric(cpu.Seconds(), "run-cpu-s")
			b.ReportMetric(float64(vrss>>20), "verify-MiB")
			b.ReportMetric(vwall.Seconds(), "verify-s")
			b.ReportMetric(vcpu.Seconds(), "verify-cpu-s")
		})
	}
}
