package vm

import (
	"context"

	"github.com/algal-assay/assay/engine/receipt"
)

// VerifyFiles are the inputs of `assay verify` as the command line names
// them.
type VerifyFiles struct {
	// Dir is the file store, read through an overlay holding the
	// *.algal.json of Modules and any fetched closure: verification never
	// writes the store it reads.
	Dir, Modules string
	// Receipt is the algal.run.v1 file; Manifest its manifest file ("":
	// the receipt's manifestDigest, read from the store).
	Receipt, Manifest string
	// Transports is a transports file fetching missing closures before the
	// replay; Tools a host tool registry typing recorded tool effects.
	Transports, Tools string
}

// Verify reads the files and verifies the receipt offline (Verify):
// nothing runs live.
func (f VerifyFiles) Verify(ctx context.Context) (*Report, error) {
	_, st, err := OpenOverlay(f.Dir, f.Modules)
	if err != nil {
		return nil, err
	}
	rec, err := receipt.ReadFile(f.Receipt)
	if err != nil {
		return nil, err
	}
	d, _ := rec["manifestDigest"].(string)
	m, err := ManifestFor(st, d, f.Manifest)
	if err != nil {
		return nil, err
	}
	if err := PrefetchFile(ctx, st, m, f.Transports); err != nil {
		return nil, err
	}
	opts := VerifyOptions{Store: st}
	if opts.ToolSignatures, err = ToolSignaturesFile(f.Tools); err != nil {
		return nil, err
	}
	return Verify(rec, m, opts)
}
