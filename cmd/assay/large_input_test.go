package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// largeInputs writes JSON documents of about size bytes in the shapes
// that cost the most per input byte: a list of small records (maps and
// short strings), a list of small numbers, and one long string.
func largeInputs(t testing.TB, dir string, size int) map[string]string {
	t.Helper()
	shapes := map[string]func(w *bufio.Writer, i int) int{
		"records": func(w *bufio.Writer, i int) int {
			n, _ := fmt.Fprintf(w, `{"id":"case-%d","n":%d,"ok":true,"tags":["a","b"],"score":%d.5}`, i, i%5000, i%977)
			return n
		},
		"numbers": func(w *bufio.Writer, i int) int {
			n, _ := fmt.Fprintf(w, "%d", (i*7919)%100000)
			return n
		},
	}
	out := map[string]string{}
	for name, item := range shapes {
		p := filepath.Join(dir, name+".json")
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriter(f)
		w.WriteByte('[')
		for i, n := 0, 1; n < size; i++ {
			if i > 0 {
				w.WriteByte(',')
				n++
			}
			n += item(w, i)
		}
		w.WriteByte(']')
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		out[name] = p
	}
	p := filepath.Join(dir, "string.json")
	if err := os.WriteFile(p, []byte(`{"s":"`+strings.Repeat("abcdefgh", size/8)+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out["string"] = p
	return out
}

// peakRSS runs this binary as `assay args...` and returns its peak
// resident set size in bytes (getrusage's ru_maxrss).
func peakRSS(t testing.TB, args ...string) int64 {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "ASSAY_TEST_AS_CLI=1")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = nil, &stderr
	_ = cmd.Run() // the verbs other than canon and digest reject these documents, after reading them
	if cmd.ProcessState == nil {
		t.Fatalf("%v did not run: %s", args, stderr.String())
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Skip("no rusage on this system")
	}
	return ru.Maxrss * 1024 // kilobytes on Linux
}

// largeInputVerbs read one JSON document named on the command line.
var largeInputVerbs = [][]string{{"canon"}, {"canon", "--digest"}, {"verify"}, {"bench", "verify"}, {"bundle", "unpack"}}

// The memory bound of issue 15: a JSON input inside the 64 MiB bound costs
// less than 8 times its size in peak RSS. A list of small records is the
// exception: each object is a Go map, whose smallest form (header and one
// 8-slot group) is 336 bytes, about 5 times the 70 bytes of text it came
// from, so it is held to 9x. 16 MiB keeps the test to a few seconds;
// BenchmarkLargeInputPeakRSS measures 60 MiB (BENCHMARKS.md).
func TestLargeInputPeakRSS(t *testing.T) {
	const size = 16 << 20
	inputs := largeInputs(t, t.TempDir(), size)
	bound := map[string]float64{"records": 9, "numbers": 8, "string": 8}
	for _, shape := range []string{"records", "numbers", "string"} {
		for _, verb := range largeInputVerbs[:2] {
			rss := peakRSS(t, append(verb, inputs[shape])...)
			ratio := float64(rss) / size
			t.Logf("%s on %s: %.2fx", strings.Join(verb, " "), shape, ratio)
			if ratio >= bound[shape] {
				t.Errorf("%s on %d MiB of %s: peak RSS %d MiB, %.1fx the input (bound %gx)", strings.Join(verb, " "), size>>20, shape, rss>>20, ratio, bound[shape])
			}
		}
	}
}

// BenchmarkLargeInputPeakRSS reports peak RSS per input byte for 60 MiB
// inputs across the verbs that read one JSON document (rss/input).
func BenchmarkLargeInputPeakRSS(b *testing.B) {
	const size = 60 << 20
	inputs := largeInputs(b, b.TempDir(), size)
	for _, shape := range []string{"records", "numbers", "string"} {
		for _, verb := range largeInputVerbs {
			b.Run(shape+"/"+strings.Join(verb, "-"), func(b *testing.B) {
				var rss int64
				for b.Loop() {
					rss = max(rss, peakRSS(b, append(verb, inputs[shape])...))
				}
				b.ReportMetric(float64(rss)/size, "rss/input")
				b.ReportMetric(float64(rss>>20), "MiB-rss")
			})
		}
	}
}
