package effect

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/algal-assay/assay/engine/fault"
)

// FromSpec builds the executor a bench system's executors map names:
// scripted:<file> (relative to baseDir), cmd:<command> (sh -c, 120 s, cwd
// baseDir), gateway:<model> or apple. Live model backends are not built
// into Assay: they are admitted with their real capabilities (agent,
// classifier) but every call is unbound, so routing and receipts keep their
// shape and a run never silently reaches the network.
func FromSpec(id, spec, baseDir string) (Executor, error) {
	switch {
	case strings.HasPrefix(spec, "scripted:") && len(spec) > len("scripted:"):
		p := spec[len("scripted:"):]
		if !filepath.IsAbs(p) {
			p = filepath.Join(baseDir, p)
		}
		return LoadScripted(id, p)
	case strings.HasPrefix(spec, "cmd:") && len(spec) > len("cmd:"):
		return NewCommand(id, spec[len("cmd:"):], baseDir, DefaultCommandTimeout)
	case strings.HasPrefix(spec, "gateway:") && len(spec) > len("gateway:"):
		return &Unavailable{id: id, reason: "configure AI_GATEWAY_API_KEY or VERCEL_OIDC_TOKEN (live gateway calls are not built into Assay)"}, nil
	case spec == "apple":
		return &Unavailable{id: id, reason: "Apple Foundation Models requires macOS"}, nil
	}
	return nil, Errorf(fault.Parse, "executor %q: unknown spec (want gateway:<model>, scripted:<file>, cmd:<command>, or apple)", id)
}

// Unavailable is an admitted model executor that cannot be reached here:
// every call fails EFFECT_UNBOUND with its reason.
type Unavailable struct {
	id     string
	reason string
}

// NewUnavailable admits id as a model executor that always fails unbound.
func NewUnavailable(id, reason string) *Unavailable { return &Unavailable{id: id, reason: reason} }

// ID implements Executor.
func (u *Unavailable) ID() string { return u.id }

// Describe implements Executor.
func (u *Unavailable) Describe() Descriptor { return Descriptor{Effects: ModelEffects} }

// Execute implements Executor.
func (u *Unavailable) Execute(context.Context, Request) (Response, error) {
	return Response{}, Errorf(fault.EffectUnbound, "%s", u.reason)
}
