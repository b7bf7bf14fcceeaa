package main

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
)

// Every bench and foundry config of upstream's corpus, named from another
// directory: its manifest and scripted: paths resolve against the config's
// own directory, once. A config runs (exit 0, or 1 for an exhausted budget),
// or, where the saved corpus lacks a file, fails IO_FAILED naming that
// file at its real place (or TOOL_UNKNOWN for the invest lookup tool, whose
// registry the corpus lacks); no path is ever joined twice.
func TestEveryUpstreamConfigFromAnotherDirectory(t *testing.T) {
	up := os.Getenv("ASSAY_UPSTREAM_DIR")
	if up == "" {
		t.Skip("ASSAY_UPSTREAM_DIR unset: the upstream example corpus is not available")
	}
	examples, err := filepath.Abs(filepath.Join(up, "examples"))
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
