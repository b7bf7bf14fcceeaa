package verify

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness"
	"github.com/algal-assay/assay/harness/workload"
)

// KindParts is a shard's directory of the parts it ran of a workload it
// shares with other shards.
const KindParts = "parts"

// partFileName is a file a run in parts (or a shard) writes for one part:
// part-NNNN-config.json, -report.json, -verified.json, -scripted-*.json.
var partFileName = regexp.MustCompile(`^part-([0-9]{4})-`)

// isShardParts reports whether dir is a shard's parts directory: no run
// directory (isRunDir is asked first), but a part's config or report.
func isShardParts(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(entries, func(e os.DirEntry) bool {
		n := e.Name()
		return partFileName.MatchString(n) && (strings.HasSuffix(n, "-config.json") || strings.HasSuffix(n, "-report.json"))
	})
}

// checkShardParts verifies what a shard wrote of a workload whose parts
// it shares with other shards (harness/shard.go): <root>/<name>/<slug>/
// holding, for each part it holds, the part's config and tables, its
// report and the verification record the shard wrote for it. There is no
// run record and no verdict (`assay ci merge` makes the run). The
// workload must compile to the directory's slug, and every file must be
// one a shard writes for a part it holds (FileKinds): the configs and
// tables re-derived, the report verified in full against its part's
// config, and the record re-derived from that verification and compared
// byte for byte, never read as evidence.
func checkShardParts(ctx context.Context, dir string, opts Options) (res Result, _ error) {
	res = Result{Path: dir, Kind: KindParts}
	fail := func(format string, a ...any) { res.Mismatches = append(res.Mismatches, fmt.Sprintf(format, a...)) }
	defer func() { res.OK = len(res.Mismatches) == 0 }()
	name, slug := filepath.Base(filepath.Dir(dir)), filepath.Base(dir)
	w := opts.Workloads.Lookup(name)
	if w == nil {
		fail("the parts cannot be verified: %s", opts.Workloads.missing(name))
		return res, nil
	}
	if !w.InParts() {
		fail("the directory holds parts of a run in parts, but workload %s (%s) runs in one part", w.Name, w.Path)
		return res, nil
	}
	c, err := workload.Compile(w, runsRoot(dir), foundry.AdmitOptions{})
	if err != nil {
		fail("workload %s does not compile, so its parts cannot be re-derived: %v", w.Path, err)
		return res, nil
	}
	if c.Slug != slug {
		fail("workload %s compiles to run %s, but this directory is %s: the workload or an input it reads is not the one these parts were run from", w.Path, c.Slug, slug)
		return res, nil
	}
	held, err := heldParts(dir, c.Parts)
	if err != nil {
		fail("cannot list the directory: %v", pathErr(err))
		return res, nil
	}
	res.Status = fmt.Sprintf("%d of %d parts", len(held), len(c.Parts))
	rc := &rerun{dir: dir, compiled: c, k: 1, tree: opts.Tree, roots: opts.Workloads.roots(),
		shard: &shardParts{ctx: ctx, held: held, evidence: opts.Evidence, checked: map[int]*partVerdict{}}}
	return res, rc.checkFiles(namedIn(&res), fail)
}

// heldParts are the parts a shard's directory holds: the ones with a
// file there. Each must then have every file a shard writes for it.
func heldParts(dir string, parts []workload.Part) ([]workload.Part, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	holds := map[int]bool{}
	for _, e := range entries {
		if m := partFileName.FindStringSubmatch(e.Name()); m != nil {
			n, _ := strconv.Atoi(m[1])
			holds[n] = true
		}
	}
	var held []workload.Part
	for _, p := range parts {
		if holds[p.N] {
			held = append(held, p)
		}
	}
	return held, nil
}

// shardParts is what re-deriving a shard's parts directory needs besides
// the compiled workload.
type shardParts struct {
	ctx      context.Context
	held     []workload.Part
	evidence *vm.Workbench
	// checked memoizes each part's verification (PartRecord), which both
	// its report and its record are held to.
	checked map[int]*partVerdict
}

// partVerdict is one part's verification: the record a shard writes for
// it (nil when none), or why it writes none.
type partVerdict struct {
	record []byte
	why    []string
}

// verdict verifies part p's report in full, once.
func (s *shardParts) verdict(rc *rerun, p workload.Part) *partVerdict {
	if v := s.checked[p.N]; v != nil {
		return v
	}
	v := &partVerdict{}
	rec, mismatches, err := harness.PartRecord(s.ctx, rc.compiled, rc.dir, p, s.evidence)
	switch {
	case err != nil:
		v.why = []string{err.Error()}
	case rec == nil && len(mismatches) == 0:
		v.why = []string{"its receipts have usage the report does not carry, which the merge measures itself"}
	default:
		v.record, v.why = rec, mismatches
	}
	s.checked[p.N] = v
	return v
}
