package main

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
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness"
	"github.com/spf13/pflag"
)

// execFlags are upstream's executor flags, spelled as upstream spells them
// and shared by run, resume, bench, foundry and foundry search.
type execFlags struct {
	responses, executorCmd, tools, transportsFile string
	cacheEffects                                  bool
	// named are --executor NAME=SPEC, namedFile --executors FILE.
	named     []string
	namedFile string
}

func (f *execFlags) add(fl *pflag.FlagSet) {
	fl.StringVar(&f.responses, "responses", "", "scripted executor table `FILE` (executor \"scripted\")")
	fl.StringVar(&f.executorCmd, "executor-cmd", "", "command executor (sh -c `CMD`, canonical request on stdin; executor \"command\")")
	fl.StringVar(&f.tools, "tools", "", "host tool registry `FILE`")
	fl.StringVar(&f.transportsFile, "transports", "", "transports `FILE`: name -> bundle directory or http(s) URL")
	fl.BoolVar(&f.cacheEffects, "cache-effects", false, "serve and fill the store's effect memo index")
	fl.StringArrayVar(&f.named, "executor", nil, "named executor `NAME=SPEC` (openai:<model>, scripted:<file>, cmd:<command>; repeatable); cells reach it by route")
	fl.StringVar(&f.namedFile, "executors", "", "named executors `FILE`: a JSON object of name to command (upstream's), or to a spec such as openai:<model>")
}

// maxExecutorsFile bounds the --executors file.
const maxExecutorsFile = 1 << 20

// namedSpecs reads --executors FILE and --executor NAME=SPEC into name ->
// spec. A file value that names no spec kind is a command, as upstream's
// --executors reads it; scripted paths resolve against the file's
// directory (--executor's against the working directory).
func (f *execFlags) namedSpecs() (map[string]string, error) {
	specs := map[string]string{}
	add := func(name, spec, dir, from string) error {
		if !executorName.MatchString(name) {
			return usagef("%s: executor name %q: 1 to 64 letters, digits, dots, hyphens or underscores", from, name)
		}
		if name == "scripted" && f.responses != "" || name == "command" && f.executorCmd != "" {
			return usagef("%s: executor name %q is taken by --responses / --executor-cmd", from, name)
		}
		if _, dup := specs[name]; dup {
			return usagef("%s: executor %q is named twice", from, name)
		}
		resolved, err := effect.ResolveSpec(spec, dir, effect.InFlag)
		if err != nil {
			return usagef("%s: executor %q: want %s, got %q", from, name, effect.Forms(effect.InFlag), spec)
		}
		specs[name] = resolved
		return nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, &fault.Error{Code: fault.IOFailed, Message: err.Error()}
	}
	if f.namedFile != "" {
		v, err := canon.ReadFile(f.namedFile, maxExecutorsFile)
		if err != nil {
			return nil, err
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, usagef("--executors %s: want a JSON object of executor name to command or spec", f.namedFile)
		}
		dir := filepath.Dir(f.namedFile)
		for _, name := range canon.SortedKeys(m) {
			spec, ok := m[name].(string)
			if !ok || spec == "" {
				return nil, usagef("--executors %s: executor %q: want a command or spec string", f.namedFile, name)
			}
			if _, err := effect.ResolveSpec(spec, dir, effect.InConfig|effect.InFlag); err != nil {
				spec = "cmd:" + spec
			}
			if err := add(name, spec, dir, "--executors "+f.namedFile); err != nil {
				return nil, err
			}
		}
	}
	for _, nv := range f.named {
		name, spec, ok := strings.Cut(nv, "=")
		if !ok {
			return nil, usagef("--executor wants NAME=SPEC, got %q", nv)
		}
		if err := add(name, spec, wd, "--executor"); err != nil {
			return nil, err
		}
	}
	return specs, nil
}

// executorName is the shape of an executor name (as in workloads).
var executorName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// extraSpecs names the flag executors as workbench specs: they serve every
// bench system and foundry candidate after the config's own executors.
func (f *execFlags) extraSpecs() (map[string]string, error) {
	specs := map[string]string{}
	if f.responses != "" {
		p, err := filepath.Abs(f.responses)
		if err != nil {
			return nil, &fault.Error{Code: fault.IOFailed, Message: err.Error()}
		}
		specs["scripted"] = "scripted:" + p
	}
	if f.executorCmd != "" {
		specs["command"] = "cmd:" + f.executorCmd
	}
	named, err := f.namedSpecs()
	if err != nil {
		return nil, err
	}
	maps.Copy(specs, named)
	return specs, nil
}

// applyTo gives a workbench the flag executors, tools, transports and memo.
func (f *execFlags) applyTo(wb *vm.Workbench) error {
	specs, err := f.extraSpecs()
	if err != nil {
		return err
	}
	wb.Extra = specs
	wb.CacheEffects = f.cacheEffects
	if f.tools != "" {
		if wb.Tools, err = effect.LoadTools(f.tools); err != nil {
			return err
		}
	}
	if f.transportsFile != "" {
		if wb.Sources, err = bundle.LoadTransports(f.transportsFile); err != nil {
			return err
		}
	}
	return nil
}

// executors builds the flag executors for one run of m: --responses (id
// "scripted"), --executor-cmd (id "command") and the named executors in
// name order, each behind the memo index under --cache-effects. A live
// named executor (openai:) is built by rec, the recording in front of it;
// rec is nil when none is live.
func (f *execFlags) executors(mem store.Store, m *manifest.Manifest, rec *harness.Recording) ([]effect.Executor, error) {
	var execs []effect.Executor
	if f.responses != "" {
		s, err := effect.LoadScripted("scripted", f.responses)
		if err != nil {
			return nil, err
		}
		execs = append(execs, s)
	}
	if f.executorCmd != "" {
		wd, _ := os.Getwd()
		cmd, err := effect.NewCommand("command", f.executorCmd, wd, effect.DefaultCommandTimeout)
		if err != nil {
			return nil, err
		}
		execs = append(execs, cmd)
	}
	named, err := f.namedSpecs()
	if err != nil {
		return nil, err
	}
	if f.cacheEffects {
		for i, ex := range execs {
			cached := effect.NewCached(ex, mem)
			cached.Accept = vm.AcceptOutput
			execs[i] = cached
		}
	}
	for _, name := range slices.Sorted(maps.Keys(named)) {
		spec := named[name]
		if effect.LiveSpec(spec) {
			// The archive is a live backend's memo: it is never put
			// behind the store's effect memo as well.
			if rec == nil {
				return nil, fmt.Errorf("executor %q: a live backend needs its recording", name)
			}
			ex, _, err := rec.Build(name, spec, m)
			if err != nil {
				return nil, err
			}
			execs = append(execs, ex)
			continue
		}
		ex, _, err := effect.Build(name, spec, effect.Site{})
		if err != nil {
			return nil, err
		}
		if f.cacheEffects {
			cached := effect.NewCached(ex, mem)
			cached.Accept = vm.AcceptOutput
			ex = cached
		}
		execs = append(execs, ex)
	}
	return execs, nil
}
