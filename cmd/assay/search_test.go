package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const evolverOrganism = `{"contract":"algal.organism.v1","key":"organism:evolver","name":"evolver",
 "budgets":{"maxSteps":8,"maxAgentCalls":1,"maxWork":100000},
 "interface":{"inputs":{"task":{"cell":"src","port":"task"},"feedback":{"cell":"src","port":"feedback"}},
  "outputs":{"proposals":{"cell":"writer","port":"out"}}},
 "cells":[{"id":"src","kind":"input","outputs":{"task":"text","feedback":"json"}},
  {"id":"writer","kind":"agent","inputs":{"task":"text","feedback":"json"},"prompt":"Propose organisms; learn from the feedback.",
   "view":{"inputs":["task","feedback"]},
   "output":{"kind":"json","schema":{"type":"object","required":["list"],"properties":{"list":{"type":"array"}}}}}],
 "edges":[{"from":{"cell":"src","port":"task"},"to":{"cell":"writer","port":"task"}},
  {"from":{"cell":"src","port":"feedback"},"to":{"cell":"writer","port":"feedback"}}]}`

// searchDir writes a generator whose scripted answers propose a constant
// organism first and an echo second, and a search config over it.
func searchDir(t *testing.T) string {
	dir := t.TempDir()
	organism := func(key, prog string) json.RawMessage { return json.RawMessage(echoManifest(key, prog)) }
	answers, err := json.Marshal(map[string]any{"writer": []any{
		map[string]any{"list": []any{organism("constant", `"alpha"`)}},
		map[string]any{"list": []any{organism("echo", `["get","v"]`)}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	putFile(t, dir, "answers.json", string(answers))
	putFile(t, dir, "evolver.algal.json", evolverOrganism)
	putFile(t, dir, "search.json", `{"contract":"algal.foundry.config.v1",
	 "generator":{"manifest":"evolver.algal.json","args":{"task":"echo the value"},"output":"proposals","field":"list"},
	 "executors":{"scripted":"scripted:answers.json"},
	 "search":{"maxGenerations":2,"feedbackInput":"feedback"},
	 "cases":[`+echoSplits+`]}`)
	return dir
}

func TestFoundrySearchVerbs(t *testing.T) {
	t.Parallel()
	dir := searchDir(t)
	st := filepath.Join(dir, "store")
	report := filepath.Join(dir, "report.json")
	code, out, errs := runCLI(t, "foundry", "search", filepath.Join(dir, "search.json"), "--dir", st, "--out", report, "--concurrency", "1")
	if code != 0 {
		t.Fatalf("search exit %d: %s", code, errs)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	gens := rep["generations"].([]any)
	if rep["contract"] != "algal.search.v1" || len(gens) != 2 {
		t.Fatalf("report %s", out)
	}
	if g1 := gens[1].(map[string]any); len(g1["candidates"].([]any)) != 2 || rep["result"].(map[string]any)["promoted"] != g1["promoted"] {
		t.Errorf("generation 1 %v", g1["promoted"])
	}
	if saved, _ := os.ReadFile(report); string(saved)+"\n" != out {
		t.Error("--out is not stdout's bytes without the newline")
	}
	// The report does not depend on --concurrency.
	if _, again, _ := runCLI(t, "foundry", "search", filepath.Join(dir, "search.json"), "--dir", filepath.Join(dir, "store2"), "--concurrency", "8"); again != out {
		t.Error("--concurrency changed the report")
	}
	if code, out, _ := runCLI(t, "foundry", "verify", report, "--dir", st); code != 0 || !strings.Contains(out, `"ok":true`) || !strings.Contains(out, `"checkedReceipts":14`) {
		t.Fatalf("verify exit %d: %s", code, out)
	}
	code, out, _ = runCLI(t, "foundry", "inspect", report)
	if code != 0 || !strings.Contains(out, "organism:constant") || !strings.Contains(out, "organism:echo (promoted)") || !strings.Contains(out, "holdout 1/1") {
		t.Fatalf("inspect exit %d:\n%s", code, out)
	}
	// A changed claim exits 1 and is named.
	raw, _ := os.ReadFile(report)
	putFile(t, dir, "report.json", strings.Replace(string(raw), `"generation":1`, `"generation":1,"extra":true`, 1))
	if code, _, errs := runCLI(t, "foundry", "verify", report, "--dir", st); code != exitError || !strings.Contains(errs, "PARSE_FAILED") {
		t.Fatalf("malformed report: exit %d %s", code, errs)
	}
	putFile(t, dir, "report.json", strings.Replace(string(raw), `"passed":0`, `"passed":1`, 1))
	if code, out, _ := runCLI(t, "foundry", "verify", report, "--dir", st); code != 1 || !strings.Contains(out, `"ok":false`) || !strings.Contains(out, "generations[0]") {
		t.Fatalf("tampered report: exit %d %s", code, out)
	}
}

func TestFoundrySearchRejections(t *testing.T) {
	t.Parallel()
	dir := searchDir(t)
	st := filepath.Join(dir, "store")
	// A search block outside `foundry search` is refused, as upstream does.
	if code, _, errs := runCLI(t, "foundry", filepath.Join(dir, "search.json"), "--dir", st); code != exitError || !strings.Contains(errs, "PARSE_FAILED") || !strings.Contains(errs, "foundry search") {
		t.Fatalf("search block under foundry: exit %d %s", code, errs)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "search.json"))
	putFile(t, dir, "budget.json", strings.Replace(string(raw), `"search":`, `"budget":{"work":100000,"attempts":4,"runs":20},"search":`, 1))
	if code, _, errs := runCLI(t, "foundry", "search", filepath.Join(dir, "budget.json"), "--dir", st); code != exitError || !strings.Contains(errs, "habitat budget is not supported") {
		t.Fatalf("budget under search: exit %d %s", code, errs)
	}
	putFile(t, dir, "bad.json", strings.Replace(string(raw), `"maxGenerations":2`, `"maxGenerations":9`, 1))
	if code, _, errs := runCLI(t, "foundry", "search", filepath.Join(dir, "bad.json"), "--dir", st); code != exitError || !strings.Contains(errs, "search.maxGenerations") {
		t.Fatalf("maxGenerations 9: exit %d %s", code, errs)
	}
	if code, _, _ := runCLI(t, "foundry", "search", "--dir", st); code != 2 {
		t.Fatalf("no config: exit %d, want 2", code)
	}
}
