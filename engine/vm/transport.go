package vm

import (
	"github.com/algal-assay/assay/engine/bundle"
	"github.com/algal-assay/assay/engine/fault"
)

// source returns the bundle source a transport name maps to: a configured
// Source first, else a Transports spec (directory or http(s) URL) with the
// default deadline.
func (r *runner) source(via string) (bundle.Source, *Failure) {
	if src, ok := r.host.Sources[via]; ok && src != nil {
		return src, nil
	}
	spec, ok := r.host.Transports[via]
	if !ok {
		return nil, failf(fault.StoreMiss, "transport %s is not configured", via)
	}
	src, err := bundle.NewSource(spec, 0)
	if err != nil {
		return nil, asFailure(err)
	}
	return src, nil
}

// fetchBundle installs the algal.bundle.v1 closure a transport serves for
// digest. It is reached only on a local miss. Every manifest and value
// re-hashes against its key and the bundle must be rooted at digest
// (DIGEST_MISMATCH otherwise); an unconfigured transport or an absent
// bundle is STORE_MISS. Verification never consults transports: the
// closure must already be in the store it replays against.
func (r *runner) fetchBundle(digest, via string) *Failure {
	if r.host.recorded != nil {
		return failf(fault.StoreMiss, "manifest %s is not in the store (verification uses no transports)", digest)
	}
	src, f := r.source(via)
	if f != nil {
		return f
	}
	b, err := bundle.Fetch(r.ctx, src, digest)
	if err != nil {
		return asFailure(err)
	}
	if err := b.Install(r.host.Store); err != nil {
		return asFailure(err)
	}
	return nil
}
