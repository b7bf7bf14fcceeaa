package bundle

import (
	"context"
	"path/filepath"
	"strings"
	"time"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/store"
)

// Transport configuration bounds.
const (
	MaxTransports          = 16
	MaxTransportsFileBytes = 1_048_576
)

// Transports maps transport names (the via of organism, repeat and each
// cells) to bundle sources.
type Transports map[string]Source

// LoadTransports reads a --transports file: a JSON object of at most 16
// entries mapping a transport name to a directory or an http(s) base URL,
// or to {"source": <directory or URL>, "timeoutMs": 1..600000}. Relative
// directories resolve against the file's directory.
func LoadTransports(path string) (Transports, error) {
	v, err := canon.ReadFile(path, MaxTransportsFileBytes)
	if err != nil {
		return nil, err
	}
	base, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, errf(fault.IOFailed, "%s: %v", path, err)
	}
	t, err := ParseTransports(v, base)
	if err != nil {
		return nil, &fault.Error{Code: codeOf(err), Message: path + ": " + err.Error()}
	}
	return t, nil
}

// ParseTransports admits a transports value; relative directories resolve
// in base ("" keeps them as given).
func ParseTransports(v any, base string) (Transports, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errf(fault.Parse, "transports must be an object of name to directory or URL")
	}
	if len(m) > MaxTransports {
		return nil, errf(fault.BudgetExhausted, "%d transports, over %d", len(m), MaxTransports)
	}
	out := Transports{}
	for _, name := range canon.SortedKeys(m) {
		if !canon.IsID(name) {
			return nil, errf(fault.Parse, "transport name %q must be a lowercase id", name)
		}
		spec, timeout, err := entry(name, m[name])
		if err != nil {
			return nil, err
		}
		src, err := NewSource(inBase(base, spec), timeout)
		if err != nil {
			return nil, &fault.Error{Code: codeOf(err), Message: "transport " + name + ": " + err.Error()}
		}
		out[name] = src
	}
	return out, nil
}

// inBase resolves a relative directory spec in base ("" keeps it).
func inBase(base, spec string) string {
	if base != "" && !strings.Contains(spec, "://") && !filepath.IsAbs(spec) {
		return filepath.Join(base, spec)
	}
	return spec
}

func entry(name string, v any) (string, time.Duration, error) {
	if s, ok := v.(string); ok {
		return s, 0, nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return "", 0, errf(fault.Parse, "transport %s must be a directory, a URL or {source, timeoutMs}", name)
	}
	if k, bad := canon.UnknownKey(obj, "source", "timeoutMs"); bad {
		return "", 0, errf(fault.Parse, "transport %s has unknown field %q", name, k)
	}
	s, _ := obj["source"].(string)
	if s == "" {
		return "", 0, errf(fault.Parse, "transport %s needs a source", name)
	}
	timeout, err := timeoutOf(name, obj)
	if err != nil {
		return "", 0, err
	}
	return s, timeout, nil
}

// timeoutOf reads an entry's optional timeoutMs (0 when absent).
func timeoutOf(name string, obj map[string]any) (time.Duration, error) {
	raw, ok := obj["timeoutMs"]
	if !ok {
		return 0, nil
	}
	f, ok := raw.(float64)
	if !ok || f != float64(int64(f)) || f < MinTimeoutMs || f > MaxTimeoutMs {
		return 0, errf(fault.Parse, "transport %s timeoutMs must be an integer in %d..%d", name, MinTimeoutMs, MaxTimeoutMs)
	}
	return time.Duration(f) * time.Millisecond, nil
}

// Of builds sources from plain name -> directory-or-URL specs (the
// engine's Host.Transports form) with the default deadline.
func Of(specs map[string]string) (Transports, error) {
	out := Transports{}
	for name, spec := range specs {
		src, err := NewSource(spec, 0)
		if err != nil {
			return nil, err
		}
		out[name] = src
	}
	return out, nil
}

// Resolver resolves child manifests from a store and, only on a local
// miss, from the cell's transport: the fetched closure is installed into
// the store and resolution retries locally. Served records which transport
// supplied each root.
type Resolver struct {
	Store      store.Store
	Transports Transports
	Context    context.Context
	Served     map[string]string
}

// ResolveManifest implements manifest.Resolver.
func (r *Resolver) ResolveManifest(digest, via string) (any, error) {
	v, ok, err := r.Store.Get(store.Manifests, digest)
	if err != nil || ok || via == "" {
		return v, err
	}
	if err := r.Install(digest, via); err != nil {
		return nil, err
	}
	return store.Load(r.Store, store.Manifests, digest)
}

// Install fetches the closure rooted at digest over the named transport
// and installs it. A transport that is not configured is STORE_MISS.
func (r *Resolver) Install(digest, via string) error {
	src, ok := r.Transports[via]
	if !ok {
		return errf(fault.StoreMiss, "transport %s is not configured (needed for %s)", via, digest)
	}
	ctx := r.Context
	if ctx == nil {
		ctx = context.Background()
	}
	b, err := Fetch(ctx, src, digest)
	if err != nil {
		return err
	}
	if err := b.Install(r.Store); err != nil {
		return err
	}
	if r.Served == nil {
		r.Served = map[string]string{}
	}
	r.Served[digest] = via
	return nil
}

// Prefetch walks m's embedding graph (organism, repeat and each cells,
// recursively) and fetches every child st lacks over its cell's transport
// into st. Verification uses it to load closures into an overlay before an
// offline replay that itself consults no transports; check uses it to
// admit manifests whose children are remote. It returns the transport that
// served each fetched root.
func Prefetch(ctx context.Context, st store.Store, m *manifest.Manifest, t Transports) (map[string]string, error) {
	r := &Resolver{Store: st, Transports: t, Context: ctx}
	seen := map[string]bool{m.Digest: true}
	queue := []*manifest.Manifest{m}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, c := range cur.Cells {
			if c.Embed == nil || c.Embed.Manifest == "" || seen[c.Embed.Manifest] {
				continue
			}
			seen[c.Embed.Manifest] = true
			child, err := r.child(c.Embed)
			if err != nil {
				return nil, err
			}
			queue = append(queue, child)
		}
	}
	return r.Served, nil
}

// child resolves and admits the manifest an embedding cell names.
func (r *Resolver) child(e *manifest.EmbedCell) (*manifest.Manifest, error) {
	v, err := r.ResolveManifest(e.Manifest, e.Via)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, errf(fault.StoreMiss, "manifest %s is not in the store", e.Manifest)
	}
	return manifest.ParseValue(v)
}

func codeOf(err error) string {
	if c := fault.CodeOf(err); c != "" {
		return c
	}
	return fault.IOFailed
}
