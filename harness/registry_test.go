package harness

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"

	// The live tests run the built-in openai: backend.
	_ "github.com/algal-assay/assay/engine/effect/backends"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness/archive"
	"github.com/algal-assay/assay/harness/rundir"
	"github.com/algal-assay/assay/harness/workload"
)

// keywordCalls counts the requests the keyword backend answered, across
// every client it dialled.
var keywordCalls atomic.Int64

// A live backend the harness has never heard of, registered the way a new
// backend is: one effect.Scheme. It routes a ticket by its keywords, in
// process, so the test needs no server.
func init() {
	effect.Register(effect.Scheme{
		Name: "keyword", Arg: "<model>", Uses: effect.InConfig | effect.InWorkload,
		Live: &effect.Live{
			Serves:   "a keyword router (a test backend)",
			Settings: []effect.Setting{{Key: "model", Kind: effect.Text, Required: true}, {Key: "fallback", Kind: effect.String}},
			Configure: func(v map[string]any) (effect.LiveConfig, error) {
				c := keywordConfig{Model: v["model"].(string)}
				c.Fallback, _ = v["fallback"].(string)
				return c, c.Validate()
			},
			Default: func(model string) effect.LiveConfig { return keywordConfig{Model: model} },
			Dial: func(id string, c effect.LiveConfig, _ effect.Env) (effect.LiveClient, error) {
				if err := c.Validate(); err != nil {
					return nil, err
				}
				return keywordClient{id: id, c: c.(keywordConfig)}, nil
			},
		},
	})
}

type keywordConfig struct{ Model, Fallback string }

func (c keywordConfig) Validate() error {
	if strings.ContainsAny(c.Model, " \x00") {
		return errors.New("model: no spaces")
	}
	return nil
}

func (c keywordConfig) Value() map[string]any {
	return map[string]any{"kind": "keyword", "model": c.Model, "fallback": c.Fallback}
}

func (c keywordConfig) Descriptor() effect.Descriptor {
	d, _ := canon.Digest(c.Value())
	return effect.Descriptor{Effects: []string{effect.KindClassifier}, ConfigurationDigest: d, CacheIdentity: "keyword:" + d}
}

func (c keywordConfig) Concurrency() int { return 1 }

type keywordClient struct {
	id string
	c  keywordConfig
}

func (k keywordClient) Serve(*manifest.Manifest, map[string]manifest.Signature) effect.Executor {
	return k
}
func (k keywordClient) ID() string                  { return k.id }
func (k keywordClient) Describe() effect.Descriptor { return k.c.Descriptor() }
func (k keywordClient) Execute(_ context.Context, req effect.Request) (effect.Response, error) {
	keywordCalls.Add(1)
	ctx, _ := req["context"].(map[string]any)
	inputs, _ := ctx["inputs"].(map[string]any)
	ticket, _ := inputs["ticket"].(string)
	label := k.c.Fallback
	for word, l := range map[string]string{"charged": "billing", "crash": "technical", "totals": "technical", "email": "account"} {
		if strings.Contains(ticket, word) {
			label = l
		}
	}
	return effect.Response{Output: label, Usage: map[string]any{"model": k.c.Model + "-served"}}, nil
}

const keywordBench = `name: keyword-triage
revision: 1
backends:
  kw: { api: keyword, model: kw-1, fallback: other }
systems:
  - id: single
    manifest: triage-single.algal.json
    executors: { cheap: "keyword:kw" }
cases:
  - { id: double-charge, args: { ticket: "I was charged twice." }, expect: { queue: billing } }
  - { id: export-crash, args: { ticket: "The app crashes on a crash." }, expect: { queue: technical } }
  - { id: change-email, args: { ticket: "How do I change my login email?" }, expect: { queue: account } }
`

// A backend registered as one effect.Scheme gets the harness's record and
// replay without code of its own: its backends entry is checked by its
// settings, a recording run archives its answers, and a clean copy
// replays them offline into the same report without calling it.
func TestARegisteredLiveBackendRecordsAndReplays(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	copyFile(t, filepath.Join("..", "fixtures", "triage", "triage-single.algal.json"), filepath.Join(root, "triage-single.algal.json"))
	path := filepath.Join(root, "keyword-triage.bench.yaml")
	if err := os.WriteFile(path, []byte(keywordBench), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(root string, mode archive.Mode) ([]byte, *Outcome) {
		t.Helper()
		wb, err := vm.NewWorkbench(filepath.Join(root, ".algal"))
		if err != nil {
			t.Fatal(err)
		}
		w := loadWorkload(t, filepath.Join(root, "keyword-triage.bench.yaml"))
		o, err := Run(context.Background(), w, Options{Runner: wb, Store: wb, Out: filepath.Join(root, "runs"), Record: mode, Archive: filepath.Join(root, "receipts")})
		if err != nil {
			t.Fatalf("%s run: %v", mode, err)
		}
		b, err := os.ReadFile(filepath.Join(o.RunDir, rundir.ReportFile))
		if err != nil {
			t.Fatal(err)
		}
		return b, o
	}

	before := keywordCalls.Load()
	recorded, o := run(root, archive.All)
	if o.Err != nil || !o.Passed() {
		t.Fatalf("recording run: %v", o.Err)
	}
	if keywordCalls.Load()-before != 3 {
		t.Fatalf("the backend answered %d requests, want 3", keywordCalls.Load()-before)
	}
	arc, err := archive.Open(filepath.Join(root, "receipts"))
	if err != nil {
		t.Fatal(err)
	}
	entries, err := arc.Entries()
	if err != nil || len(entries) != 3 || len(entries[0].Models) != 1 || entries[0].Models[0] != "kw-1-served" {
		t.Fatalf("archive: %v %+v", err, entries)
	}

	clean := t.TempDir()
	copyTree(t, root, clean, ".algal", "runs")
	before = keywordCalls.Load()
	replayed, o := run(clean, archive.None)
	if o.Err != nil || !o.Passed() {
		t.Fatalf("replay: %v", o.Err)
	}
	if keywordCalls.Load() != before {
		t.Fatal("the replay called the backend")
	}
	if !bytes.Equal(recorded, replayed) {
		t.Error("the replayed report differs from the recorded one")
	}

	// The backends entry takes the scheme's settings and no others.
	src := strings.Replace(keywordBench, "fallback: other", "temperature: 0", 1)
	_, err = workload.Parse(path, workload.KindBench, []byte(src))
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Path != "backends.kw.temperature" || !strings.Contains(fe.Message, "allowed here: api, model, fallback") {
		t.Fatalf("foreign setting: %v", err)
	}
	// A spec naming a backend of another api is refused where written.
	src = strings.Replace(keywordBench, "api: keyword, model: kw-1, fallback: other", "api: openai, model: kw-1", 1)
	if _, err = workload.Parse(path, workload.KindBench, []byte(src)); !errors.As(err, &fe) || !strings.Contains(fe.Message, `backend "kw" is declared with api openai`) {
		t.Fatalf("api mismatch: %v", err)
	}
}
