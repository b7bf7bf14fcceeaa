package harness

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect/openai"
	"github.com/algal-assay/assay/engine/effect/openai/openaitest"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness/archive"
	"github.com/algal-assay/assay/harness/rundir"
	"github.com/algal-assay/assay/harness/workload"
)

const liveKey = "sk-live-test-7Hq2VbN0pLxSECRET"

// triageAnswer answers like a model that reads the ticket: the label its
// keywords point at, or unsure when the cell may say so and the ticket is
// ambiguous.
func triageAnswer(model string) func(int, openaitest.Request) openaitest.Reply {
	return func(_ int, r openaitest.Request) openaitest.Reply {
		ctx := r.Context()
		inputs, _ := ctx["inputs"].(map[string]any)
		ticket, _ := inputs["ticket"].(string)
		if ticket == "" {
			ticket, _ = inputs["message"].(string)
		}
		rf, _ := r.Body["response_format"].(map[string]any)
		js, _ := rf["json_schema"].(map[string]any)
		schema, _ := js["schema"].(map[string]any)
		props, _ := schema["properties"].(map[string]any)
		value, _ := props["value"].(map[string]any)
		enum, _ := value["enum"].([]any)
		has := func(l string) bool {
			for _, e := range enum {
				if e == l {
					return true
				}
			}
			return false
		}
		label := "other"
		switch t := strings.ToLower(ticket); {
		case strings.Contains(t, "totals") && has("unsure"):
			label = "unsure"
		case strings.Contains(t, "charged") || strings.Contains(t, "refund"):
			label = "billing"
			if has("refund") {
				label = "refund"
			}
		case strings.Contains(t, "crash") || strings.Contains(t, "totals") || strings.Contains(t, "error"):
			label = "technical"
			if has("bug") {
				label = "bug"
			}
		case strings.Contains(t, "email") || strings.Contains(t, "how"):
			label = "account"
			if has("how-to") {
				label = "how-to"
			}
		}
		if !has(label) && len(enum) > 0 {
			label, _ = enum[0].(string)
		}
		return openaitest.Reply{Value: label, Model: model + "-2026-06"}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyTree(t *testing.T, from, to string, skip ...string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		for _, s := range skip {
			if rel == s {
				return filepath.SkipDir
			}
		}
		if d.IsDir() {
			return nil
		}
		copyFile(t, p, filepath.Join(to, rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

const liveBench = `name: live-triage
revision: 1
backends:
  small: { api: openai, model: small-1, base-url: BASE, max-concurrency: 4 }
  large: { api: openai, model: large-1, base-url: BASE, temperature: 0 }
systems:
  - id: single
    manifest: triage-single.algal.json
    executors: { cheap: "openai:small" }
  - id: escalating
    manifest: triage-escalating.algal.json
    executors: { cheap: "openai:small", frontier: "openai:large" }
cases:
  - { id: double-charge, args: { ticket: "I was charged twice, please refund one." }, expect: { queue: billing } }
  - { id: export-crash, args: { ticket: "The app crashes when I click Export." }, expect: { queue: technical } }
  - { id: change-email, args: { ticket: "How do I change my login email?" }, expect: { queue: account } }
  - { id: wrong-totals, args: { ticket: "The invoice PDF totals differ from the web page." }, expect: { queue: technical } }
gate:
  min-passed: { escalating: 4 }
`

const liveFoundry = `name: live-intent
revision: 1
backends:
  small: { api: openai, model: small-1, base-url: BASE }
candidates: [intent-small.algal.json, intent-large.algal.json]
executors: { small: "openai:small", large: "openai:small" }
cases:
  - { id: tr-refund, split: train, args: { message: "Please refund the duplicate charge." }, expect: { intent: refund } }
  - { id: tr-bug, split: train, args: { message: "Upload returns error 500." }, expect: { intent: bug } }
  - { id: va-howto, split: validation, args: { message: "How can I export a PDF?" }, expect: { intent: how-to } }
  - { id: ho-refund, split: holdout, args: { message: "I want a refund for March." }, expect: { intent: refund } }
gate:
  min-validation-rate: 1
`

type liveSetup struct {
	root, store, out, archive string
}

func writeLiveWorkloads(t *testing.T, base string) liveSetup {
	t.Helper()
	root := t.TempDir()
	fx := filepath.Join("..", "fixtures")
	copyFile(t, filepath.Join(fx, "triage", "triage-single.algal.json"), filepath.Join(root, "triage-single.algal.json"))
	copyFile(t, filepath.Join(fx, "triage", "triage-escalating.algal.json"), filepath.Join(root, "triage-escalating.algal.json"))
	copyFile(t, filepath.Join(fx, "intent", "intent-small.algal.json"), filepath.Join(root, "intent-small.algal.json"))
	copyFile(t, filepath.Join(fx, "intent", "intent-large.algal.json"), filepath.Join(root, "intent-large.algal.json"))
	for name, text := range map[string]string{"live-triage.bench.yaml": liveBench, "live-intent.foundry.yaml": liveFoundry} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(strings.ReplaceAll(text, "BASE", base)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return liveSetup{root: root, store: filepath.Join(root, ".algal"), out: filepath.Join(root, "runs"), archive: filepath.Join(root, "receipts")}
}

// runLive runs both workloads and returns their report bytes by name.
func runLive(t *testing.T, s liveSetup, mode archive.Mode, env map[string]string) (map[string][]byte, []*Outcome) {
	t.Helper()
	wb, err := vm.NewWorkbench(s.store)
	if err != nil {
		t.Fatal(err)
	}
	reports := map[string][]byte{}
	var outs []*Outcome
	for _, name := range []string{"live-triage.bench.yaml", "live-intent.foundry.yaml"} {
		w := loadWorkload(t, filepath.Join(s.root, name))
		o, err := Run(context.Background(), w, Options{
			Runner: wb, Store: wb, Out: s.out, Record: mode, Archive: s.archive,
			Env: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		})
		outs = append(outs, o)
		if err != nil {
			return reports, outs
		}
		b, err := os.ReadFile(filepath.Join(o.RunDir, rundir.ReportFile))
		if err != nil {
			t.Fatal(err)
		}
		reports[w.Name] = b
	}
	return reports, outs
}

func requireNoKey(t *testing.T, roots ...string) {
	t.Helper()
	files := 0
	for _, root := range roots {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			files++
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(b, []byte(liveKey)) {
				t.Errorf("the API key is written in %s", p)
			}
			return nil
		})
	}
	if files == 0 {
		t.Fatalf("no files under %v to check", roots)
	}
}

func TestLiveRecordOnceReplayOffline(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(triageAnswer("small-1"))
	defer fake.Close()
	s := writeLiveWorkloads(t, fake.BaseURL())
	env := map[string]string{"OPENAI_API_KEY": liveKey}

	recorded, outs := runLive(t, s, archive.All, env)
	for _, o := range outs {
		if o.Err != nil || !o.Passed() {
			t.Fatalf("%s: live run did not pass: %v %+v", o.Workload.Name, o.Err, o.Verification)
		}
	}
	live := fake.Count()
	if live == 0 {
		t.Fatal("nothing reached the server")
	}
	for _, r := range fake.Requests() {
		if r.Authorization != "Bearer "+liveKey {
			t.Fatalf("request without the key: %q", r.Authorization)
		}
	}

	// Every archived receipt verifies offline against its manifest.
	arc, err := archive.Open(s.archive)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := arc.Entries()
	if err != nil || len(entries) == 0 {
		t.Fatalf("archive index: %v, %d entries", err, len(entries))
	}
	st, _ := store.OpenFileStore(s.store)
	for _, e := range entries {
		rec, err := arc.Receipt(e.Receipt)
		if err != nil {
			t.Fatal(err)
		}
		mv, err := store.Load(st, store.Manifests, rec["manifestDigest"].(string))
		if err != nil {
			t.Fatal(err)
		}
		m, err := manifest.ParseValue(mv)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := vm.Verify(rec, m, vm.VerifyOptions{Store: store.NewMemStore()})
		if err != nil || len(rep.Mismatches) > 0 {
			t.Fatalf("archived receipt %s does not verify offline: %v %v", e.Receipt, err, rep.Mismatches)
		}
		if len(e.Models) == 0 || !strings.HasSuffix(e.Models[0], "-2026-06") {
			t.Errorf("index entry %+v does not name the served model", e)
		}
	}
	requireNoKey(t, s.store, s.out, s.archive)

	// A clean copy (workloads, manifests and the archive only), no key, and
	// a server that is gone: replay gives byte-identical reports.
	clean := liveSetup{root: t.TempDir()}
	copyTree(t, s.root, clean.root, ".algal", "runs")
	clean.store, clean.out, clean.archive = filepath.Join(clean.root, ".algal"), filepath.Join(clean.root, "runs"), filepath.Join(clean.root, "receipts")
	fake.Close()
	replayed, outs := runLive(t, clean, archive.None, nil)
	for _, o := range outs {
		if o.Err != nil || !o.Passed() {
			t.Fatalf("%s: replay did not pass: %v", o.Workload.Name, o.Err)
		}
	}
	for name, b := range recorded {
		if !bytes.Equal(b, replayed[name]) {
			t.Errorf("%s: replayed report differs from the recorded one", name)
		}
	}
	if len(replayed) != 2 {
		t.Fatalf("replayed %d reports", len(replayed))
	}
}

func TestLivePromptChangeNamesCellAndRecordsOnlyIt(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(triageAnswer("small-1"))
	defer fake.Close()
	s := writeLiveWorkloads(t, fake.BaseURL())
	env := map[string]string{"OPENAI_API_KEY": liveKey}
	if _, outs := runLive(t, s, archive.All, env); outs[0].Err != nil {
		t.Fatal(outs[0].Err)
	}
	before, err := os.ReadFile(filepath.Join(s.archive, archive.IndexFile))
	if err != nil {
		t.Fatal(err)
	}

	// Change the single system's prompt.
	path := filepath.Join(s.root, "triage-single.algal.json")
	b, _ := os.ReadFile(path)
	b = bytes.Replace(b, []byte("Route this customer support ticket"), []byte("Route this support ticket"), 1)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	fake.Reset()
	_, outs := runLive(t, s, archive.None, nil)
	o := outs[0]
	var re *ReplayError
	if !errors.As(o.Err, &re) || o.Passed() {
		t.Fatalf("changed prompt under --record none: err %v, want could-not-replay", o.Err)
	}
	if fake.Count() != 0 {
		t.Fatalf("--record none sent %d requests", fake.Count())
	}
	if len(re.Misses) != 4 {
		t.Errorf("misses = %+v, want the 4 cases of the changed system", re.Misses)
	}
	msg := re.Error()
	for _, want := range []string{`cell "route"`, "--record missing", "live-triage.bench.yaml", "differs at prompt"} {
		if !strings.Contains(msg, want) {
			t.Errorf("could-not-replay message lacks %q:\n%s", want, msg)
		}
	}
	if o.Replay == nil || o.Replay != re {
		t.Errorf("Outcome.Replay not set")
	}
	// One coded error: CodeCouldNotReplay, printing the misses' text alone.
	if fault.CodeOf(o.Err) != CodeCouldNotReplay || o.Err.Error() != msg {
		t.Errorf("could-not-replay error: code %q, text %q, want %s and the misses' text", fault.CodeOf(o.Err), o.Err.Error(), CodeCouldNotReplay)
	}

	// --record missing asks only for the changed requests.
	_, outs = runLive(t, s, archive.Missing, env)
	if outs[0].Err != nil || !outs[0].Passed() {
		t.Fatalf("--record missing: %v", outs[0].Err)
	}
	if fake.Count() != 4 {
		t.Errorf("--record missing sent %d requests, want the 4 changed ones", fake.Count())
	}
	for _, r := range fake.Requests() {
		if r.Prompt == "" || !strings.HasPrefix(r.Prompt, "Route this support ticket") {
			t.Errorf("--record missing re-asked an unchanged request: %q", r.Prompt)
		}
	}
	after, _ := os.ReadFile(filepath.Join(s.archive, archive.IndexFile))
	if bytes.Equal(before, after) {
		t.Error("the index did not change after recording new answers")
	}
	// And the check passes again offline.
	fake.Reset()
	if _, outs = runLive(t, s, archive.None, nil); outs[0].Err != nil || !outs[0].Passed() || fake.Count() != 0 {
		t.Fatalf("replay after --record missing: %v (%d requests)", outs[0].Err, fake.Count())
	}
	requireNoKey(t, s.store, s.out, s.archive)
}

func TestLiveServerFailureLeavesNoKeyAndRecordsNothing(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(func(int, openaitest.Request) openaitest.Reply {
		return openaitest.Reply{Status: 500, Raw: `{"error":{"message":"internal: key ` + liveKey + `"}}`, Headers: map[string]string{"Retry-After": "0.01"}}
	})
	defer fake.Close()
	s := writeLiveWorkloads(t, fake.BaseURL())
	_, outs := runLive(t, s, archive.All, map[string]string{"OPENAI_API_KEY": liveKey})
	if outs[0].Passed() {
		t.Fatal("a bench whose server fails every request passed")
	}
	requireNoKey(t, s.store, s.out)
	if _, err := os.Stat(filepath.Join(s.archive, archive.IndexFile)); err == nil {
		// A failing gate still records real answers; only the key must
		// never be there.
		requireNoKey(t, s.archive)
	}
}

func TestBackendsBlockErrorsPointAtTheKey(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"unknown key":   "backends:\n  small: { api: openai, model: m, colour: blue }\n",
		"bad url":       "backends:\n  small: { api: openai, model: m, base-url: \"http://example.com/v1\" }\n",
		"key pasted":    "backends:\n  small: { api: openai, model: m, api-key-env: sk-abc }\n",
		"unknown api":   "backends:\n  small: { api: bedrock, model: m }\n",
		"bad bound":     "backends:\n  small: { api: openai, model: m, max-concurrency: 0 }\n",
		"missing model": "backends:\n  small: { api: openai }\n",
	}
	for name, block := range cases {
		t.Run(name, func(t *testing.T) {
			src := "name: w\nrevision: 1\n" + block + "systems:\n  - { id: a, manifest: m.json, executors: { x: \"openai:small\" } }\ncases:\n  - { id: c, args: {}, expect: {} }\n"
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "m.json"), []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := workload.Parse(filepath.Join(dir, "w.bench.yaml"), workload.KindBench, []byte(src))
			var he *fault.Error
			if !errors.As(err, &he) || he.Line != 4 && he.Line != 3 || !strings.HasPrefix(he.Path, "backends.small") {
				t.Fatalf("err = %v, want a position inside backends.small", err)
			}
		})
	}
}

// The configuration digest a recorder declares equals the backend's.
func TestRecorderDeclaresTheBackendDigest(t *testing.T) {
	t.Parallel()
	c := openai.Config{Model: "m"}
	b, err := openai.New("x", c, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	if openai.Descriptor(c).ConfigurationDigest != b.Describe().ConfigurationDigest {
		t.Fatal("recorder and backend declare different configuration digests")
	}
	_ = canon.IsDigest
}

func TestLiveCancelRecordsNothing(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(triageAnswer("small-1"))
	fake.Latency = 10 * time.Second
	defer fake.Close()
	s := writeLiveWorkloads(t, fake.BaseURL())
	w := loadWorkload(t, filepath.Join(s.root, "live-triage.bench.yaml"))
	wb, err := vm.NewWorkbench(s.store)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for fake.Count() == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	start := time.Now()
	o, err := Run(ctx, w, Options{Runner: wb, Store: wb, Out: s.out, Record: archive.All, Archive: s.archive,
		Env: func(k string) (string, bool) {
			return map[string]string{"OPENAI_API_KEY": liveKey}[k], k == "OPENAI_API_KEY"
		}})
	if !errors.Is(err, ErrCancelled) || o == nil || o.Status != "cancelled" {
		t.Fatalf("err %v, outcome %+v: want a cancelled run", err, o)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("cancel took %v: in-flight requests were not abandoned", time.Since(start))
	}
	if _, err := os.Stat(filepath.Join(s.archive, archive.IndexFile)); err == nil {
		t.Error("a cancelled run wrote the archive")
	}
}

func TestOmittedUsageShowsUnknownNotZero(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(func(n int, r openaitest.Request) openaitest.Reply {
		reply := triageAnswer("small-1")(n, r)
		reply.Model = ""
		reply.OmitUsage = true
		return reply
	})
	defer fake.Close()
	s := writeLiveWorkloads(t, fake.BaseURL())
	path := filepath.Join(s.root, "live-triage.bench.yaml")
	b, _ := os.ReadFile(path)
	b = bytes.Replace(b, []byte("gate:"), []byte("prices: { small-1: { input: 1, output: 2 }, large-1: { input: 3, output: 4 } }\ngate:"), 1)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	wb, _ := vm.NewWorkbench(s.store)
	w := loadWorkload(t, path)
	o, err := Run(context.Background(), w, Options{Runner: wb, Store: wb, Out: s.out, Record: archive.All, Archive: s.archive,
		Env: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	for _, sys := range o.Bench.Systems {
		if sys.ID == "single" && (sys.Usage.UnknownTokens != 4 || sys.Usage.UnknownCost != 4) {
			t.Fatalf("single: %d calls with unknown tokens, %d with unknown cost; want 4 and 4", sys.Usage.UnknownTokens, sys.Usage.UnknownCost)
		}
	}
	// What is unknown is re-derived from the receipts, as ci verify and
	// the PR check do: the report itself does not carry it.
	c, err := workload.Compile(w, s.out, foundry.AdmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := canon.ReadFile(filepath.Join(o.RunDir, rundir.ReportFile), 0)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Rederive(context.Background(), c, v, wb)
	if err != nil {
		t.Fatal(err)
	}
	for i, sys := range d.Bench.Systems {
		if got, want := sys.Usage, o.Bench.Systems[i].Usage; got.UnknownTokens != want.UnknownTokens || got.UnknownCost != want.UnknownCost {
			t.Errorf("re-derived %s: unknown %d/%d, the run said %d/%d", sys.ID, got.UnknownTokens, got.UnknownCost, want.UnknownTokens, want.UnknownCost)
		}
	}
	tab := SummaryTable(o)
	for _, row := range tab.Rows {
		line := strings.Join(row, " | ")
		if !strings.Contains(line, "unknown") || strings.Contains(line, "0.000000") {
			t.Errorf("row %q: a server that reports no usage must show unknown tokens and cost", line)
		}
	}
	sum, _ := os.ReadFile(filepath.Join(o.RunDir, rundir.SummaryFile))
	if !strings.Contains(string(sum), "unknown") {
		t.Errorf("summary.md does not say unknown:\n%s", sum)
	}
}

func TestBackendConfigDecidesTheRunDirectory(t *testing.T) {
	t.Parallel()
	s := writeLiveWorkloads(t, "http://127.0.0.1:1/v1")
	path := filepath.Join(s.root, "live-triage.bench.yaml")
	slug := func() string {
		w := loadWorkload(t, path)
		c, err := workload.Compile(w, s.out, foundry.AdmitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return c.Slug
	}
	before := slug()
	b, _ := os.ReadFile(path)
	if err := os.WriteFile(path, bytes.Replace(b, []byte("model: large-1"), []byte("model: large-2"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if after := slug(); after == before {
		t.Errorf("changing a backend's model kept the run directory %s", before)
	}
}
