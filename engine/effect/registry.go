package effect

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
)

// The executor registry: every kind of executor spec Assay knows is one
// Scheme registered here, and every layer that reads, checks, resolves or
// builds a spec asks the registry instead of matching prefixes itself.
// This package registers the backends it implements (scripted:, replay:,
// cmd:, gateway: and apple); a backend in its own package (openai:)
// declares a Scheme and is registered by the package that lists the
// built-in backends (engine/effect/backends), which binaries and the tests
// that need live backends import. Adding a backend is its package plus one
// line in that list; see docs/architecture.md.

// Scheme is one kind of executor spec: how it is written, where it may be
// written, how its executor is built and, for a live model backend, how it
// is configured and recorded.
type Scheme struct {
	// Name is the spec prefix without its colon ("scripted" for
	// scripted:<file>); a Bare scheme's spec is the name alone ("apple").
	Name string
	Bare bool
	// Arg names the argument in messages ("<file>").
	Arg string
	// Path says the argument is a path, resolved against the directory of
	// the file that names it; Noun names what it points at in messages
	// ("scripted responses file").
	Path PathKind
	Noun string
	// Uses are the places a spec of this scheme may be written.
	Uses Use
	// New builds the executor id for the argument (already resolved). A
	// live scheme may leave it nil: Build then dials Live's default
	// configuration for the argument.
	New func(id, arg string, at Site) (Executor, error)
	// Ordered reports whether ex answers by request order (a queued
	// scripted table, a replay), so a session serving it keeps case order
	// to stay reproducible (nil: never).
	Ordered func(ex Executor) bool
	// Live is set for a backend that reaches a model server: its runs are
	// recorded into, and replayed from, the recording archive.
	Live *Live
}

// PathKind says whether and how a spec's argument is a path.
type PathKind int

// Path kinds.
const (
	NotPath PathKind = iota
	FilePath
	DirPath
)

// Use is a set of places an executor spec may be written.
type Use uint8

// Places a spec may be written.
const (
	// InConfig is a bench or foundry config file's executors map.
	InConfig Use = 1 << iota
	// InFlag is --executor NAME=SPEC and --executors FILE.
	InFlag
	// InWorkload is a workload's executors. A workload compiles to a
	// config, so a scheme used here is used InConfig too.
	InWorkload
)

// Site is what building an executor may need besides its spec.
type Site struct {
	// Dir resolves a relative path argument ("": as written).
	Dir string
	// Manifest is the organism the executor serves (a replay answers its
	// requests; a live backend offers its cells' tools).
	Manifest *manifest.Manifest
	// Signatures type the host tools agent cells may call.
	Signatures map[string]manifest.Signature
	// Env reads the environment for live backends (nil: os.LookupEnv).
	Env Env
}

// Env reads the process environment; tests pass their own.
type Env func(string) (string, bool)

// Live is what the harness needs of a live model backend: its workload
// configuration (a backends entry whose api is the scheme's name), its
// default configuration for a bare model, and its client. Through it every
// live scheme gets the recording archive in front of it (record, replay,
// could-not-replay) without code of its own.
type Live struct {
	// Serves says what the backend reaches, for messages ("any
	// OpenAI-compatible chat-completions server").
	Serves string
	// Settings are the keys of a backends entry besides api, in the order
	// they are checked.
	Settings []Setting
	// Configure builds the configuration of a backends entry from the
	// settings written (key -> value as Setting.Kind decodes it). An
	// error's message starts with the key it is about.
	Configure func(values map[string]any) (LiveConfig, error)
	// Default is the configuration a spec naming a model, not a declared
	// backend, gets.
	Default func(model string) LiveConfig
	// Dial checks configuration c and builds its client; id is the
	// executor id it answers as.
	Dial func(id string, c LiveConfig, env Env) (LiveClient, error)
}

// LiveConfig is one live backend's configuration.
type LiveConfig interface {
	// Validate checks the configuration; the message names the field.
	Validate() error
	// Value is what decides an answer, never a secret: it enters the run
	// identity and the configuration digest.
	Value() map[string]any
	// Descriptor is what a backend of this configuration declares to the
	// router; a recording answering in its place declares the same.
	Descriptor() Descriptor
	// Concurrency is how many requests may be in flight.
	Concurrency() int
}

