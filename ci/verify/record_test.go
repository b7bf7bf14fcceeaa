package verify

import (
	"context"
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
