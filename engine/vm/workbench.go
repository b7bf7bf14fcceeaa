package vm

import (
	"context"
	"fmt"
	"slices"

	"github.com/algal-assay/assay/engine/bundle"
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/store"
)

// Workbench runs organisms for the measurement layers (bench, foundry, the
// harness) over one store, and serves the evidence their verification
// reads: manifests, receipts and offline replays. It implements
// evidence.Runner and evidence.Store.
type Workbench struct {
	Store store.Store
	// Tools is the host tool registry runs may call (nil: none).
	Tools *effect.Tools
	// Transports maps transport names to bundle directories.
	Transports map[string]string
	// Sources are configured transports (directories or URLs), consulted
	// on a local miss as for run.
	Sources bundle.Transports
	// Extra executors (name -> spec, paths relative to the working
	// directory) serve every contender after its own: upstream's
	// --responses and --executor-cmd flags. They never displace a
	// contender's default executor, and a name the contender defines
	// itself is not added.
	Extra map[string]string
	// CacheEffects wraps every executor with the store's memo index.
	CacheEffects bool
	// Build, when set, is asked first for every executor spec (see
	// WithExecutors).
	Build evidence.ExecutorBuilder
	// Getenv reads the environment for live backends built here (nil:
	// os.LookupEnv).
	Getenv effect.Env
	// Verified, when set, remembers the receipts this workbench's
	// verifications replayed cleanly (see VerifiedReceipts: one trust
	// scope per memo).
	Verified *VerifiedReceipts
}

// WithExecutors implements evidence.LiveRunner: a copy of w that asks
// build first for every executor spec.
func (w *Workbench) WithExecutors(build evidence.ExecutorBuilder) evidence.Runner {
	c := *w
	c.Build = build
	return &c
}

// WithoutMemo is a copy of w that neither consults nor fills the effect
// memo: the harness runs repeated samples through it, since a memo hit
// would answer repeat 2 with what repeat 1 stored.
func (w *Workbench) WithoutMemo() evidence.Runner {
	c := *w
	c.CacheEffects = false
	return &c
}

// NewWorkbench opens a workbench over the file store in dir, or over a
// fresh memory store when dir is empty. The file store is a batch: its
// writes become durable at Commit, which bench.Run and foundry.Run call
// before they return a report (evidence.Committer).
func NewWorkbench(dir string) (*Workbench, error) {
	if dir == "" {
		return &Workbench{Store: store.NewMemStore()}, nil
	}
	st, err := store.OpenFileStore(dir)
	if err != nil {
		return nil, err
	}
	return &Workbench{Store: st.Batch()}, nil
}

// Commit implements evidence.Committer: everything the workbench stored
// so far becomes durable (a no-op over a store that is durable per write).
func (w *Workbench) Commit() error { return store.Commit(w.Store) }

// AdmitModules puts every *.algal.json directly inside dir into st, so
// cells naming children by digest resolve whatever order runs take.
func AdmitModules(st store.Store, dir string) error {
	mods, err := manifest.LoadModules(dir)
	if err != nil {
		return err
	}
	for _, d := range canon.SortedKeys(mods) {
		if _, err := st.Put(store.Manifests, mods[d]); err != nil {
			return err
		}
	}
	return nil
}

// Open implements evidence.Runner: it admits m into the store and builds
// the executors a contender's spec map names. Names are admitted in
// alphabetical order, so the first name is the default executor, as
// upstream's native CLI does; cells reach the others by route.
func (w *Workbench) Open(_ context.Context, m *manifest.Manifest, specs map[string]string) (evidence.Session, error) {
	if _, err := w.Store.Put(store.Manifests, m.Value); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(specs))
	for n := range specs {
		names = append(names, n)
	}
	slices.Sort(names)
	extra := make([]string, 0, len(w.Extra))
	for n := range w.Extra {
		if _, own := specs[n]; !own {
			extra = append(extra, n)
		}
	}
	slices.Sort(extra)
	s := &session{w: w, m: m}
	sigs, _ := ToolSignatures(w.Tools)
	execs := make([]effect.Executor, 0, len(names))
	for i, name := range append(names, extra...) {
		spec := specs[name]
		if i >= len(names) {
			spec = w.Extra[name]
		}
		if w.Build != nil {
			built, ok, err := w.Build(name, spec, m)
			if err != nil {
				return nil, fmt.Errorf("executor %q: %w", name, err)
			}
			if ok {
				execs = append(execs, built)
				continue
			}
		}
		// Config specs arrive resolved against the config's directory
		// (effect.ResolveSpec) and flag specs relative to the working
		// directory: neither is joined to a base again. A live spec here
		// (no recording in front: Build passed it by) dials its backend
		// with the environment's conventions and default bounds.
		ex, ordered, err := effect.Build(name, spec, effect.Site{Manifest: m, Signatures: sigs, Env: w.Getenv})
		if err != nil {
			return nil, err
		}
		s.ordered = s.ordered || ordered
		if w.CacheEffects {
			c := effect.NewCached(ex, w.Store)
			c.Accept = AcceptOutput
			ex = c
		}
		execs = append(execs, ex)
	}
	s.router = effect.NewRouter(execs...)
	s.router.Tools = w.Tools
	return s, nil
}