// LiveClient is a dialled live backend, shared by every contender of a run
// so its bounds on concurrency and rate hold across all of them.
type LiveClient interface {
	// Serve is the executor answering m's requests, offering each cell
	// the tools m lists (typed by sigs, else the builtin registry).
	Serve(m *manifest.Manifest, sigs map[string]manifest.Signature) Executor
}

// Setting is one key of a live backend's workload configuration.
type Setting struct {
	Key      string
	Kind     SettingKind
	Required bool
	// Min and Max bound an Integer.
	Min, Max int
	// Check, when set, refuses a decoded value where it is written.
	Check func(v any) error
}

// SettingKind is how a setting's value is written and decoded.
type SettingKind int

// Setting kinds and the Go values they decode to.
const (
	Text    SettingKind = iota // a non-empty string: string
	String                     // a string: string
	Number                     // a finite number: float64
	Integer                    // an integer in [Min, Max]: int
	Headers                    // a mapping of strings: map[string]string
	Bool                       // true or false: bool
	Texts                      // a list of non-empty strings: []string
)

var registry struct {
	sync.RWMutex
	schemes []*Scheme
}

// Register adds s to the registry. It panics when s is malformed or its
// name is taken: registration happens at program start, and two backends
// answering to one scheme would make specs ambiguous.
func Register(s Scheme) {
	if s.Name == "" || strings.ContainsAny(s.Name, ": ") || s.Uses == 0 || s.Uses&InWorkload != 0 && s.Uses&InConfig == 0 || s.New == nil && s.Live == nil {
		panic(fmt.Sprintf("effect: scheme %q is malformed", s.Name))
	}
	if s.Live != nil && (s.Live.Configure == nil || s.Live.Default == nil || s.Live.Dial == nil) {
		panic(fmt.Sprintf("effect: live scheme %q lacks Configure, Default or Dial", s.Name))
	}
	registry.Lock()
	defer registry.Unlock()
	for _, o := range registry.schemes {
		if o.Name == s.Name {
			panic(fmt.Sprintf("effect: scheme %q registered twice", s.Name))
		}
	}
	registry.schemes = append(registry.schemes, &s)
}

// Schemes lists the registered schemes in registration order.
func Schemes() []*Scheme {
	registry.RLock()
	defer registry.RUnlock()
	return append([]*Scheme(nil), registry.schemes...)
}

// LookupScheme returns the registered scheme called name.
func LookupScheme(name string) (*Scheme, bool) {
	for _, s := range Schemes() {
		if s.Name == name {
			return s, true
		}
	}
	return nil, false
}

// Spec is a parsed executor spec.
type Spec struct {
	Scheme *Scheme
	Arg    string
}

// String is the spec as written.
func (s Spec) String() string {
	if s.Scheme.Bare {
		return s.Scheme.Name
	}
	return s.Scheme.Name + ":" + s.Arg
}

// ParseSpec reads an executor spec: the one place a spec's scheme and
// argument are told apart. ok is false when no scheme registered for use
// reads it (an empty argument reads as nothing).
func ParseSpec(spec string, use Use) (Spec, bool) {
	for _, s := range Schemes() {
		if s.Uses&use == 0 {
			continue
		}
		if s.Bare {
			if spec == s.Name {
				return Spec{Scheme: s}, true
			}
			continue
		}
		if arg, ok := strings.CutPrefix(spec, s.Name+":"); ok && arg != "" {
			return Spec{Scheme: s, Arg: arg}, true
		}
	}
	return Spec{}, false
}

// Forms lists how the specs of every scheme registered for use are
// written, for messages: "scripted:<file>, cmd:<command> or apple". In a
// workload a live scheme's argument names a backend or a model.
func Forms(use Use) string {
	var forms []string
	for _, s := range Schemes() {
		if s.Uses&use == 0 {
			continue
		}
		switch {
		case s.Bare:
			forms = append(forms, s.Name)
		case s.Live != nil && use == InWorkload:
			forms = append(forms, s.Name+":<backend or model>")
		default:
			forms = append(forms, s.Name+":"+s.Arg)
		}
	}
	if len(forms) < 2 {
		return strings.Join(forms, "")
	}
	return strings.Join(forms[:len(forms)-1], ", ") + " or " + forms[len(forms)-1]
}

// LiveSpec reports whether spec names a live model backend.
func LiveSpec(spec string) bool {
	s, ok := ParseSpec(spec, InConfig|InFlag|InWorkload)
	return ok && s.Scheme.Live != nil
}

