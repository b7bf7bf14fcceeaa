package workload

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/internal/suggest"
)

// Discover lists the workload files under paths: a file is taken as named
// (it must carry a workload suffix); a directory is walked for
// *.bench.yaml and *.foundry.yaml (and their .yml spellings), skipping hidden directories and
// testdata. The result is sorted and free of duplicates.
func Discover(paths ...string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		key := p
		if abs, err := filepath.Abs(p); err == nil {
			key = abs
		}
		if !seen[key] {
			seen[key] = true
			out = append(out, p)
		}
	}
	for _, root := range paths {
		st, err := os.Stat(root)
		if err != nil {
			return nil, &fault.Error{Code: CodeWorkload, File: root, Message: "cannot read: " + unwrapPathError(err) + suggest.File("", root)}
		}
		if !st.IsDir() {
			if _, ok := KindOf(root); !ok {
				return nil, &fault.Error{Code: CodeWorkload, File: root, Message: "is not a workload file (want *" + BenchSuffix + " or *" + FoundrySuffix + ", or .yml)"}
			}
			add(root)
			continue
		}
		err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if p != root && skipDir(d.Name()) {
					return filepath.SkipDir
				}
				return nil
			}
			if _, ok := KindOf(p); ok {
				add(p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	slices.Sort(out)
	return out, nil
}

// skipDir reports whether discovery passes over a directory (hidden, or
// testdata).
func skipDir(name string) bool { return strings.HasPrefix(name, ".") || name == "testdata" }

// DiscoverListed is Discover over a listing instead of a file system:
// files are slash-separated paths (a commit's tree), paths the roots
// named relative to it. A root naming a listed file takes it if it
// carries a workload suffix; a root naming a directory takes the
// workload files below it, by the walk's rules. The result is sorted.
func DiscoverListed(paths, files []string) []string {
	seen := map[string]bool{}
	for _, root := range paths {
		root = strings.Trim(filepath.ToSlash(filepath.Clean(root)), "/")
		for _, f := range files {
			rest, under := strings.CutPrefix(f, root+"/")
			if root == "." {
				rest, under = f, true
			}
			switch {
			case f == root:
				if _, ok := KindOf(f); ok {
					seen[f] = true
				}
			case under:
				dirs := strings.Split(rest, "/")
				if _, ok := KindOf(f); ok && !slices.ContainsFunc(dirs[:len(dirs)-1], skipDir) {
					seen[f] = true
				}
			}
		}
	}
	out := make([]string, 0, len(seen))
	for f := range seen {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

// SplitList splits a path list (ASSAY_SUITES) on the OS list separator,
// dropping empty entries.
func SplitList(list string) []string {
	var out []string
	for _, p := range filepath.SplitList(list) {
		if strings.TrimSpace(p) != "" {
			out = append(out, p)
		}
	}
	return out
}

// LoadAll loads every file and refuses workloads that share a name: the
// run directory is runs/<name>/<slug>, so two such workloads would write
// into one tree and one's gate could stand for the other's. errs[i] is
// why files[i] was refused (nil when ws[i] loaded); every workload of a
// shared name is refused, each error naming the other files and lines.
func LoadAll(files []string) (ws []*Workload, errs []error) {
	ws = make([]*Workload, len(files))
	errs = make([]error, len(files))
	byName := map[string][]int{}
	var names []string
	for i, f := range files {
		ws[i], errs[i] = Load(f)
		if errs[i] != nil {
			continue
		}
		n := ws[i].Name
		if byName[n] == nil {
			names = append(names, n)
		}
		byName[n] = append(byName[n], i)
	}
	for _, n := range names {
		idx := byName[n]
		if len(idx) < 2 {
			continue
		}
		pos := make([]Pos, len(idx))
		for k, i := range idx {
			pos[k] = ws[i].namePos
		}
		for k, i := range idx {
			var others []string
			for m := range idx {
				if m != k {
					others = append(others, pos[m].String())
				}
			}
			errs[i] = errAt(pos[k], "name", "workload name %q is also declared at %s; each workload needs its own name (its runs go to runs/%s/)", n, strings.Join(others, ", "), n)
			ws[i] = nil
		}
	}
	return ws, errs
}
