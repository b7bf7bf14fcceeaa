package main

import (
	"os"
	"path/filepath"

	"github.com/algal-assay/assay/engine/bundle"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/spf13/pflag"
)

// execFlags are upstream's executor flags, spelled as upstream spells them
// and shared by run, resume, bench, foundry and foundry search.
type execFlags struct {
	responses, executorCmd, tools, transportsFile string
	cacheEffects                                  bool
}

func (f *execFlags) add(fl *pflag.FlagSet) {
	fl.StringVar(&f.responses, "responses", "", "scripted executor table `FILE` (executor \"scripted\")")
	fl.StringVar(&f.executorCmd, "executor-cmd", "", "command executor (sh -c `CMD`, canonical request on stdin; executor \"command\")")
	fl.StringVar(&f.tools, "tools", "", "host tool registry `FILE`")
	fl.StringVar(&f.transportsFile, "transports", "", "transports `FILE`: name -> bundle directory or http(s) URL")
	fl.BoolVar(&f.cacheEffects, "cache-effects", false, "serve and fill the store's effect memo index")
}

// extraSpecs names the flag executors as workbench specs: they serve every
// bench system and foundry candidate after the config's own executors.
func (f *execFlags) extraSpecs() (map[string]string, error) {
	specs := map[string]string{}
	if f.responses != "" {
		p, err := filepath.Abs(f.responses)
		if err != nil {
			return nil, &fault.Error{Code: "IO_FAILED", Message: err.Error()}
		}
		specs["scripted"] = "scripted:" + p
	}
	if f.executorCmd != "" {
		specs["command"] = "cmd:" + f.executorCmd
	}
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

// executors builds the flag executors for one run: --responses (id
// "scripted") and --executor-cmd (id "command"), each behind the memo
// index under --cache-effects.
func (f *execFlags) executors(mem store.Store) ([]effect.Executor, error) {
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
	if f.cacheEffects {
		for i, ex := range execs {
			cached := effect.NewCached(ex, mem)
			cached.Accept = vm.AcceptOutput
			execs[i] = cached
		}
	}
	return execs, nil
}