// ResolveSpec checks a spec written in a config file or flag (use) and
// joins a relative path argument to dir.
func ResolveSpec(spec, dir string, use Use) (string, error) {
	s, ok := ParseSpec(spec, use)
	if !ok {
		return "", fmt.Errorf("unknown executor spec %q (want %s)", spec, Forms(use))
	}
	if s.Scheme.Path != NotPath && !filepath.IsAbs(s.Arg) {
		s.Arg = filepath.Join(dir, s.Arg)
	}
	return s.String(), nil
}

// Build builds the executor id for spec at site: a path argument resolves
// against site.Dir, and a live backend dials its default configuration for
// the model named (a run that records goes through the harness's
// recording instead). ordered says the executor answers by request order.
// Errors name the executor or the file at fault.
func Build(id, spec string, at Site) (ex Executor, ordered bool, err error) {
	s, ok := ParseSpec(spec, InConfig|InFlag|InWorkload)
	if !ok {
		return nil, false, Errorf(fault.Parse, "executor %q: unknown spec (want %s)", id, Forms(InConfig|InFlag|InWorkload))
	}
	if s.Scheme.Path != NotPath && at.Dir != "" && !filepath.IsAbs(s.Arg) {
		s.Arg = filepath.Join(at.Dir, s.Arg)
	}
	if s.Scheme.New != nil {
		ex, err = s.Scheme.New(id, s.Arg, at)
	} else {
		ex, err = dialDefault(id, s, at)
	}
	if err != nil {
		return nil, false, err
	}
	return ex, s.Scheme.Ordered != nil && s.Scheme.Ordered(ex), nil
}

func dialDefault(id string, s Spec, at Site) (Executor, error) {
	env := at.Env
	if env == nil {
		env = os.LookupEnv
	}
	c, err := s.Scheme.Live.Dial(id, s.Scheme.Live.Default(s.Arg), env)
	if err != nil {
		return nil, fmt.Errorf("executor %q: %w", id, err)
	}
	return c.Serve(at.Manifest, at.Signatures), nil
}

// The backends this package implements.
func init() {
	Register(Scheme{
		Name: "scripted", Arg: "<file>", Path: FilePath, Noun: "scripted responses file", Uses: InConfig | InFlag | InWorkload,
		New: func(id, arg string, _ Site) (Executor, error) { return LoadScripted(id, arg) },
		Ordered: func(ex Executor) bool {
			sc, ok := ex.(*Scripted)
			return ok && sc.Queued()
		},
	})
	Register(Scheme{
		Name: "replay", Arg: "<dir>", Path: DirPath, Noun: "replay directory", Uses: InConfig | InWorkload,
		// The recording answers this manifest's requests, and prefers what
		// an executor of the same name answered; a repeated request is
		// served in record order.
		New: func(id, arg string, at Site) (Executor, error) {
			scope := ReplayScope{Executor: id}
			if at.Manifest != nil {
				scope.Manifest = at.Manifest.Digest
			}
			r, err := LoadReplayDirScoped(arg, scope)
			if err != nil {
				return nil, fmt.Errorf("executor %q: %w", id, err)
			}
			return r, nil
		},
		Ordered: func(Executor) bool { return true },
	})
	Register(Scheme{
		Name: "cmd", Arg: "<command>", Uses: InConfig | InFlag | InWorkload,
		New: func(id, arg string, at Site) (Executor, error) {
			return NewCommand(id, arg, at.Dir, DefaultCommandTimeout)
		},
	})
	// Model backends admitted with their real capabilities (agent,
	// classifier) but never reached: every call is unbound, so routing and
	// receipts keep their shape and a run never silently reaches the
	// network.
	Register(Scheme{
		Name: "gateway", Arg: "<model>", Uses: InConfig | InFlag,
		New: func(id, _ string, _ Site) (Executor, error) {
			return NewUnavailable(id, "configure AI_GATEWAY_API_KEY or VERCEL_OIDC_TOKEN (live gateway calls are not built into Assay)"), nil
		},
	})
	Register(Scheme{
		Name: "apple", Bare: true, Uses: InConfig | InFlag,
		New: func(id, _ string, _ Site) (Executor, error) {
			return NewUnavailable(id, "Apple Foundation Models requires macOS"), nil
		},
	})
}
