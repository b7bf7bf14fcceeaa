package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsFlowOneWay enforces the design card: cmd -> ci -> harness ->
// engine, with runrecord serving harness and ci, and report (the
// reports, drawn from engine types only) serving harness, which writes
// report.html, and ci, which writes pr.html; engine imports none of them,
// and nothing imports cmd; internal (generic helpers) sits under them all
// and imports none; and only engine/effect/backends imports a concrete
// executor backend.
func TestImportsFlowOneWay(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go tool not on PATH")
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "github.com/algal-assay/assay/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const mod = "github.com/algal-assay/assay/"
	layer := func(pkg string) string {
		p := strings.TrimPrefix(pkg, mod)
		return strings.SplitN(p, "/", 2)[0]
	}
	// allowed[from] lists the top-level folders a package may import.
	allowed := map[string][]string{
		"engine":    {"internal", "engine"},
		"runrecord": {"internal", "engine", "runrecord"},
		"report":    {"internal", "engine", "report"},
		"harness":   {"internal", "engine", "runrecord", "report", "harness"},
		"ci":        {"internal", "engine", "runrecord", "report", "harness", "ci"},
		"cmd":       {"internal", "engine", "runrecord", "report", "harness", "ci", "cmd"},
		"suites":    {"internal", "engine", "runrecord", "report", "harness", "suites"},
		// internal is the floor: generic helpers that know nothing of
		// ALGAL (atomic writes, YAML alias bounds, did-you-mean) and the
		// tests' second module. Every layer may import it; it imports
		// only itself.
		"internal": {"internal"},
	}
	// testsOnly are internal packages no package may import outside its
	// tests (go list's Imports leaves test imports out).
	testsOnly := map[string]bool{mod + "internal/secondmodule": true}
	// A concrete executor backend is a package the backends list imports
	// (besides engine/effect itself); only the list may import one, so
	// adding a backend never touches engine/vm or the harness.
	const list = mod + "engine/effect/backends"
	backends := map[string]bool{}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for _, line := range lines {
		if fields := strings.Fields(line); fields[0] == list {
			for _, imp := range fields[1:] {
				backends[imp] = imp != mod+"engine/effect"
			}
		}
	}
	if !backends[mod+"engine/effect/openai"] {
		t.Fatalf("%s does not list the openai backend: %s", list, out)
	}
	checked := 0
	for _, line := range lines {
		fields := strings.Fields(line)
		from := layer(fields[0])
		ok, known := allowed[from]
		if !known {
			t.Errorf("package %s sits in no known layer", fields[0])
			continue
		}
		for _, imp := range fields[1:] {
			if !strings.HasPrefix(imp, mod) {
				continue
			}
			if testsOnly[imp] {
				t.Errorf("%s imports %s, which only tests may import", fields[0], imp)
			}
			if backends[imp] && fields[0] != list {
				t.Errorf("%s imports the executor backend %s: only %s lists backends (register a scheme, see docs/architecture.md)", fields[0], imp, list)
			}
			to := layer(imp)
			permitted := false
			for _, a := range ok {
				permitted = permitted || a == to
			}
			if !permitted {
				t.Errorf("%s imports %s: %s may not depend on %s", fields[0], imp, from, to)
			}
			checked++
		}
	}
	if checked < 20 {
		t.Fatalf("only %d internal imports seen; go list output: %s", checked, out)
	}
}
