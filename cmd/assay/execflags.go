package main

import (
	"github.com/algal-assay/assay/engine/execset"
	"github.com/spf13/pflag"
)

// execFlags are upstream's executor flags, spelled as upstream spells them
// and shared by run, resume, bench, foundry and foundry search; what they
// name is an execset.Set.
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

// set is what the flags name.
func (f *execFlags) set() execset.Set {
	return execset.Set{Responses: f.responses, Command: f.executorCmd, Tools: f.tools, Transports: f.transportsFile,
		CacheEffects: f.cacheEffects, Named: f.named, NamedFile: f.namedFile}
}
