package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
)

const echoOrganism = `{"contract":"algal.organism.v1","key":"organism:%s","name":"%s",
 "interface":{"inputs":{"q":{"cell":"src","port":"value"}},"outputs":{"answer":{"cell":"out","port":"out"}}},
 "cells":[{"id":"src","kind":"input","outputs":{"value":"json"}},
  {"id":"out","kind":"expr","inputs":{"v":"json"},"expr":{"contract":"algal.expr.v1","program":%s},"output":{"kind":"json","schema":{"type":"string"}}}],
 "edges":[{"from":{"cell":"src","port":"value"},"to":{"cell":"out","port":"v"}}]}`

// echoSplits are one train, one validation and one holdout case that the
// echo organism passes and the constant one ("alpha") passes only in
// train.
const echoSplits = `{"id":"t","split":"train","args":{"q":"alpha"},"expect":{"answer":"alpha"}},
	          {"id":"v","split":"validation","args":{"q":"beta"},"expect":{"answer":"beta"}},
	          {"id":"h","split":"holdout","args":{"q":"gamma"},"expect":{"answer":"gamma"}}`

// echoManifest is echoOrganism keyed and named key, its expr cell
// running prog.
func echoManifest(key, prog string) string {
	return strings.Replace(strings.Replace(strings.Replace(echoOrganism, "%s", key, 1), "%s", key, 1), "%s", prog, 1)
}

// measureDir writes two small organisms (an echo and a constant), a bench
// config and a foundry config over them.
func measureDir(t *testing.T) string {
	dir := t.TempDir()
	for _, o := range []struct{ key, prog string }{{"echo", `["get","v"]`}, {"constant", `"alpha"`}} {
		putFile(t, dir, o.key+".algal.json", echoManifest(o.key, o.prog))
	}
	cases := `[{"id":"a","args":{"q":"alpha"},"expect":{"answer":"alpha"}},{"id":"b","args":{"q":"beta"},"expect":{"answer":"beta"}}]`
	putFile(t, dir, "bench.json", `{"contract":"algal.bench.config.v1","cases":`+cases+`,
	 "systems":[{"id":"echo","manifest":"echo.algal.json","executors":{"none":"cmd:false"}},
	            {"id":"constant","manifest":"constant.algal.json","executors":{"none":"cmd:false"}}]}`)
	putFile(t, dir, "foundry.json", `{"contract":"algal.foundry.config.v1",
	 "candidates":["constant.algal.json","echo.algal.json"],
	 "cases":[`+echoSplits+`,
	          {"id":"leak","split":"holdout","args":{"q":"alpha"},"expect":{"answer":"alpha"}}]}`)
	return dir
}

