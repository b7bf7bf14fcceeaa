package liverun

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness"
	"github.com/algal-assay/assay/harness/archive"
)

// ManifestRun is one run of a manifest (run, resume, call) whose named
// executors include live ones: the archive keys its receipts under the
// manifest's key.
type ManifestRun struct {
	Archive
	rec *harness.Recording
	m   *manifest.Manifest
}

// OpenManifest opens the recording when a named executor (name -> spec)
// is live; nil otherwise. signatures type the host tools' recorded
// effects.
func OpenManifest(a Archive, m *manifest.Manifest, named map[string]string, signatures func() (map[string]manifest.Signature, error)) (*ManifestRun, error) {
	if !slices.ContainsFunc(slices.Collect(maps.Values(named)), effect.LiveSpec) {
		return nil, nil
	}
	rec, err := harness.NewRecording(m.Key, nil, harness.RecordOptions{Mode: a.Mode, Archive: a.Dir})
	if err != nil {
		return nil, err
	}
	if rec.Signatures, err = signatures(); err != nil {
		return nil, err
	}
	return &ManifestRun{Archive: a, rec: rec, m: m}, nil
}

// Recording is the run's recording (nil: no live executor).
func (mr *ManifestRun) Recording() *harness.Recording {
	if mr == nil {
		return nil
	}
	return mr.rec
}

// Finish ends a manifest run: could-not-replay when the archive lacked
// answers; under --record missing or all, the receipt is replayed offline
// and, when it holds, archived as contender (run, resume, call) on caseID.
// tools is the host tool registry file, if any.
func (mr *ManifestRun) Finish(st store.Store, receipt map[string]any, tools string, contender, caseID string) error {
	if mr == nil {
		return nil
	}
	if err := mr.replayed(mr.rec, mr.m.Key); err != nil {
		return err
	}
	if mr.rec.Mode() == archive.None {
		return nil
	}
	wb := &vm.Workbench{Store: st}
	if tools != "" {
		var err error
		if wb.Tools, err = effect.LoadTools(tools); err != nil {
			return err
		}
	}
	mismatches, err := wb.Replay(context.Background(), receipt, mr.m)
	if err != nil {
		return err
	}
	if len(mismatches) > 0 {
		return notRecorded(mr.m.Key, mismatches)
	}
	ref, err := st.Put(store.Runs, receipt)
	if err != nil {
		return err
	}
	runs := []harness.RecordedRun{{Contender: contender, Case: caseID, Receipt: ref, Repeat: 1}}
	if err := mr.rec.RecordRuns(wb, runs, time.Now()); err != nil {
		return err
	}
	mr.recorded(mr.rec, mr.m.Key)
	return mr.failed(mr.rec, wb, runs, mr.m.Key)
}
