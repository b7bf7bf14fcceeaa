package effect

import (
	"context"

	"github.com/algal-assay/assay/engine/fault"
)

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
