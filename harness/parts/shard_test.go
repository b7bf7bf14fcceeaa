package parts

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/harness/workload"
)

func TestParseShard(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text string
		want Shard
		ok   bool
	}{
		{"1/1", Shard{1, 1}, true},
		{"2/4", Shard{2, 4}, true},
		{"4/4", Shard{4, 4}, true},
		{"0/4", Shard{}, false},
		{"5/4", Shard{}, false},
		{"1/0", Shard{}, false},
		{"2", Shard{}, false},
		{"a/b", Shard{}, false},
		{"", Shard{}, false},
	} {
		got, err := ParseShard(tc.text)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v (ok %v)", tc.text, got, err, tc.want, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "--shard wants i/n") {
			t.Errorf("ParseShard(%q): the error %q does not say what --shard wants", tc.text, err)
		}
		if tc.ok && got.String() != tc.text {
			t.Errorf("%v prints as %q, not %q", got, got.String(), tc.text)
		}
	}
}

// benchOf is a bench workload of the given size (its parts follow from it).
func benchOf(name string, cases, systems int) *workload.Workload {
	return &workload.Workload{Name: name, Kind: workload.KindBench, Cases: make([]workload.Case, cases), Systems: make([]workload.System, systems)}
}

// Every part of every workload belongs to exactly one shard, dealt in
// file order; a workload that was not loaded deals nothing.
func TestAssignDealsEveryPartOnce(t *testing.T) {
	t.Parallel()
	ws := []*workload.Workload{
		benchOf("big", 3*workload.PartCases, 1),    // 3 parts
		nil,                                        // did not load
		{Name: "f", Kind: workload.KindFoundry},    // 1 part
		benchOf("small", 10, 2),                    // 1 part
		benchOf("wide", 1, 2*workload.PartSystems), // 2 parts
	}
	got := [][][]int{Assign(ws, Shard{1, 3}), Assign(ws, Shard{2, 3}), Assign(ws, Shard{3, 3})}
	want := [][][]int{
		{{1}, nil, {1}, nil, {2}},
		{{2}, nil, nil, {1}, nil},
		{{3}, nil, nil, nil, {1}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Assign = %v, want %v", got, want)
	}
	if one := Assign(ws, Shard{1, 1}); !reflect.DeepEqual(one, [][]int{{1, 2, 3}, nil, {1}, {1}, {1, 2}}) {
		t.Fatalf("one shard holds %v", one)
	}
}

// shard.json reads back as it was written; a manifest that is not one is
// an error naming the file.
func TestShardManifestRoundTrip(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	m := &ShardManifest{Shard: Shard{2, 3}, Workloads: []ShardWorkload{
		{Name: "big", Path: "suites/big.bench.yaml", Slug: "big-r1-0123456789", Kind: workload.KindBench, Parts: 3, Held: []int{2}},
		{Name: "f", Path: "suites/f.foundry.yaml", Slug: "f-r1-abcdefabcd", Kind: workload.KindFoundry, Parts: 1, Held: []int{}},
	}}
	b, err := canon.Encode(m.Value())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ShardFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadShardManifest(root)
	if err != nil {
		t.Fatal(err)
	}
	if got.Workloads[1].Held == nil {
		got.Workloads[1].Held = []int{}
	}
	if !reflect.DeepEqual(got, m) {
		t.Fatalf("read back %+v, wrote %+v", got, m)
	}

	for name, text := range map[string]string{
		"contract": `{"contract":"assay.shard.v0","shard":"1/1","workloads":[]}`,
		"shard":    `{"contract":"assay.shard.v1","shard":"3/2","workloads":[]}`,
		"entry":    `{"contract":"assay.shard.v1","shard":"1/1","workloads":[{"name":"x","slug":"","kind":"bench","parts":1,"held":[]}]}`,
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, ShardFile), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadShardManifest(dir); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, ShardFile)) {
			t.Errorf("%s: a bad manifest read as %v", name, err)
		}
	}
}
