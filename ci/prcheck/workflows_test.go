package prcheck_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

const repoRoot = "../.."

// actionlintPkg is run through the module proxy, never added to go.mod.
const actionlintPkg = "github.com/rhysd/actionlint/cmd/actionlint@v1.7.12"

// actionlint runs actionlint in dir over files and fails the test on any
// finding or on any failure to run it. It skips only when go is missing.
func actionlint(t *testing.T, dir string, files ...string) {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH: cannot run actionlint")
	}
	cmd := exec.Command(goBin, append([]string{"run", actionlintPkg, "-no-color"}, files...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("actionlint %v in %s: %v\n%s", files, dir, err, out.String())
	}
}

func TestActionlintWorkflows(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(repoRoot, ".github", "workflows", "*.yml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no workflows: %v", err)
	}
	var rel []string
	for _, f := range files {
		r, _ := filepath.Rel(repoRoot, f)
		rel = append(rel, r)
	}
	actionlint(t, repoRoot, rel...)
}

func readYAML(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

func obj(t *testing.T, v any, what string) map[string]any {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s: want a mapping, got %T", what, v)
	}
	return m
}

func seq(t *testing.T, v any, what string) []any {
	t.Helper()
	s, ok := v.([]any)
	if !ok {
		t.Fatalf("%s: want a sequence, got %T", what, v)
	}
	return s
}

func closedKeys(t *testing.T, m map[string]any, what string, allowed ...string) {
	t.Helper()
	for k := range m {
		if !slices.Contains(allowed, k) {
			t.Errorf("%s: unexpected key %q", what, k)
		}
	}
}

var inputRef = regexp.MustCompile(`inputs\.([A-Za-z0-9_-]+)`)

