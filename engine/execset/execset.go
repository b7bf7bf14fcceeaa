// Package execset is the set of executors a command line names, as
// upstream's executor flags spell them: a scripted table (executor
// "scripted"), a command (executor "command"), named executors NAME=SPEC
// and a file of them, host tools, transports and the effect memo. It
// resolves the specs once, gives a workbench its extra executors, and
// builds the executors of one manifest run.
package execset

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/algal-assay/assay/engine/bundle"
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/engine/vm"
)

// Set is what the executor flags named. Errors in it are argument
// problems: plain errors, without a contract code.
type Set struct {
	// Responses is a scripted table file (executor "scripted").
	Responses string
	// Command is a shell command (executor "command").
	Command string
	// Tools is a host tool registry file; Transports a transports file.
	Tools, Transports string
	// CacheEffects serves and fills the store's effect memo index.
	CacheEffects bool
	// Named are NAME=SPEC pairs; NamedFile a JSON object of name to
	// command or spec.
	Named     []string
	NamedFile string
}

// maxNamedFile bounds the named executors file.
const maxNamedFile = 1 << 20

// executorName is the shape of an executor name (as in workloads).
var executorName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// NamedSpecs reads NamedFile and Named into name -> spec. A file value
// that names no spec kind is a command, as upstream's --executors reads
// it; scripted paths resolve against the file's directory (Named's
// against the working directory).
func (s Set) NamedSpecs() (map[string]string, error) {
	specs := map[string]string{}
	wd, err := os.Getwd()
	if err != nil {
		return nil, &fault.Error{Code: fault.IOFailed, Message: err.Error()}
	}
	if s.NamedFile != "" {
		if err := s.addFile(specs); err != nil {
			return nil, err
		}
	}
	for _, nv := range s.Named {
		name, spec, ok := strings.Cut(nv, "=")
		if !ok {
			return nil, fmt.Errorf("--executor wants NAME=SPEC, got %q", nv)
		}
		if err := s.add(specs, name, spec, wd, "--executor"); err != nil {
			return nil, err
		}
	}
	return specs, nil
}

// addFile adds the named executors of NamedFile.
func (s Set) addFile(specs map[string]string) error {
	v, err := canon.ReadFile(s.NamedFile, maxNamedFile)
	if err != nil {
		return err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("--executors %s: want a JSON object of executor name to command or spec", s.NamedFile)
	}
	dir := filepath.Dir(s.NamedFile)
	for _, name := range canon.SortedKeys(m) {
		spec, ok := m[name].(string)
		if !ok || spec == "" {
			return fmt.Errorf("--executors %s: executor %q: want a command or spec string", s.NamedFile, name)
		}
		if _, err := effect.ResolveSpec(spec, dir, effect.InConfig|effect.InFlag); err != nil {
			spec = "cmd:" + spec
		}
		if err := s.add(specs, name, spec, dir, "--executors "+s.NamedFile); err != nil {
			return err
		}
	}
	return nil
}

// add resolves one named executor into specs.
func (s Set) add(specs map[string]string, name, spec, dir, from string) error {
	if !executorName.MatchString(name) {
		return fmt.Errorf("%s: executor name %q: 1 to 64 letters, digits, dots, hyphens or underscores", from, name)
	}
	if name == "scripted" && s.Responses != "" || name == "command" && s.Command != "" {
		return fmt.Errorf("%s: executor name %q is taken by --responses / --executor-cmd", from, name)
	}
	if _, dup := specs[name]; dup {
		return fmt.Errorf("%s: executor %q is named twice", from, name)
	}
	resolved, err := effect.ResolveSpec(spec, dir, effect.InFlag)
	if err != nil {
		return fmt.Errorf("%s: executor %q: want %s, got %q", from, name, effect.Forms(effect.InFlag), spec)
	}
	specs[name] = resolved
	return nil
}

// ExtraSpecs names every executor of the set as a workbench spec: they
// serve every bench system and foundry candidate after the config's own
// executors.
func (s Set) ExtraSpecs() (map[string]string, error) {
	specs := map[string]string{}
	if s.Responses != "" {
		p, err := filepath.Abs(s.Responses)
		if err != nil {
			return nil, &fault.Error{Code: fault.IOFailed, Message: err.Error()}
		}
		specs["scripted"] = "scripted:" + p
	}
	if s.Command != "" {
		specs["command"] = "cmd:" + s.Command
	}
	named, err := s.NamedSpecs()
	if err != nil {
		return nil, err
	}
	maps.Copy(specs, named)
	return specs, nil
}

// ApplyTo gives a workbench the set's executors, tools, transports and
// memo.
func (s Set) ApplyTo(wb *vm.Workbench) error {
	specs, err := s.ExtraSpecs()
	if err != nil {
		return err
	}
	wb.Extra = specs
	wb.CacheEffects = s.CacheEffects
	if s.Tools != "" {
		if wb.Tools, err = effect.LoadTools(s.Tools); err != nil {
			return err
		}
	}
	if s.Transports != "" {
		if wb.Sources, err = bundle.LoadTransports(s.Transports); err != nil {
			return err
		}
	}
	return nil
}

// Live builds the executor of a live named spec (openai:): the recording
// in front of the backend. Nil when no named executor is live.
type Live func(name, spec string) (effect.Executor, error)

// Build builds the executors for one manifest run: Responses (id
// "scripted"), Command (id "command") and the named executors in name
// order, each behind mem's memo index under CacheEffects. A live named
// executor is built by live: the archive is its memo, so it is never put
// behind the store's as well.
func (s Set) Build(mem store.Store, live Live) ([]effect.Executor, error) {
	execs, err := s.builtins()
	if err != nil {
		return nil, err
	}
	named, err := s.NamedSpecs()
	if err != nil {
		return nil, err
	}
	for i, ex := range execs {
		execs[i] = s.memo(ex, mem)
	}
	for _, name := range slices.Sorted(maps.Keys(named)) {
		ex, err := s.buildNamed(name, named[name], mem, live)
		if err != nil {
			return nil, err
		}
		execs = append(execs, ex)
	}
	return execs, nil
}

// builtins are the scripted and command executors.
func (s Set) builtins() ([]effect.Executor, error) {
	var execs []effect.Executor
	if s.Responses != "" {
		sc, err := effect.LoadScripted("scripted", s.Responses)
		if err != nil {
			return nil, err
		}
		execs = append(execs, sc)
	}
	if s.Command != "" {
		wd, _ := os.Getwd()
		cmd, err := effect.NewCommand("command", s.Command, wd, effect.DefaultCommandTimeout)
		if err != nil {
			return nil, err
		}
		execs = append(execs, cmd)
	}
	return execs, nil
}

// buildNamed builds one named executor.
func (s Set) buildNamed(name, spec string, mem store.Store, live Live) (effect.Executor, error) {
	if effect.LiveSpec(spec) {
		if live == nil {
			return nil, fmt.Errorf("executor %q: a live backend needs its recording", name)
		}
		return live(name, spec)
	}
	ex, _, err := effect.Build(name, spec, effect.Site{})
	if err != nil {
		return nil, err
	}
	return s.memo(ex, mem), nil
}

// memo puts ex behind mem's effect memo index under CacheEffects.
func (s Set) memo(ex effect.Executor, mem store.Store) effect.Executor {
	if !s.CacheEffects {
		return ex
	}
	cached := effect.NewCached(ex, mem)
	cached.Accept = vm.AcceptOutput
	return cached
}
