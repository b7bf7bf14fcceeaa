package effect_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/effect"
	_ "github.com/algal-assay/assay/engine/effect/backends"
	"github.com/algal-assay/assay/engine/fault"
)

func TestResolveSpec(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ spec, want string }{
		{"scripted:r.json", "scripted:/cfg/r.json"},
		{"scripted:/abs/r.json", "scripted:/abs/r.json"},
		{"replay:runs", "replay:/cfg/runs"},
		{"cmd:./model --fast", "cmd:./model --fast"},
		{"gateway:anthropic/claude", "gateway:anthropic/claude"},
		{"openai:gpt-4o-mini", "openai:gpt-4o-mini"},
		{"apple", "apple"},
	} {
		if got, err := effect.ResolveSpec(tc.spec, "/cfg", effect.InConfig); err != nil || got != tc.want {
			t.Errorf("%s: %s %v", tc.spec, got, err)
		}
	}
	for _, bad := range []string{"anthropicx:claude", "openai:", "scripted:", "cmd:", "gateway:", "Apple", "apple:x"} {
		if _, err := effect.ResolveSpec(bad, "/cfg", effect.InConfig); err == nil {
			t.Errorf("%s admitted", bad)
		}
	}
	// Flags take no replay directory; workloads no unreachable backend.
	if _, err := effect.ResolveSpec("replay:runs", "/cfg", effect.InFlag); err == nil || !strings.Contains(err.Error(), "want scripted:<file>, cmd:<command>, gateway:<model>, apple, openai:<model> or anthropic:<model>") {
		t.Errorf("replay in a flag: %v", err)
	}
	if _, ok := effect.ParseSpec("gateway:x", effect.InWorkload); ok {
		t.Error("gateway: admitted in a workload")
	}
}

func TestFormsNameEveryRegisteredScheme(t *testing.T) {
	t.Parallel()
	if got, want := effect.Forms(effect.InWorkload), "scripted:<file>, replay:<dir>, cmd:<command>, openai:<backend or model> or anthropic:<backend or model>"; got != want {
		t.Errorf("workload forms %q, want %q", got, want)
	}
	if got, want := effect.Forms(effect.InConfig), "scripted:<file>, replay:<dir>, cmd:<command>, gateway:<model>, apple, openai:<model> or anthropic:<model>"; got != want {
		t.Errorf("config forms %q, want %q", got, want)
	}
}

func TestLiveSpec(t *testing.T) {
	t.Parallel()
	for spec, want := range map[string]bool{"openai:small": true, "openai:": false, "scripted:x": false, "gateway:m": false, "apple": false, "anthropic:m": true, "anthropicx:m": false} {
		if got := effect.LiveSpec(spec); got != want {
			t.Errorf("LiveSpec(%q) = %v", spec, got)
		}
	}
}

func TestBuild(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "r.json"), []byte(`{"c":"x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	ex, ordered, err := effect.Build("cheap", "scripted:r.json", effect.Site{Dir: dir})
	if err != nil || ex.ID() != "cheap" || !ex.Describe().Wildcard || ordered {
		t.Fatalf("scripted spec: %v (ordered %v)", err, ordered)
	}
	ex, _, err = effect.Build("sh", "cmd:cat", effect.Site{Dir: dir})
	if err != nil || !ex.Describe().NoRetry {
		t.Fatalf("cmd spec: %v", err)
	}
	ex, _, err = effect.Build("frontier", "gateway:openai/gpt", effect.Site{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	req := effect.Request{"cellId": "c", "kind": effect.KindAgent}
	rec, _ := effect.NewRouter(ex).Effect(context.Background(), req, 0)
	if rec.Err == nil || rec.Err.Code != fault.EffectUnbound || rec.Executor != "frontier" {
		t.Fatalf("gateway stub: %+v", rec.Value())
	}
	if _, _, err := effect.Build("x", "python:foo", effect.Site{Dir: dir}); fault.CodeOf(err) != fault.Parse || !strings.Contains(err.Error(), `executor "x": unknown spec`) {
		t.Fatalf("unknown spec: %v", err)
	}
	// A replay answers in record order: its session keeps case order.
	if _, ordered, err := effect.Build("r", "replay:"+dir, effect.Site{}); err != nil || !ordered {
		t.Fatalf("replay: ordered %v, %v", ordered, err)
	}
	// A live spec built here dials its default configuration: the
	// executor answers as its id and declares its configuration.
	ex, _, err = effect.Build("m", "openai:small-1", effect.Site{Env: func(string) (string, bool) { return "", false }})
	if err != nil || ex.ID() != "m" || ex.Describe().ConfigurationDigest == "" {
		t.Fatalf("live spec: %v", err)
	}
	if _, _, err := effect.Build("m", "openai:bad\x01model", effect.Site{}); err == nil || !strings.HasPrefix(err.Error(), `executor "m": model`) {
		t.Fatalf("bad model: %v", err)
	}
}

func TestRegisterRefusesAmbiguity(t *testing.T) {
	t.Parallel()
	for name, s := range map[string]effect.Scheme{
		"taken":     {Name: "cmd", Uses: effect.InFlag, New: func(string, string, effect.Site) (effect.Executor, error) { return nil, nil }},
		"colon":     {Name: "a:b", Uses: effect.InFlag, New: func(string, string, effect.Site) (effect.Executor, error) { return nil, nil }},
		"no use":    {Name: "nowhere", New: func(string, string, effect.Site) (effect.Executor, error) { return nil, nil }},
		"no config": {Name: "wlonly", Uses: effect.InWorkload, New: func(string, string, effect.Site) (effect.Executor, error) { return nil, nil }},
		"no build":  {Name: "nobuild", Uses: effect.InFlag},
		"bare live": {Name: "halflive", Uses: effect.InFlag, Live: &effect.Live{}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: registered", name)
				}
			}()
			effect.Register(s)
		}()
	}
}
