package vm

import (
	"context"
	"fmt"
	"strings"

	"github.com/algal-assay/assay/engine/bundle"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/store"
)

// What a verb that reads an organism without running it (check, explain,
// tool-def, verify, replay, pack) needs from the store: a view that never
// writes it, children admitted from a modules directory, a manifest
// compiled with its embedding graph, and host tools typed from a registry
// file.

// OpenOverlay opens the file store under dir and an overlay over it
// holding the *.algal.json modules of the directory modules (none when
// ""): what is put into the overlay never reaches dir.
func OpenOverlay(dir, modules string) (*store.FileStore, *store.Overlay, error) {
	base, err := store.OpenFileStore(dir)
	if err != nil {
		return nil, nil, err
	}
	view := store.NewOverlay(base)
	if modules != "" {
		if err := AdmitModules(view, modules); err != nil {
			return nil, nil, err
		}
	}
	return base, view, nil
}

// AdmitOptions say where an admitted manifest's children resolve from and
// how its host tool cells are typed.
type AdmitOptions struct {
	// Store holds the children named by digest (read first).
	Store store.Store
	// Transports is a transports file consulted only on a local miss
	// ("" for none).
	Transports string
	// Tools is a host tool registry file typing tool cells ("" for none).
	Tools string
}

// Admit compiles m with its embedding graph: children resolve from the
// store first and only a miss goes to the cell's transport.
func Admit(m *manifest.Manifest, opts AdmitOptions) (*manifest.Compiled, error) {
	r := &bundle.Resolver{Store: opts.Store}
	var err error
	if opts.Transports != "" {
		if r.Transports, err = bundle.LoadTransports(opts.Transports); err != nil {
			return nil, err
		}
	}
	mo := manifest.Options{Resolver: r}
	if mo.Tools, err = ToolSignaturesFile(opts.Tools); err != nil {
		return nil, err
	}
	return manifest.Compile(m, mo)
}

// ToolSignaturesFile types every tool of the host tool registry file at
// path (none when path is empty).
func ToolSignaturesFile(path string) (map[string]manifest.Signature, error) {
	if path == "" {
		return nil, nil
	}
	reg, err := effect.LoadTools(path)
	if err != nil {
		return nil, err
	}
	return ToolSignatures(reg)
}

// ManifestFor is the manifest of a receipt: the file given, or else the
// receipt's manifest (manifestDigest) read from st.
func ManifestFor(st store.Store, manifestDigest, file string) (*manifest.Manifest, error) {
	if file != "" {
		return manifest.ReadFile(file)
	}
	mv, err := store.Load(st, store.Manifests, manifestDigest)
	if err != nil {
		return nil, err
	}
	return manifest.ParseValue(mv)
}

// PrefetchFile fetches the closure of m that st lacks through the
// transports file at path (nothing when path is empty).
func PrefetchFile(ctx context.Context, st store.Store, m *manifest.Manifest, path string) error {
	if path == "" {
		return nil
	}
	t, err := bundle.LoadTransports(path)
	if err != nil {
		return err
	}
	_, err = bundle.Prefetch(ctx, st, m, t)
	return err
}

// Readable is the verification report for people (`assay verify` on a
// terminal).
func (r *Report) Readable() string {
	var b strings.Builder
	if r.OK {
		fmt.Fprintf(&b, "verified: the replay reproduces the receipt (outcome %s)\ndigest %s\n", r.Outcome, r.Digest)
		return b.String()
	}
	fmt.Fprintf(&b, "NOT VERIFIED: %d mismatch(es)\n", len(r.Mismatches))
	for _, m := range r.Mismatches {
		fmt.Fprintf(&b, "  - %s\n", m)
	}
	if r.Digest != "" {
		fmt.Fprintf(&b, "replayed outcome %s, digest %s\n", r.Outcome, r.Digest)
	}
	return b.String()
}

// OpenRunStore opens the store a manifest run (run, resume, call) writes
// to: the file store under dir when the run persists, else a memory
// overlay over it that leaves dir as it was; the *.algal.json modules of
// the directory modules ("" for none) are admitted into it first.
func OpenRunStore(dir, modules string, persist bool) (store.Store, error) {
	base, err := store.OpenFileStore(dir)
	if err != nil {
		return nil, err
	}
	var st store.Store = base
	if !persist {
		st = store.NewOverlay(base)
	}
	if modules != "" {
		if err := AdmitModules(st, modules); err != nil {
			return nil, err
		}
	}
	return st, nil
}