func TestBenchVerbs(t *testing.T) {
	t.Parallel()
	dir := measureDir(t)
	st := filepath.Join(dir, "store")
	report := filepath.Join(dir, "report.json")
	code, out, errs := runCLI(t, "bench", filepath.Join(dir, "bench.json"), "--dir", st, "--out", report, "--concurrency", "3")
	if code != 0 {
		t.Fatalf("bench exit %d: %s", code, errs)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if p := rep["pareto"].([]any); len(p) != 1 || p[0] != "echo" {
		t.Errorf("pareto %v", p)
	}
	if saved, _ := os.ReadFile(report); string(saved)+"\n" != out {
		t.Error("--out is not stdout's bytes without the newline")
	}
	if code, out, _ := runCLI(t, "bench", "verify", report, "--dir", st); code != 0 || !strings.Contains(out, `"ok":true`) || !strings.Contains(out, `"checkedReceipts":4`) {
		t.Fatalf("verify exit %d: %s", code, out)
	}
	if code, out, _ := runCLI(t, "bench", "inspect", report); code != 0 || !strings.Contains(out, "echo      2/2") || !strings.Contains(out, "b: passed by echo; failed by constant") {
		t.Fatalf("inspect exit %d:\n%s", code, out)
	}
	// inspect also takes a workload run directory, reading its report.json.
	runDir := filepath.Dir(putFile(t, dir, "run-dir/report.json", readFile(t, report)))
	if code, out, _ := runCLI(t, "bench", "inspect", runDir); code != 0 || !strings.Contains(out, "echo      2/2") {
		t.Fatalf("inspect of a run directory: exit %d:\n%s", code, out)
	}
	if code, _, errs := runCLI(t, "bench", "inspect", t.TempDir()); code != exitError || !strings.Contains(errs, "report.json") {
		t.Fatalf("inspect of a directory without a report: exit %d %s", code, errs)
	}
	// A changed claim exits 1.
	raw, _ := os.ReadFile(report)
	putFile(t, dir, "report.json", strings.Replace(string(raw), `"passed":1`, `"passed":2`, 1))
	if code, out, _ := runCLI(t, "bench", "verify", report, "--dir", st); code != 1 || !strings.Contains(out, `"ok":false`) {
		t.Fatalf("tampered report: exit %d %s", code, out)
	}
	if code, _, errs := runCLI(t, "bench", filepath.Join(dir, "missing.json")); code != exitError || !strings.Contains(errs, "IO_FAILED") {
		t.Fatalf("missing config: exit %d %s", code, errs)
	}
	if code, _, _ := runCLI(t, "bench", "a", "b"); code != 2 {
		t.Fatalf("two configs: exit %d, want 2", code)
	}
}

func TestFoundryVerbs(t *testing.T) {
	t.Parallel()
	dir := measureDir(t)
	st := filepath.Join(dir, "store")
	report := filepath.Join(dir, "report.json")
	code, out, errs := runCLI(t, "foundry", filepath.Join(dir, "foundry.json"), "--dir", st, "--out", report)
	if code != 0 {
		t.Fatalf("foundry exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "warning") || !strings.Contains(errs, "leak") {
		t.Errorf("no leakage warning on stderr: %q", errs)
	}
	if !strings.Contains(out, `"holdout":{"cases":`) {
		t.Fatalf("report: %s", out)
	}
	if code, out, _ := runCLI(t, "foundry", "verify", report, "--dir", st); code != 0 || !strings.Contains(out, `"ok":true`) {
		t.Fatalf("verify exit %d: %s", code, out)
	}
	if code, out, _ := runCLI(t, "foundry", "inspect", report); code != 0 || !strings.Contains(out, "organism:echo (promoted)") {
		t.Fatalf("inspect exit %d:\n%s", code, out)
	}
	bundleFile := filepath.Join(dir, "promoted.bundle.json")
	if code, out, errs := runCLI(t, "foundry", "export", report, "--dir", st, "--out", bundleFile); code != 0 || !strings.Contains(out, `"manifests":1`) {
		t.Fatalf("export exit %d: %s %s", code, out, errs)
	}
	other := filepath.Join(dir, "other-store")
	if code, _, errs := runCLI(t, "bundle", "unpack", bundleFile, "--dir", other); code != 0 {
		t.Fatalf("exported bundle does not unpack: %s", errs)
	}
	// Export is refused once a claim no longer holds, and writes nothing.
	raw, _ := os.ReadFile(report)
	putFile(t, dir, "report.json", strings.Replace(string(raw), `"passed":true`, `"passed":false`, 1))
	os.Remove(bundleFile)
	if code, out, _ := runCLI(t, "foundry", "export", report, "--dir", st, "--out", bundleFile); code != 1 || !strings.Contains(out, `"ok":false`) {
		t.Fatalf("export of a forged report: exit %d %s", code, out)
	}
	if _, err := os.Stat(bundleFile); err == nil {
		t.Fatal("a forged report was exported")
	}
	if code, _, errs := runCLI(t, "foundry", filepath.Join(dir, "foundry.json"), "--dir", st, "--strict-splits"); code != exitError || !strings.Contains(errs, "PARSE_FAILED") {
		t.Fatalf("strict splits: exit %d %s", code, errs)
	}
}

// Every bench and foundry config of upstream's corpus, named from another
// directory: its manifest and scripted: paths resolve against the config's
// own directory, once. A config runs (exit 0, or 1 for an exhausted budget),
// or, where the saved corpus lacks a file, fails IO_FAILED naming that
// file at its real place (or TOOL_UNKNOWN for the invest lookup tool, whose
// registry the corpus lacks); no path is ever joined twice.
func TestEveryUpstreamConfigFromAnotherDirectory(t *testing.T) {
	examples, err := filepath.Abs(upstreamExamples(t, "the upstream example corpus"))
	if err != nil {
		t.Fatal(err)
	}
	var configs []string
	err = filepath.WalkDir(examples, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".config.json") {
			configs = append(configs, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(configs)
	if len(configs) < 14 {
		t.Fatalf("only %d configs under %s", len(configs), examples)
	}
	ran := 0
	for _, cfg := range configs {
		name, _ := filepath.Rel(examples, cfg)
		t.Run(name, func(t *testing.T) {
			work := t.TempDir()
			t.Chdir(work)
			rel, err := filepath.Rel(work, cfg)
			if err != nil {
				t.Fatal(err)
			}
			v, err := canon.ReadFile(cfg, 0)
			if err != nil {
				t.Fatal(err)
			}
			doc := v.(map[string]any)
			// Children named by digest (bench-item under bench-batch-each)
			// come from the examples, as upstream's tests admit them.
			args := []string{"bench", rel, "--modules", filepath.Dir(cfg)}
			if doc["contract"] == "algal.foundry.config.v1" {
				args = []string{"foundry", rel}
				if _, ok := doc["search"]; ok {
					args = []string{"foundry", "search", rel}
				}
				if _, ok := doc["generator"]; ok {
					resp := filepath.Join(filepath.Dir(cfg), "foundry-generator.responses.json")
					if _, ok := doc["search"]; ok {
						resp = filepath.Join(filepath.Dir(cfg), "evolving-generator.responses.json")
					}
					args = append(args, "--responses", resp)
				}
			}
			code, _, errb := runCLI(t, append(args, "--dir", filepath.Join(work, "store"))...)
			if strings.Contains(errb, "examples/examples") || strings.Contains(errb, "invest/invest") {
				t.Fatalf("a path was joined twice: %s", errb)
			}
			switch code {
			case 0, 1:
				ran++
			case 2:
				e, _ := decodeObject(t, errb)["error"].(map[string]any)
				msg, _ := e["message"].(string)
				if e["code"] == "TOOL_UNKNOWN" && strings.Contains(msg, "ledger.charges.v1") {
					// The corpus has no registry serving the invest lookup tool.
					return
				}
				missing, _, _ := strings.Cut(msg, ": ")
				if e["code"] != "IO_FAILED" || filepath.Dir(missing) != filepath.Dir(rel) {
					t.Fatalf("exit 2 but not a missing file beside the config: %s", errb)
				}
				if _, err := os.Stat(missing); !os.IsNotExist(err) {
					t.Fatalf("%s names %s, which exists", errb, missing)
				}
			default:
				t.Fatalf("exit %d: %s", code, errb)
			}
		})
	}
	t.Logf("%d of %d configs ran from another directory; the rest name a file the saved corpus lacks", ran, len(configs))
	if ran < 7 {
		t.Errorf("only %d configs ran", ran)
	}
}
