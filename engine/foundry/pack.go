package foundry

import (
	"context"
	"fmt"

	"github.com/algal-assay/assay/engine/bundle"
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/internal/atomicfile"
)

// PackOptions say where `assay foundry pack`, `search-pack` and `export`
// write the promoted organism's closure.
type PackOptions struct {
	// Search reads the promoted digest of an algal.search.v1 report's
	// result rather than of a foundry report.
	Search bool
	// Out is the bundle directory (ToDir: <hex>.bundle.json written as
	// upstream names it, an existing file with other bytes being
	// DIGEST_MISMATCH) or else the bundle file (written atomically).
	Out   string
	ToDir bool
}

// Packed is what packing wrote: the verification that permitted it, the
// promoted root, the bundle and the file it was written to. A report that
// does not verify packs nothing: Bundle is nil and Verification says why.
type Packed struct {
	Verification *Verification
	Root, Path   string
	Bundle       *bundle.Bundle
}

// Pack verifies a foundry or search report v offline against ev and only
// then packs its promoted organism's closure from st into opts.Out.
func Pack(ctx context.Context, v any, ev evidence.Store, st store.Store, opts PackOptions) (*Packed, error) {
	root, err := Promoted(v, opts.Search)
	if err != nil {
		return nil, err
	}
	res, err := VerifyDocument(ctx, v, ev)
	if err != nil {
		return nil, err
	}
	if !res.OK {
		return &Packed{Verification: res, Root: root}, nil
	}
	b, err := bundle.Pack(st, root)
	if err != nil {
		return nil, err
	}
	p := &Packed{Verification: res, Root: root, Bundle: b, Path: opts.Out}
	if opts.ToDir {
		p.Path, err = bundle.WriteInto(opts.Out, b)
		return p, err
	}
	data, err := canon.Encode(b.Value())
	if err != nil {
		return nil, err
	}
	if err := atomicfile.Write(opts.Out, data); err != nil {
		return nil, &fault.Error{Code: fault.IOFailed, Message: fmt.Sprintf("%s: %v", opts.Out, err)}
	}
	return p, nil
}

// Value is what a pack prints: {"ok":true,"promoted","bundle","manifests","values"}.
func (p *Packed) Value() map[string]any {
	return map[string]any{"ok": true, "promoted": p.Root, "bundle": p.Path, "manifests": float64(len(p.Bundle.Manifests)), "values": float64(len(p.Bundle.Values))}
}
