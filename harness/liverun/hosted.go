package liverun

import (
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/execset"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/engine/vm"
)

// Start runs a manifest on the host it is given (vm.Run, vm.Resume) and
// names the run's case for the archive.
type Start func(host *vm.Host) (receipt map[string]any, caseID string, err error)

// RunHosted runs m over st on the host set builds (execset.Set.Host with
// opts): when a named executor is live, the recording answers it from the
// archive a and the run is finished as contender (run, resume, call), its
// live answers archived once the receipt replays offline.
func RunHosted(a Archive, set execset.Set, opts execset.HostOptions, st store.Store, m *manifest.Manifest, contender string, start Start) (map[string]any, error) {
	named, err := set.NamedSpecs()
	if err != nil {
		return nil, err
	}
	mr, err := OpenManifest(a, m, named, func() (map[string]manifest.Signature, error) { return vm.ToolSignaturesFile(set.Tools) })
	if err != nil {
		return nil, err
	}
	opts.Live = mr.live()
	host, err := set.Host(st, opts)
	if err != nil {
		return nil, err
	}
	rec, caseID, err := start(host)
	if err != nil {
		return nil, err
	}
	if err := mr.Finish(st, rec, set.Tools, contender, caseID); err != nil {
		return nil, err
	}
	return rec, nil
}

// live builds the run's live named executors behind its recording; nil
// when none is live.
func (mr *ManifestRun) live() execset.Live {
	if mr == nil {
		return nil
	}
	return func(name, spec string) (effect.Executor, error) {
		ex, _, err := mr.rec.Build(name, spec, mr.m)
		return ex, err
	}
}

// RunArgs starts a run of m on args (vm.Run), its case named by the
// digest of args.
func RunArgs(m *manifest.Manifest, args map[string]any) Start {
	return func(host *vm.Host) (map[string]any, string, error) {
		rec, err := vm.Run(m, args, host)
		if err != nil {
			return nil, "", err
		}
		caseID, err := canon.Digest(args)
		if err != nil {
			return nil, "", err
		}
		return rec, caseID, nil
	}
}
