package prcheck_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// A tag or branch can be moved to other code after review; a commit SHA
// cannot. Every action reference must name a full commit, and the line
// must say which release that commit is (a "# vX.Y.Z" comment), so an
// update is a reviewable edit of both.
var (
	pinnedUses  = regexp.MustCompile(`^[A-Za-z0-9._-]+/[A-Za-z0-9._/-]+@[0-9a-f]{40}$`)
	versionNote = regexp.MustCompile(`@[0-9a-f]{40}\s+#\s*v[0-9]+(\.[0-9]+)*\b`)
)

// unpinned lists the uses: values of one workflow or action file (steps
// and reusable-workflow jobs) that are not a full commit SHA, and the
// uncommented uses: lines that carry no version comment. Local actions
// (./...) and digest-pinned containers are pinned by construction.
func unpinned(data []byte) ([]string, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	var bad []string
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if k.Value == "uses" && v.Kind == yaml.ScalarNode {
					u := v.Value
					switch {
					case strings.HasPrefix(u, "./"):
					case strings.HasPrefix(u, "docker://") && strings.Contains(u, "@sha256:"):
					case !pinnedUses.MatchString(u):
						bad = append(bad, u+" (not a 40-hex commit SHA)")
					}
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&doc)
	for i, line := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "- "))
		if !strings.HasPrefix(t, "uses:") {
			continue
		}
		u := strings.TrimSpace(strings.TrimPrefix(t, "uses:"))
		if strings.HasPrefix(u, "./") || strings.HasPrefix(u, "docker://") {
			continue
		}
		if !versionNote.MatchString(u) {
			bad = append(bad, "line "+strconv.Itoa(i+1)+": "+u+" (no # vX.Y.Z comment)")
		}
	}
	return bad, nil
}

func TestEveryActionPinnedToCommit(t *testing.T) {
	t.Parallel()
	var files []string
	// This repository's workflows, and the ones `assay init` writes into
	// other repositories.
	for _, dir := range []string{filepath.Join(repoRoot, ".github"), filepath.Join(repoRoot, "ci", "scaffold", "initdata", ".github")} {
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && (strings.HasSuffix(p, ".yml") || strings.HasSuffix(p, ".yaml")) {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	files = append(files, filepath.Join(repoRoot, "action.yml"))
	if len(files) < 4 {
		t.Fatalf("found only %v", files)
	}
	refs := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		refs += strings.Count(string(data), "uses: actions/")
		bad, err := unpinned(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, b := range bad {
			t.Errorf("%s: %s", f, b)
		}
	}
	if refs < 8 {
		t.Errorf("only %d action references found; the scan is not reading the workflows", refs)
	}
}

// The check itself must catch each way of not pinning.
func TestUnpinnedCatchesTagsBranchesAndMissingVersions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		doc  string
		want int
	}{
		{"steps:\n  - uses: actions/checkout@v4\n", 2},
		{"steps:\n  - uses: actions/checkout@main # v4.2.2\n", 2},
		{"steps:\n  - uses: actions/checkout@11bd719 # v4.2.2\n", 2},
		{"steps:\n  - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683\n", 1},
		{"jobs:\n  x:\n    uses: org/repo/.github/workflows/w.yml@v1\n", 2},
		{"steps:\n  - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2\n  - uses: ./local\n", 0},
	} {
		bad, err := unpinned([]byte(tc.doc))
		if err != nil {
			t.Fatal(err)
		}
		if len(bad) != tc.want {
			t.Errorf("%q: findings %v, want %d", tc.doc, bad, tc.want)
		}
	}
}
