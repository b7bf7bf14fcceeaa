package diff

import (
	"context"
	"fmt"

	civerify "github.com/algal-assay/assay/ci/verify"
	"github.com/algal-assay/assay/engine/vm"
)

// Dirs names two runs roots already made (`assay ci diff --base DIR
// --head DIR`) and the evidence each is re-derived against.
type Dirs struct {
	// Base and Head are the runs roots.
	Base, Head string
	// BaseTree and HeadTree are the source trees whose workloads the runs
	// are re-derived against (BaseTree defaults to HeadTree); BaseTree
	// also enables archive replays.
	BaseTree, HeadTree string
	// Store holds the head runs' receipts and manifests; BaseStore the
	// base's (default Store).
	Store, BaseStore string
	// Archive is the receipt archive ("" the head tree's default, "-"
	// none).
	Archive string
	// AllowEmpty accepts comparing no run directories at all.
	AllowEmpty bool
}

// CompareDirs loads both runs roots, re-deriving every run's verdicts
// from its own store and workload, and compares them.
func CompareDirs(ctx context.Context, d Dirs) (*Diff, error) {
	base, head, err := loadSides(ctx, d)
	if err != nil {
		return nil, err
	}
	opts := Options{BaseLabel: d.Base, HeadLabel: d.Head, Trim: []string{d.BaseTree, d.HeadTree}}
	archive := d.Archive
	if archive == "" {
		archive = DefaultArchive(d.HeadTree)
	}
	replays := archive != "" && archive != "-"
	if replays && d.BaseTree != "" {
		opts.Replay = &ReplayInput{Archive: archive, BaseTree: d.BaseTree, HeadTree: d.HeadTree}
	}
	out, err := Compute(base, head, opts)
	if err != nil {
		return nil, err
	}
	if len(base.Runs) == 0 && len(head.Runs) == 0 && !d.AllowEmpty {
		out.Problems = append(out.Problems, fmt.Sprintf("no run directories under %s or %s: nothing was compared, so nothing passes (--allow-empty accepts that)", d.Base, d.Head))
		out.Settle()
	}
	if replays && d.BaseTree == "" {
		out.Notes = append(out.Notes, "archived receipts not replayed: pass --base-tree DIR (the base's source tree)")
	}
	return out, nil
}

// loadSides loads both runs roots, each against its own store and tree.
func loadSides(ctx context.Context, d Dirs) (base, head *Set, err error) {
	baseEv, err := sideEvidence(firstSet(d.BaseStore, d.Store), firstSet(d.BaseTree, d.HeadTree))
	if err != nil {
		return nil, nil, err
	}
	headEv, err := sideEvidence(d.Store, d.HeadTree)
	if err != nil {
		return nil, nil, err
	}
	if base, err = LoadSet(ctx, d.Base, baseEv); err != nil {
		return nil, nil, err
	}
	if head, err = LoadSet(ctx, d.Head, headEv); err != nil {
		return nil, nil, err
	}
	return base, head, nil
}

// sideEvidence is one side's store and the workloads under its tree.
func sideEvidence(storeDir, tree string) (Evidence, error) {
	wb, err := vm.NewWorkbench(storeDir)
	if err != nil {
		return Evidence{}, err
	}
	// Each side is its own trust scope (the head may come from a pull
	// request): its own memo, never the other side's.
	wb.Verified = &vm.VerifiedReceipts{}
	ws, err := civerify.LoadWorkloads(tree)
	if err != nil {
		return Evidence{}, err
	}
	return Evidence{Store: wb, StoreDir: storeDir, Workloads: ws}, nil
}

func firstSet(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
