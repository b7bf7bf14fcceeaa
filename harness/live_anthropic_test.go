package harness

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/effect/anthropic/anthropictest"
	"github.com/algal-assay/assay/harness/archive"
	"github.com/algal-assay/assay/harness/rundir"
)

// claudeAnswer answers like a model reading the ticket: billing for a
// charge, else the first label the output tool's schema allows; the
// first request of every recording is overloaded once (529).
func claudeAnswer(overloaded *int) func(int, anthropictest.Request) anthropictest.Reply {
	return func(n int, r anthropictest.Request) anthropictest.Reply {
		if n == 1 {
			*overloaded++
			return anthropictest.Reply{Status: 529, Headers: map[string]string{"Retry-After": "0"}}
		}
		tools, _ := r.Body["tools"].([]any)
		t0, _ := tools[0].(map[string]any)
		schema, _ := t0["input_schema"].(map[string]any)
		props, _ := schema["properties"].(map[string]any)
		value, _ := props["value"].(map[string]any)
		enum, _ := value["enum"].([]any)
		inputs, _ := r.Context()["inputs"].(map[string]any)
		ticket, _ := inputs["ticket"].(string)
		label := "other"
		for _, e := range enum {
			if e == "billing" && strings.Contains(ticket, "charged") {
				label = "billing"
			}
		}
		if label == "other" && len(enum) > 0 {
			label, _ = enum[len(enum)-1].(string)
		}
		return anthropictest.Reply{Value: label, Model: "claude-haiku-4-5-20251001", CacheRead: 10}
	}
}

// Against the Anthropic fake: record (a 529 is retried), replay offline
// with no key byte-identical, and a prompt change re-records only the
// changed requests.
func TestAnthropicRecordReplayAndRerecord(t *testing.T) {
	t.Parallel()
	overloaded := 0
	fake := anthropictest.New(claudeAnswer(&overloaded))
	defer fake.Close()
	fake.Key = liveKey
	s := writeLiveWorkloads(t, fake.URL)
	path := filepath.Join(s.root, "live-triage.bench.yaml")
	b, _ := os.ReadFile(path)
	b = bytes.ReplaceAll(b, []byte("api: openai, model: small-1"), []byte("api: anthropic, model: claude-haiku-4-5"))
	b = bytes.ReplaceAll(b, []byte("api: openai, model: large-1"), []byte("api: anthropic, model: claude-sonnet-4-5"))
	b = bytes.ReplaceAll(b, []byte(`"openai:`), []byte(`"anthropic:`))
	b = bytes.Replace(b, []byte("gate:\n  min-passed: { escalating: 4 }\n"), []byte("gate:\n  min-passed: { single: 1 }\n"), 1)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"ANTHROPIC_API_KEY": liveKey}
	o := runBench(t, s, archive.All, env)
	if o.Err != nil || !o.Passed() {
		t.Fatalf("record: %v", o.Err)
	}
	if overloaded != 1 {
		t.Errorf("529 answered %d times", overloaded)
	}
	recorded, err := os.ReadFile(filepath.Join(o.RunDir, rundir.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	if e := archived(t, s.archive); len(e) != 8 || e[0].Models[0] != "claude-haiku-4-5-20251001" && e[0].Models[0] != "claude-sonnet-4-5" {
		t.Fatalf("archive: %+v", e)
	}
	requireNoKey(t, s.store, s.out, s.archive)

	// Offline, no key: byte-identical.
	clean := liveSetup{root: t.TempDir()}
	copyTree(t, s.root, clean.root, ".algal", "runs")
	clean.store, clean.out, clean.archive = filepath.Join(clean.root, ".algal"), filepath.Join(clean.root, "runs"), filepath.Join(clean.root, "receipts")
	fake.Reset()
	o = runBench(t, clean, archive.None, nil)
	if o.Err != nil || fake.Count() != 0 {
		t.Fatalf("replay: %v, %d requests", o.Err, fake.Count())
	}
	replayed, _ := os.ReadFile(filepath.Join(o.RunDir, rundir.ReportFile))
	if !bytes.Equal(recorded, replayed) {
		t.Error("the replayed report differs from the recorded one")
	}

	// A prompt change: could-not-replay offline, then only those requests.
	mpath := filepath.Join(s.root, "triage-single.algal.json")
	m, _ := os.ReadFile(mpath)
	if err := os.WriteFile(mpath, bytes.Replace(m, []byte("Route this customer support ticket"), []byte("Route this support ticket"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	o = runBench(t, s, archive.None, nil)
	var re *ReplayError
	if !errors.As(o.Err, &re) || len(re.Misses) != 4 {
		t.Fatalf("changed prompt: %v", o.Err)
	}
	fake.Reset()
	o = runBench(t, s, archive.Missing, env)
	if o.Err != nil {
		t.Fatalf("--record missing: %v", o.Err)
	}
	if fake.Count() != 5 { // the 4 changed requests and the first one's 529
		t.Errorf("--record missing sent %d requests, want the 4 changed ones (+1 overloaded)", fake.Count())
	}
	for _, r := range fake.Requests() {
		if !strings.HasPrefix(r.Prompt, "Route this support ticket") {
			t.Errorf("an unchanged request was re-asked: %q", r.Prompt)
		}
	}
}