// action.yml is a composite action metadata file: actionlint does not
// lint those, so its structure is checked here, and then its steps and
// inputs are linted by actionlint through a probe workflow.
func TestActionMetadata(t *testing.T) {
	t.Parallel()
	path := filepath.Join(repoRoot, "action.yml")
	a := readYAML(t, path)
	closedKeys(t, a, "action.yml", "name", "author", "description", "inputs", "outputs", "runs", "branding")
	for _, k := range []string{"name", "description"} {
		if s, _ := a[k].(string); strings.TrimSpace(s) == "" {
			t.Errorf("action.yml: %s is required", k)
		}
	}
	inputs := obj(t, a["inputs"], "inputs")
	for _, want := range []string{"paths", "go-version", "base-ref"} {
		if _, ok := inputs[want]; !ok {
			t.Errorf("action.yml: input %q missing", want)
		}
	}
	for name, v := range inputs {
		in := obj(t, v, "inputs."+name)
		closedKeys(t, in, "inputs."+name, "description", "required", "default", "deprecationMessage")
		if s, _ := in["description"].(string); s == "" {
			t.Errorf("inputs.%s: description is required", name)
		}
	}
	runs := obj(t, a["runs"], "runs")
	closedKeys(t, runs, "runs", "using", "steps")
	if runs["using"] != "composite" {
		t.Fatalf("runs.using = %v, want composite", runs["using"])
	}
	steps := seq(t, runs["steps"], "runs.steps")
	if len(steps) == 0 {
		t.Fatal("runs.steps is empty")
	}
	var uses []string
	ranCheck, uploads := false, false
	for i, s := range steps {
		st := obj(t, s, "step")
		closedKeys(t, st, "step", "name", "id", "if", "run", "shell", "uses", "with", "env", "working-directory", "continue-on-error")
		_, hasRun := st["run"]
		u, hasUses := st["uses"].(string)
		switch {
		case hasRun == hasUses:
			t.Errorf("step %d: want exactly one of run and uses", i)
		case hasRun:
			if sh, _ := st["shell"].(string); sh == "" {
				t.Errorf("step %d: a run step of a composite action needs shell", i)
			}
			if r, _ := st["run"].(string); strings.Contains(r, " ci pr") || strings.Contains(r, "(ci pr ") {
				ranCheck = true
			}
		default:
			uses = append(uses, u)
			if strings.HasPrefix(u, "actions/upload-artifact@") {
				with := obj(t, st["with"], "upload with")
				uploads = with["name"] == "assay-pr-check" && st["if"] == "always()"
			}
		}
	}
	if !ranCheck || !uploads || !slices.ContainsFunc(uses, func(u string) bool { return strings.HasPrefix(u, "actions/setup-go@") }) {
		t.Errorf("action.yml must set up Go, run `assay ci pr` and upload assay-pr-check if: always() (uses %v, ran %v, uploads %v)", uses, ranCheck, uploads)
	}
	data, _ := os.ReadFile(path)
	for _, m := range inputRef.FindAllStringSubmatch(string(data), -1) {
		if _, ok := inputs[m[1]]; !ok {
			t.Errorf("action.yml references undeclared input %q", m[1])
		}
	}

	// The probe project: action.yml at its root (an empty .git marks the
	// root for actionlint) and a workflow that (1) calls the action with
	// every input, so actionlint checks the metadata and input names, and
	// (2) runs the composite's steps as a job, so actionlint checks their
	// expressions and scripts.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "action.yml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	callInputs := map[string]any{}
	with := map[string]any{}
	for name, v := range inputs {
		in := v.(map[string]any)
		callInputs[name] = map[string]any{"type": "string", "required": false, "default": in["default"], "description": in["description"]}
		with[name] = "${{ inputs." + name + " }}"
	}
	probe := map[string]any{
		"name":        "action-probe",
		"on":          map[string]any{"workflow_call": map[string]any{"inputs": callInputs}},
		"permissions": map[string]any{"contents": "read"},
		"jobs": map[string]any{
			"uses-action": map[string]any{"runs-on": "ubuntu-latest", "steps": []any{
				map[string]any{"uses": "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683"},
				map[string]any{"uses": "./", "with": with},
			}},
			"composite-steps": map[string]any{"runs-on": "ubuntu-latest", "steps": steps},
		},
	}
	out, err := yaml.Marshal(probe)
	if err != nil {
		t.Fatal(err)
	}
	wf := filepath.Join(dir, ".github", "workflows", "probe.yml")
	if err := os.MkdirAll(filepath.Dir(wf), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(wf, out, 0o644); err != nil {
		t.Fatal(err)
	}
	actionlint(t, dir, filepath.Join(".github", "workflows", "probe.yml"))
}

// assay-pr.yml has the shape the comment workflow and docs rely on.
func TestAssayPRWorkflow(t *testing.T) {
	t.Parallel()
	w := readYAML(t, filepath.Join(repoRoot, ".github", "workflows", "assay-pr.yml"))
	if w["name"] != "assay-pr" {
		t.Fatalf("name = %v, want assay-pr", w["name"])
	}
	// The comment workflow must trigger on this one.
	c := readYAML(t, filepath.Join(repoRoot, ".github", "workflows", "assay-comment.yml"))
	wr := obj(t, obj(t, c["on"], "assay-comment on")["workflow_run"], "workflow_run")
	if !slices.Contains(seq(t, wr["workflows"], "workflows"), any("assay-pr")) {
		t.Fatalf("assay-comment.yml does not follow assay-pr: %v", wr["workflows"])
	}
	on := obj(t, w["on"], "on")
	if len(on) != 1 {
		t.Fatalf("on: want pull_request only, got %v", on)
	}
	pr := obj(t, on["pull_request"], "on.pull_request")
	paths := seq(t, pr["paths"], "paths")
	for _, want := range []string{"fixtures/**", "suites/**", "**/*.algal.json", "engine/**", "harness/**"} {
		if !slices.Contains(paths, any(want)) {
			t.Errorf("paths filter lacks %q", want)
		}
	}
	perms := obj(t, w["permissions"], "permissions")
	if len(perms) != 1 || perms["contents"] != "read" {
		t.Errorf("permissions = %v, want contents: read only", perms)
	}
	jobs := obj(t, w["jobs"], "jobs")
	var checkout, setupGo, ran, upload bool
	for _, j := range jobs {
		if p, ok := obj(t, j, "job")["permissions"]; ok {
			t.Errorf("a job widens permissions: %v", p)
		}
		for _, s := range seq(t, obj(t, j, "job")["steps"], "steps") {
			st := obj(t, s, "step")
			u, _ := st["uses"].(string)
			with, _ := st["with"].(map[string]any)
			switch {
			case strings.HasPrefix(u, "actions/checkout@"):
				checkout = with["fetch-depth"] == 0
			case strings.HasPrefix(u, "actions/setup-go@"):
				setupGo = with["go-version"] == "1.26"
			case strings.HasPrefix(u, "actions/upload-artifact@"):
				upload = with["name"] == "assay-pr-check" && with["path"] == "out/assay-pr-check" && st["if"] == "always()"
			}
			if r, _ := st["run"].(string); strings.Contains(r, "go run ./cmd/assay ci pr --artifact out/assay-pr-check") {
				ran = true
			}
		}
	}
	if !checkout || !setupGo || !ran || !upload {
		t.Errorf("checkout fetch-depth 0: %v, setup-go 1.26: %v, runs ci pr: %v, uploads assay-pr-check always: %v", checkout, setupGo, ran, upload)
	}
}

// No workflow runs on pull_request_target (see docs/ci.md).
func TestNoPullRequestTarget(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join(repoRoot, ".github", "workflows", "*.yml"))
	for _, f := range files {
		on := readYAML(t, f)["on"]
		if m, ok := on.(map[string]any); ok {
			if _, bad := m["pull_request_target"]; bad {
				t.Errorf("%s runs on pull_request_target", f)
			}
		}
		if s, ok := on.(string); ok && s == "pull_request_target" {
			t.Errorf("%s runs on pull_request_target", f)
		}
	}
}

