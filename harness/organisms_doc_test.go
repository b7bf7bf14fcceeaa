package harness

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/harness/workload"
)

// docBlock is one fenced block of a guide that names a file.
type docBlock struct {
	file, fails, body string
}

var fence = regexp.MustCompile("(?ms)^```(json|yaml) file=(\\S+)(?: fails=([^\\n]*))?\\n(.*?)^```\\n")

// TestOrganismsGuideRuns extracts every file of docs/organisms.md, admits
// each manifest, runs each workload and checks each workload the guide
// says fails fails with the message it quotes.
func TestOrganismsGuideRuns(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "docs", "organisms.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []docBlock
	for _, m := range fence.FindAllStringSubmatch(string(doc), -1) {
		blocks = append(blocks, docBlock{file: m[2], fails: m[3], body: m[4]})
	}
	if len(blocks) != 4 {
		t.Fatalf("the guide has %d file blocks, want 4 (two organisms, two workloads)", len(blocks))
	}
	dir := t.TempDir()
	for _, b := range blocks {
		p := filepath.Join(dir, filepath.FromSlash(b.file))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(b.body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ran := 0
	for _, b := range blocks {
		p := filepath.Join(dir, filepath.FromSlash(b.file))
		switch {
		case strings.HasSuffix(b.file, ".algal.json"):
			if _, err := manifest.ReadFile(p); err != nil {
				t.Errorf("%s is not admitted: %v", b.file, err)
			}
		case b.fails != "":
			_, err := workload.Load(p)
			var f *fault.Error
			if !errors.As(err, &f) || !strings.Contains(f.Message, b.fails) || f.Path != "systems[0].executors" {
				t.Errorf("%s: want a load error at systems[0].executors saying %q, got %v", b.file, b.fails, err)
			}
		default:
			w, err := workload.Load(p)
			if err != nil {
				t.Fatalf("%s: %v", b.file, err)
			}
			tb := newTestBench()
			o, err := Run(context.Background(), w, Options{Runner: tb, Store: tb, Out: filepath.Join(dir, "runs")})
			if err != nil {
				t.Fatalf("%s: %v", b.file, err)
			}
			if !o.Passed() {
				t.Errorf("%s does not pass: %v", b.file, (&Result{Workload: w, Outcome: o}).Reasons())
			}
			for _, s := range o.Bench.Systems {
				if s.ID == "escalating" && (s.Passed != 4 || s.EffectCalls != 6) {
					t.Errorf("escalating passed %d with %d calls, want 4 with 6 (the careful model only when unsure)", s.Passed, s.EffectCalls)
				}
			}
			ran++
		}
	}
	if ran != 1 {
		t.Errorf("%d workloads ran, want 1", ran)
	}
}
