// Package backends lists the executor backends built into Assay that live
// in packages of their own. Importing it (for its side effect, as the
// assay binary and the tests that run live backends do) registers each in
// engine/effect's executor registry; the backends engine/effect
// implements itself (scripted:, replay:, cmd:, gateway:, apple) are
// always registered.
//
// Adding a backend is its package, declaring an effect.Scheme, plus one
// line here. Nothing else names a concrete backend: engine/vm builds
// executors through effect.Build and the harness records and replays live
// ones through the scheme's effect.Live (docs/architecture.md).
package backends

import (
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/effect/anthropic"
	"github.com/algal-assay/assay/engine/effect/openai"
)

func init() {
	effect.Register(openai.Scheme)
	effect.Register(anthropic.Scheme)
}
