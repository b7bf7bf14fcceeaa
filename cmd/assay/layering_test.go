package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The layering's one source is the depguard rules of .golangci.yml:
// golangci-lint applies them to every file, and TestImportsFlowOneWay reads
// the same rules and holds `go list`'s view of every package to them, so
// `go test` alone catches a wrong import too, and it fails when the rules
// fall behind the code (a package in no layer, a backend the backends list
// registers that the backends rule does not name).

const modulePath = "github.com/algal-assay/assay/"

// guardRule is one depguard rule as .golangci.yml writes it.
type guardRule struct {
	Files []string `yaml:"files"`
	Deny  []struct {
		Pkg  string `yaml:"pkg"`
		Desc string `yaml:"desc"`
	} `yaml:"deny"`
}

// guardRules reads the depguard rules from the repository's .golangci.yml.
func guardRules(t *testing.T, root string) map[string]guardRule {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, ".golangci.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Linters struct {
			Enable   []string `yaml:"enable"`
			Settings struct {
				Depguard struct {
					Rules map[string]guardRule `yaml:"rules"`
				} `yaml:"depguard"`
			} `yaml:"settings"`
		} `yaml:"linters"`
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatalf(".golangci.yml: %v", err)
	}
	enabled := false
	for _, l := range cfg.Linters.Enable {
		enabled = enabled || l == "depguard"
	}
	if !enabled || len(cfg.Linters.Settings.Depguard.Rules) == 0 {
		t.Fatal(".golangci.yml enables no depguard rules: the layering has no source")
	}
	return cfg.Linters.Settings.Depguard.Rules
}

// appliesTo says whether a rule covers the non-test files of the package in
// dir (relative to the module root, slash-separated). It knows the pattern
// forms .golangci.yml uses and fails on any other, so a rule this test
// cannot read is never silently skipped.
func (r guardRule) appliesTo(t *testing.T, name, dir string) bool {
	t.Helper()
	under := func(pattern string) (string, bool) {
		rest, ok := strings.CutPrefix(pattern, "${config-path}/")
		if !ok || !strings.HasSuffix(rest, "/**") {
			return "", false
		}
		return strings.TrimSuffix(rest, "/**"), true
	}
	in, out := false, false
	for _, p := range r.Files {
		neg := strings.HasPrefix(p, "!")
		p = strings.TrimPrefix(p, "!")
		var match bool
		switch {
		case p == "$all":
			match = true
		case p == "$test":
			match = false // go list's Imports are the non-test files'
		default:
			d, ok := under(p)
			if !ok {
				t.Fatalf("depguard rule %s: file pattern %q is not one this test reads ($all, $test, ${config-path}/DIR/**)", name, p)
			}
			match = dir == d || strings.HasPrefix(dir, d+"/")
		}
		if neg {
			out = out || match
		} else {
			in = in || match
		}
	}
	return in && !out
}

func TestImportsFlowOneWay(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go tool not on PATH")
	}
	rootOut, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	root := strings.TrimSpace(string(rootOut))
	rules := guardRules(t, root)
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, modulePath+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")

	// Every package sits in exactly one layer: one rule named layer-X whose
	// files are X's folder.
	for _, line := range lines {
		pkg := strings.Fields(line)[0]
		dir := strings.TrimPrefix(pkg, modulePath)
		var layers []string
		for name, r := range rules {
			if strings.HasPrefix(name, "layer-") && r.appliesTo(t, name, dir) {
				layers = append(layers, name)
			}
		}
		if len(layers) != 1 {
			sort.Strings(layers)
			t.Errorf("package %s sits in %d layers %v of .golangci.yml's depguard rules, want one (add a layer-%s rule)", pkg, len(layers), layers, strings.SplitN(dir, "/", 2)[0])
		}
	}

	// The backends rule names every concrete backend the backends list
	// registers, so adding a backend without naming it here fails.
	const list = modulePath + "engine/effect/backends"
	denied := map[string]bool{}
	for _, d := range rules["backends"].Deny {
		denied[d.Pkg] = true
	}
	registered := 0
	for _, line := range lines {
		if fields := strings.Fields(line); fields[0] == list {
			for _, imp := range fields[1:] {
				if imp == modulePath+"engine/effect" || !strings.HasPrefix(imp, modulePath) {
					continue
				}
				registered++
				if !denied[imp] {
					t.Errorf("%s registers the backend %s, which .golangci.yml's backends rule does not deny to other packages", list, imp)
				}
			}
		}
	}
	if registered == 0 {
		t.Fatalf("%s lists no backend: %s", list, out)
	}

	// Every non-test import of every package against every rule that
	// covers it: the same judgement depguard makes, from the same rules.
	checked := 0
	for _, line := range lines {
		fields := strings.Fields(line)
		dir := strings.TrimPrefix(fields[0], modulePath)
		for name, r := range rules {
			if !r.appliesTo(t, name, dir) {
				continue
			}
			for _, imp := range fields[1:] {
				if !strings.HasPrefix(imp, modulePath) {
					continue
				}
				checked++
				for _, d := range r.Deny {
					if strings.HasPrefix(imp, d.Pkg) {
						t.Errorf("%s imports %s (.golangci.yml depguard rule %s: %s)", fields[0], imp, name, d.Desc)
					}
				}
			}
		}
	}
	if checked < 100 {
		t.Fatalf("only %d internal imports checked; go list output: %s", checked, out)
	}
}
