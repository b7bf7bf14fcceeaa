package runrecord

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/fault/faulttest"
)

func TestAssemblySHA256(t *testing.T) {
	// sha256("") and sha256("abc"), the FIPS 180-2 vectors.
	cases := map[string]string{
		"":    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"abc": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
	}
	for in, want := range cases {
		if got := AssemblySHA256([]byte(in)); got != want {
			t.Errorf("sha(%q) = %s", in, got)
		}
	}
}

func TestAssemblyRoundTrip(t *testing.T) {
	a := paperAssembly()
	b, err := EncodeAssembly(a)
	must(t, err)
	got, err := ParseAssembly(b)
	must(t, err)
	if !reflect.DeepEqual(got, a) {
		t.Fatalf("round trip\n got %+v\nwant %+v", got, a)
	}
	again, err := EncodeAssembly(got)
	must(t, err)
	if string(again) != string(b) {
		t.Fatal("encoding is not stable")
	}
	if !strings.HasSuffix(string(b), "}\n") || !strings.Contains(string(b), `"phase":6`) {
		t.Fatalf("shape: %s", b)
	}
}

func TestParseAssembly(t *testing.T) {
	cases := []struct {
		name, doc string
		ok        bool
		n         int
	}{
		{"phase key", `{"pipeline":"p","harness_name":"h","phases":[{"phase":3,"kind":"step","skill":"s"}]}`, true, 3},
		{"n key", `{"pipeline":"p","harness_name":"h","phases":[{"n":4,"kind":"step","skill":"s"}]}`, true, 4},
		{"both agree", `{"pipeline":"p","harness_name":"h","phases":[{"n":4,"phase":4,"kind":"step","skill":"s"}]}`, true, 4},
		{"both disagree", `{"pipeline":"p","harness_name":"h","phases":[{"n":4,"phase":5,"kind":"step","skill":"s"}]}`, false, 0},
		{"unknown key", `{"pipeline":"p","harness_name":"h","extra":1,"phases":[{"phase":1,"kind":"step","skill":"s"}]}`, false, 0},
		{"fractional phase", `{"pipeline":"p","harness_name":"h","phases":[{"phase":1.5,"kind":"step","skill":"s"}]}`, false, 0},
		{"version 2", `{"assembly_version":2,"pipeline":"p","harness_name":"h","phases":[{"phase":1,"kind":"step","skill":"s"}]}`, false, 0},
		{"duplicate key", `{"pipeline":"p","pipeline":"q","harness_name":"h","phases":[{"phase":1,"kind":"step","skill":"s"}]}`, false, 0},
		{"not json", `pipeline: p`, false, 0},
		{"chain not strings", `{"pipeline":"p","harness_name":"h","phases":[{"phase":1,"kind":"branch","pattern":"x","chain":[1]}]}`, false, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, err := ParseAssembly([]byte(tc.doc))
			if !tc.ok {
				faulttest.Want(t, err, CodeAssembly)
				return
			}
			must(t, err)
			if a.Phases[0].N != tc.n {
				t.Fatalf("n = %d", a.Phases[0].N)
			}
		})
	}
}

func TestFoundryHead(t *testing.T) {
	outside := t.TempDir()
	if head := FoundryHead(context.Background(), outside); head != "" {
		t.Skipf("temp dir %s is inside a git checkout (%s)", outside, head)
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	repo := t.TempDir()
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	if head := FoundryHead(context.Background(), repo); head != "" {
		t.Fatalf("a repository with no commit has head %q", head)
	}
	must(t, os.MkdirAll(filepath.Join(repo, "workloads"), 0o755))
	writeFile(t, filepath.Join(repo, "workloads"), "w.yml", "x")
	git("add", ".")
	git("commit", "-q", "-m", "c")
	want := git("rev-parse", "HEAD")
	for _, p := range []string{repo, filepath.Join(repo, "workloads"), filepath.Join(repo, "workloads", "w.yml")} {
		if got := FoundryHead(context.Background(), p); got != want {
			t.Errorf("FoundryHead(%s) = %q, want %q", p, got, want)
		}
	}
	if got := FoundryHead(context.Background(), outside); got != "" {
		t.Errorf("outside git: %q", got)
	}

	// A clean checkout is not modified; an edit, a staged change or a new
	// file make it so, an ignored file does not.
	ctx := context.Background()
	if FoundryModified(ctx, repo) || FoundryModified(ctx, outside) {
		t.Fatal("a clean checkout (or no checkout) reads as modified")
	}
	writeFile(t, repo, ".gitignore", "runs/\n")
	git("add", ".gitignore")
	git("commit", "-q", "-m", "ignore")
	must(t, os.MkdirAll(filepath.Join(repo, "runs"), 0o755))
	writeFile(t, filepath.Join(repo, "runs"), "r.json", "{}")
	if FoundryModified(ctx, filepath.Join(repo, "workloads", "w.yml")) {
		t.Error("an ignored run directory makes the checkout modified")
	}
	// Nor does the runs root being written, ignored or not.
	must(t, os.MkdirAll(filepath.Join(repo, "out", "check", "w"), 0o755))
	writeFile(t, filepath.Join(repo, "out", "check", "w"), "report.json", "{}")
	if FoundryModified(ctx, repo, filepath.Join(repo, "out", "check")) {
		t.Error("the excluded runs root makes the checkout modified")
	}
	if !FoundryModified(ctx, repo) {
		t.Error("an untracked runs root outside the exclusion is not seen")
	}
	must(t, os.RemoveAll(filepath.Join(repo, "out")))
	writeFile(t, filepath.Join(repo, "workloads"), "w.yml", "changed")
	if !FoundryModified(ctx, filepath.Join(repo, "workloads", "w.yml")) {
		t.Error("an edited workload is not seen")
	}
	git("checkout", "--", ".")
	writeFile(t, filepath.Join(repo, "workloads"), "new.yml", "x")
	if !FoundryModified(ctx, repo) {
		t.Error("an untracked workload is not seen")
	}
	// An empty exclusion (a memory store, no artifact) is no directory,
	// not the working directory the run was started from.
	t.Chdir(filepath.Join(repo, "workloads"))
	if !FoundryModified(ctx, repo, "") {
		t.Error("an empty exclusion hides the working directory's untracked workload")
	}

	// The flag round-trips through the record; absent reads as false.
	dir := t.TempDir()
	rec, err := Create(dir, Assembly{Pipeline: "p", HarnessName: "h", Phases: []AssemblyPhase{{N: 1, Kind: KindStep, Skill: "s"}}},
		Meta{RunSlug: "r", FoundryHead: want, FoundryModified: true}, nil)
	must(t, err)
	_ = rec
	data, err := os.ReadFile(filepath.Join(dir, RecordFile))
	must(t, err)
	if !strings.Contains(string(data), "\nfoundry_modified: true\n") {
		t.Fatalf("record:\n%s", data)
	}
	v, err := Read(dir, Options{})
	must(t, err)
	if v.Record == nil || !v.Record.FoundryModified || len(v.Warnings) != 0 {
		t.Fatalf("read back: %+v", v)
	}
}
