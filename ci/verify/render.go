package verify

import "github.com/algal-assay/assay/report"

// Evidence is the report as the results model holds it; every rendering
// below is the report package's.
func (r *Report) Evidence() *report.Evidence {
	e := &report.Evidence{Roots: r.Roots, Store: r.Store, AllowEmpty: r.AllowEmpty,
		Files: make([]report.EvidenceFile, len(r.Results)), Leftovers: make([]report.Leftover, len(r.Leftovers))}
	for i, x := range r.Results {
		e.Files[i] = report.EvidenceFile{Path: x.Path, Kind: x.Kind, OK: x.OK, Digest: x.Digest, Status: x.Status,
			Mismatches: x.Mismatches, Detail: x.Detail()}
	}
	for i, l := range r.Leftovers {
		e.Leftovers[i] = report.Leftover{Path: l.Path, Kind: l.Kind, Status: l.Status, Description: l.Description()}
	}
	return e
}

// Text renders one line per result, "ok   PATH  KIND  DIGEST" or
// "FAIL PATH  KIND  FIRST MISMATCH", then a count line.
func (r *Report) Text() string { return report.EvidenceText(r.Evidence()) }

// Summary is the one-sentence outcome.
func (r *Report) Summary() string { return r.Evidence().Sentence() }

// Value is the JSON form: {"ok","store","roots","checked","failed","files":[...]}.
func (r *Report) Value() map[string]any { return report.EvidenceValue(r.Evidence()) }

// Annotations renders a GitHub Actions "::error file=...::..." workflow
// command per failure, and a "::notice" per leftover. Paths under
// workspace (GITHUB_WORKSPACE, "" for none) are made relative to it.
func (r *Report) Annotations(workspace string) []string {
	return report.Annotations(r.Evidence(), workspace)
}

// Markdown renders the job-summary section: the outcome sentence and a
// table with failures first.
func (r *Report) Markdown() string { return report.JobSummary(r.Evidence()) }
