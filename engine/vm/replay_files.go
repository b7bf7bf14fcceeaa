package vm

import (
	"context"
	"io"

	"github.com/algal-assay/assay/engine/bundle"
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/receipt"
	"github.com/algal-assay/assay/engine/store"
)

// ReplayFiles are the inputs of `assay replay` as the command line names
// them: a recorded receipt file, the revised manifest file, and what
// answers what the record cannot.
type ReplayFiles struct {
	// Dir is the file store holding child manifests and values, read
	// through an overlay holding the *.algal.json of Modules.
	Dir, Modules string
	// Receipt is the recorded algal.run.v1; With the revised manifest.
	Receipt, With string
	// Args is an args file merged over the recorded args ("-": Stdin).
	Args  string
	Stdin io.Reader
	// Responses is a scripted executor table for requests the record
	// cannot answer; Tools a host tool registry (signatures only);
	// Transports a transports file fetching missing closures first.
	Responses, Tools, Transports string
	// Write persists the revised receipt and manifest into Dir.
	Write bool
}

// Replay reads the files and replays the revision against the record
// (ReplayRevision). Only Write ever changes the store: modules and
// fetched closures go into the overlay.
func (f ReplayFiles) Replay(ctx context.Context) (*Comparison, error) {
	st, view, err := OpenOverlay(f.Dir, f.Modules)
	if err != nil {
		return nil, err
	}
	rec, err := receipt.ReadFile(f.Receipt)
	if err != nil {
		return nil, err
	}
	revision, err := canon.ReadFile(f.With, manifest.MaxManifestBytes)
	if err != nil {
		return nil, err
	}
	opts, err := f.options(view)
	if err != nil {
		return nil, err
	}
	transports, err := f.loadTransports()
	if err != nil {
		return nil, err
	}
	var persist store.Store
	if f.Write {
		persist = st
	}
	return ReplayRevision(ctx, rec, revision, opts, transports, persist)
}

// options are the args, the executor and the tool signatures the files
// give a replay over view.
func (f ReplayFiles) options(view store.Store) (ReplayOptions, error) {
	opts := ReplayOptions{Store: view}
	var err error
	if f.Args != "" {
		if opts.Args, err = receipt.ReadArgs(f.Args, f.Stdin); err != nil {
			return opts, err
		}
	}
	if f.Responses != "" {
		s, err := effect.LoadScripted("scripted", f.Responses)
		if err != nil {
			return opts, err
		}
		opts.Executors = append(opts.Executors, s)
	}
	opts.ToolSignatures, err = ToolSignaturesFile(f.Tools)
	return opts, err
}

// loadTransports reads the transports file (nil without one).
func (f ReplayFiles) loadTransports() (bundle.Transports, error) {
	if f.Transports == "" {
		return nil, nil
	}
	t, err := bundle.LoadTransports(f.Transports)
	if err != nil {
		return nil, err
	}
	if t == nil {
		t = bundle.Transports{}
	}
	return t, nil
}
