package verify

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/runrecord"
)

// rewriteRecord re-encodes dir's run record after edit, in the form the
// recorder writes, so only what edit changed can be what verification
// objects to.
func rewriteRecord(t *testing.T, dir string, edit func(r *runrecord.Record)) {
	t.Helper()
	v, err := runrecord.Read(dir, runrecord.Options{})
	if err != nil || v.Record == nil {
		t.Fatalf("read the record: %v %+v", err, v)
	}
	edit(v.Record)
	b, err := runrecord.Encode(v.Record)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, runrecord.RecordFile), b)
}

// When the commit the runs were made at is known (an artifact's side),
// the record must name it and an unmodified checkout; without one, a null
// head is a run made outside git and stays valid.
func TestRecordHeldToAKnownCommit(t *testing.T) {
	t.Parallel()
	dir, opts := triageRun(t, 0)
	const commit = "0123456789abcdef0123456789abcdef01234567"
	const other = "89abcdef0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		name     string
		head     string
		modified bool
		commit   string
		want     string // "" verifies
	}{
		{name: "the commit, unmodified", head: commit, commit: commit},
		{name: "null head, commit known", head: "", commit: commit, want: "foundry_head is null, but these runs were made at commit " + commit},
		{name: "another head", head: other, commit: commit, want: "foundry_head is " + other + ", but these runs were made at commit " + commit},
		{name: "modified checkout, commit known", head: commit, modified: true, commit: commit, want: "foundry_modified is true"},
		{name: "null and modified, commit known", head: "", modified: true, commit: commit, want: "foundry_modified is true"},
		{name: "null head, no commit known", head: "", commit: ""},
		{name: "modified checkout, no commit known", head: other, modified: true, commit: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rewriteRecord(t, dir, func(r *runrecord.Record) { r.FoundryHead, r.FoundryModified = tc.head, tc.modified })
			o := opts
			o.Commit = tc.commit
			res, err := CheckRun(context.Background(), dir, o)
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(res.Mismatches, "\n")
			switch {
			case tc.want == "" && !res.OK:
				t.Fatalf("an honest record fails: %s", got)
			case tc.want != "" && (res.OK || !strings.Contains(got, runrecord.RecordFile+": "+tc.want)):
				t.Fatalf("want a failure naming %q, got OK=%v:\n%s", tc.want, res.OK, got)
			}
		})
	}
}

// A record is held to the rows the run writes, in the order it writes
// them, each once, and to a status its phases agree with.
func TestRecordRowsAndStatus(t *testing.T) {
	t.Parallel()
	dir, opts := triageRun(t, 0)
	rewriteRecord(t, dir, func(r *runrecord.Record) { r.FoundryHead, r.FoundryModified = "", false })
	last := func(r *runrecord.Record) *runrecord.Phase { return &r.Phases[len(r.Phases)-1] }
	for _, tc := range []struct {
		name string
		edit func(r *runrecord.Record)
		want string
	}{
		{"honest", func(r *runrecord.Record) {}, ""},
		{"two rows swapped", func(r *runrecord.Record) {
			p := last(r)
			p.Artifacts[0], p.Artifacts[1] = p.Artifacts[1], p.Artifacts[0]
		}, "foundry-run.yml lists gate.json after summary.md in phase 5, but a run writes it before"},
		{"a row listed twice", func(r *runrecord.Record) {
			p := last(r)
			p.Artifacts = append(p.Artifacts, p.Artifacts[len(p.Artifacts)-1])
		}, "foundry-run.yml lists report.html twice"},
		{"cancelled after every phase", func(r *runrecord.Record) { r.Status = runrecord.RunCancelled },
			"foundry-run.yml: status cancelled, but every phase is done or skipped"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			orig := readRecord(t, dir)
			defer write(t, filepath.Join(dir, runrecord.RecordFile), orig)
			rewriteRecord(t, dir, tc.edit)
			res, err := CheckRun(context.Background(), dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(res.Mismatches, "\n")
			switch {
			case tc.want == "" && !res.OK:
				t.Fatalf("an honest record fails: %s", got)
			case tc.want != "" && (res.OK || !strings.Contains(got, tc.want)):
				t.Fatalf("want a failure naming %q, got OK=%v:\n%s", tc.want, res.OK, got)
			}
		})
	}
}

func readRecord(t *testing.T, dir string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, runrecord.RecordFile))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
