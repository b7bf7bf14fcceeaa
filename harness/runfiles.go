package harness

import (
	"fmt"
	"strings"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/harness/repeats"
	"github.com/algal-assay/assay/harness/rundir"
	"github.com/algal-assay/assay/harness/workload"
)

// RenderedFile is a file a run's phases render from its evidence, with the
// phase, artifact id and loop iteration (0 outside a loop) the run record
// lists it under. The run writes these bytes, and a verifier renders them
// again from the verified evidence through the same functions and
// compares: one renderer, so the two can never drift apart.
type RenderedFile struct {
	Name      string
	Phase     int
	ID        string
	Iteration int
	Data      []byte
}

// JSONFile is how a run writes a JSON file: canonical JSON and a newline.
func JSONFile(v any) ([]byte, error) {
	b, err := canon.Encode(v)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ContenderFiles are the evaluate phase's copies of each contender's
// entry of the report, in loop order: system-<id>.json per bench system,
// candidate-NN-<key>.json per foundry candidate (none for an exhausted
// habitat account).
func ContenderFiles(b *bench.Report, f *foundry.Result) ([]RenderedFile, error) {
	var out []RenderedFile
	add := func(name, id string, v any) error {
		data, err := JSONFile(v)
		if err != nil {
			return err
		}
		out = append(out, RenderedFile{Name: name, Phase: PhaseEvaluate, ID: id, Iteration: len(out) + 1, Data: data})
		return nil
	}
	switch {
	case b != nil:
		systems := b.Value()["systems"].([]any)
		for i := range b.Systems {
			if err := add("system-"+b.Systems[i].ID+".json", "system-result", systems[i]); err != nil {
				return nil, err
			}
		}
	case f != nil && f.Report != nil:
		cands := f.Report.Value()["candidates"].([]any)
		for i := range f.Report.Candidates {
			key := strings.Trim(unsafeName.ReplaceAllString(strings.ToLower(strings.TrimPrefix(f.Report.Candidates[i].ManifestKey, "organism:")), "-"), "-")
			if err := add(fmt.Sprintf("candidate-%02d-%s.json", i+1, key), "candidate-result", cands[i]); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// SummaryFiles renders the summarize phase's files for o, in the order
// the phase writes them: repeats.json (a repeated run), gate.json,
// summary.md and report.html. o.Gates must be judged.
func SummaryFiles(o *Outcome) ([]RenderedFile, error) {
	var out []RenderedFile
	if o.Repeats != nil {
		data, err := JSONFile(o.Repeats.Value())
		if err != nil {
			return nil, err
		}
		out = append(out, RenderedFile{Name: repeats.File, Phase: PhaseSummarize, ID: "repeats", Data: data})
	}
	gate, err := JSONFile(GateValue(o.Workload, o.Gates))
	if err != nil {
		return nil, err
	}
	out = append(out, RenderedFile{Name: rundir.GateFile, Phase: PhaseSummarize, ID: "gate", Data: gate})
	out = append(out, RenderedFile{Name: rundir.SummaryFile, Phase: PhaseSummarize, ID: "summary", Data: []byte(Summary(o))})
	page, err := ReportHTML(o)
	if err != nil {
		return nil, err
	}
	return append(out, RenderedFile{Name: ReportHTMLFile, Phase: PhaseSummarize, ID: "report-html", Data: page}), nil
}

// Outcome is the outcome a run's summarize phase rendered from, rebuilt
// from its re-derivation: what SummaryFiles needs. warnings are the
// admission warnings the run's config gave (DerivedWarnings).
func (d *Derived) Outcome(c *workload.Compiled, warnings []string) *Outcome {
	return &Outcome{Workload: c.Workload, Compiled: c, Bench: d.Bench, Foundry: d.Foundry, Verification: d.Verification,
		Gates: d.Gates, Warnings: warnings, Repeats: d.Repeats, UnknownUsage: d.UnknownUsage, partDigests: d.PartDigests}
}

// DerivedWarnings are the admission warnings of c's config (split leakage
// a run without --strict-splits accepts), as the run's compile phase
// found them in summary.md's list.
func DerivedWarnings(c *workload.Compiled) ([]string, error) {
	if c.Workload.Kind != workload.KindFoundry {
		return nil, nil
	}
	cfg, err := foundry.ParseConfig(c.Config, c.RunDir, manifest.ReadFile, foundry.AdmitOptions{})
	if err != nil {
		return nil, err
	}
	return cfg.Warnings, nil
}