// steps returns every step of a workflow (all jobs) or of a composite
// action.
func steps(t *testing.T, doc map[string]any) []map[string]any {
	var out []map[string]any
	add := func(ss any) {
		for _, s := range seq(t, ss, "steps") {
			out = append(out, obj(t, s, "step"))
		}
	}
	if runs, ok := doc["runs"].(map[string]any); ok {
		add(runs["steps"])
	}
	if jobs, ok := doc["jobs"].(map[string]any); ok {
		for _, j := range jobs {
			add(obj(t, j, "job")["steps"])
		}
	}
	return out
}

// The hardening the fork-safe split relies on, over every workflow and the
// action: no expression is spliced into a shell script (values reach run:
// through env:), no checkout leaves its token in .git/config, and the
// comment workflow checks out only the default branch, downloads the
// artifact outside the workspace, runs nothing from it and asks for no
// more than it needs.
func TestWorkflowHardening(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join(repoRoot, ".github", "workflows", "*.yml"))
	files = append(files, filepath.Join(repoRoot, "action.yml"))
	for _, f := range files {
		doc := readYAML(t, f)
		for _, st := range steps(t, doc) {
			if r, _ := st["run"].(string); strings.Contains(r, "${{") {
				t.Errorf("%s: a run: script contains an expression (pass it through env:): %q", f, r)
			}
			if u, _ := st["uses"].(string); strings.HasPrefix(u, "actions/checkout@") {
				with, _ := st["with"].(map[string]any)
				if with["persist-credentials"] != false {
					t.Errorf("%s: checkout without persist-credentials: false", f)
				}
			}
		}
	}

	c := readYAML(t, filepath.Join(repoRoot, ".github", "workflows", "assay-comment.yml"))
	perms := obj(t, c["permissions"], "permissions")
	want := map[string]any{"pull-requests": "write", "actions": "read", "contents": "read"}
	if len(perms) != len(want) {
		t.Errorf("assay-comment permissions = %v, want %v", perms, want)
	}
	for k, v := range want {
		if perms[k] != v {
			t.Errorf("assay-comment permissions = %v, want %v", perms, want)
		}
	}
	var downloaded, posted, uploaded bool
	for _, st := range steps(t, c) {
		u, _ := st["uses"].(string)
		with, _ := st["with"].(map[string]any)
		switch {
		case strings.HasPrefix(u, "actions/checkout@"):
			for _, k := range []string{"ref", "repository"} {
				if _, ok := with[k]; ok {
					t.Errorf("assay-comment checks out %s %v: it must run default-branch code only", k, with[k])
				}
			}
		case strings.HasPrefix(u, "actions/download-artifact@"):
			p, _ := with["path"].(string)
			downloaded = strings.HasPrefix(p, "${{ runner.temp }}/")
		case strings.HasPrefix(u, "actions/setup-go@"):
			if with["cache"] != false {
				t.Error("assay-comment restores a Go cache a pull request could have written")
			}
		case strings.HasPrefix(u, "actions/upload-artifact@"):
			// Its own rendering, never the check's upload again.
			uploaded = with["name"] == "assay-pr-verified" && with["path"] == "${{ runner.temp }}/assay-pr-verified"
		}
		if r, _ := st["run"].(string); r != "" {
			env, _ := st["env"].(map[string]any)
			if r != `go run ./cmd/assay ci comment --from-artifact "$ARTIFACT_DIR" --paths suites --out "$VERIFIED_DIR"` || env["VERIFIED_DIR"] != "${{ runner.temp }}/assay-pr-verified" {
				t.Errorf("assay-comment runs %q: only the default branch's assay may run", r)
			}
			posted = true
		}
	}
	if !downloaded || !posted || !uploaded {
		t.Errorf("assay-comment: artifact downloaded under runner.temp: %v, posted with ci comment: %v, its own rendering uploaded as assay-pr-verified: %v", downloaded, posted, uploaded)
	}
}