type session struct {
	w       *Workbench
	m       *manifest.Manifest
	router  *effect.Router
	ordered bool
}

func (s *session) Ordered() bool { return s.ordered }

// Run executes the manifest and stores the receipt; the digest returned is
// the store's reference to it.
func (s *session) Run(ctx context.Context, args map[string]any) (map[string]any, string, error) {
	host := &Host{Store: s.w.Store, Router: s.router, Transports: s.w.Transports, Sources: s.w.Sources, Context: ctx}
	p, err := runChecked(s.m, args, host)
	if err != nil {
		return nil, "", err
	}
	// The bytes sealing encoded are the ones stored: no second encoding.
	ref, err := store.PutEncoded(s.w.Store, store.Runs, p.rec, p.canonical)
	if err != nil {
		return nil, "", err
	}
	return p.rec, ref, nil
}

// Manifest implements evidence.Store.
func (w *Workbench) Manifest(digest string) (*manifest.Manifest, error) {
	v, err := store.Load(w.Store, store.Manifests, digest)
	if err != nil {
		return nil, err
	}
	m, err := manifest.ParseValue(v)
	if err != nil {
		return nil, err
	}
	if m.Digest != digest {
		return nil, &fault.Error{Code: "DIGEST_MISMATCH", Message: fmt.Sprintf("stored manifest %s normalizes to %s", digest, m.Digest)}
	}
	return m, nil
}

// encodedGetter is a store that reads an object's bytes checked against
// its digest without parsing them (store.FileStore).
type encodedGetter interface {
	GetEncoded(ns store.Namespace, digest string) ([]byte, bool, error)
}

// Receipt implements evidence.Store. A workbench that remembers its
// verifications (Verified) reads the receipt's bytes, parses them and
// keeps them until the receipt's replay when they are canonical (see
// VerifiedReceipts.read); anything but a canonical receipt that parses
// is read again through the store's Get, whose errors name what is wrong.
func (w *Workbench) Receipt(digest string) (map[string]any, error) {
	if g, ok := w.Store.(encodedGetter); ok && w.Verified != nil {
		if b, ok, err := g.GetEncoded(store.Runs, digest); err == nil && ok {
			v, canonical, err := canon.ParseCanonical(b, store.MaxObjectBytes)
			if rec, isObject := v.(map[string]any); err == nil && isObject {
				if canonical {
					w.Verified.keepRead(digest, b)
				}
				return rec, nil
			}
		}
	}
	v, err := store.Load(w.Store, store.Runs, digest)
	if err != nil {
		return nil, err
	}
	rec, ok := v.(map[string]any)
	if !ok {
		return nil, &fault.Error{Code: fault.Parse, Message: fmt.Sprintf("stored receipt %s is not an object", digest)}
	}
	return rec, nil
}

// Replay implements evidence.Store: an offline verification that reads
// the store through an overlay and reaches no executor.
func (w *Workbench) Replay(_ context.Context, rec map[string]any, m *manifest.Manifest) ([]string, error) {
	return w.replay(rec, nil, m)
}

// replay is Replay of a receipt whose canonical bytes may be at hand
// (VerifyOptions.Canonical).
func (w *Workbench) replay(rec map[string]any, canonical []byte, m *manifest.Manifest) ([]string, error) {
	sigs, err := ToolSignatures(w.Tools)
	if err != nil {
		return nil, err
	}
	rep, err := Verify(rec, m, VerifyOptions{Store: w.Store, ToolSignatures: sigs, Canonical: canonical})
	if err != nil {
		return nil, err
	}
	return rep.Mismatches, nil
}
