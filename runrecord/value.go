package runrecord

import "github.com/algal-assay/assay/engine/canon"

// Value renders the view as a plain JSON value (nil, bool, float64, string,
// []any, map[string]any) for canon.Encode. Absent facts are null rather than
// omitted, so consumers can rely on the shape.
func (v *View) Value() map[string]any {
	out := map[string]any{
		"dir":      v.Dir,
		"state":    string(v.State),
		"problem":  nil,
		"record":   nil,
		"warnings": canon.Strings(v.Warnings),
		// Filled below when known; null otherwise.
		"pipeline_check": nil,
		"assembly_check": nil,
		"last_writers":   nil,
		"reconstructed":  nil,
	}
	if v.Problem != nil {
		out["problem"] = map[string]any{"code": v.Problem.Code, "message": v.Problem.Error()}
	}
	if v.Record != nil {
		out["record"] = recordValue(v.Record)
		out["pipeline_check"] = verdictValue(v.Pipeline)
		out["assembly_check"] = verdictValue(v.Assembly)
		writers := make([]any, 0, len(v.Writers))
		for _, w := range v.Writers {
			writers = append(writers, map[string]any{
				"file": w.File, "phase": float64(w.Phase), "id": w.ID,
				"iteration": optInt(w.Iteration), "at": formatTime(w.At), "present": w.Present,
			})
		}
		out["last_writers"] = writers
	}
	if r := v.Reconstructed; r != nil {
		files := make([]any, 0, len(r.Files))
		for _, f := range r.Files {
			phases := make([]any, 0, len(f.Phases))
			for _, n := range f.Phases {
				phases = append(phases, float64(n))
			}
			files = append(files, map[string]any{"file": f.File, "phases": phases})
		}
		out["reconstructed"] = map[string]any{
			"label":           "reconstructed",
			"pipeline":        optStr(r.Pipeline),
			"pipeline_source": optStr(r.PipelineSource),
			"candidates":      canon.Strings(r.Candidates),
			"files":           files,
			"notes":           canon.Strings(r.Notes),
		}
	}
	return out
}

func recordValue(r *Record) map[string]any {
	phases := make([]any, 0, len(r.Phases))
	for _, p := range r.Phases {
		arts := make([]any, 0, len(p.Artifacts))
		for _, a := range p.Artifacts {
			arts = append(arts, map[string]any{"id": a.ID, "file": a.File, "at": formatTime(a.At), "iteration": optInt(a.Iteration)})
		}
		phases = append(phases, map[string]any{
			"n": float64(p.N), "kind": p.Kind, "name": p.Name(), "skill": optStr(p.Skill), "pattern": optStr(p.Pattern),
			"status": p.Status, "iterations": float64(p.Iterations), "selected": optStr(p.Selected), "artifacts": arts,
		})
	}
	var finished any
	if r.FinishedAt != nil {
		finished = formatTime(*r.FinishedAt)
	}
	return map[string]any{
		"run_record_version": float64(r.Version),
		"pipeline":           r.Pipeline,
		"run_slug":           r.RunSlug,
		"source_revision":    float64(r.SourceRevision),
		"harness_name":       r.HarnessName,
		"assembly_sha256":    optStr(r.AssemblySHA256),
		"foundry_head":       optStr(r.FoundryHead),
		"foundry_modified":   r.FoundryModified,
		"started_at":         formatTime(r.StartedAt),
		"finished_at":        finished,
		"status":             r.Status,
		"phases":             phases,
	}
}

func verdictValue(v Verdict) map[string]any {
	return map[string]any{
		"check": v.Check, "message": v.Message, "against": optStr(v.Against),
		"recorded": optStr(v.Recorded), "current": optStr(v.Current),
	}
}

func optStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func optInt(i int) any {
	if i == 0 {
		return nil
	}
	return float64(i)
}
