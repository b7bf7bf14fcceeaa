package diff

import (
	"cmp"
	"slices"
	"strings"

	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/report"
)

// workloadFile is the workload file a run's gate positions name
// ("suites/x.bench.yaml:12:5" gives "suites/x.bench.yaml").
func workloadFile(r *Run, trim func(string) string) string {
	if r == nil || r.Gate == nil {
		return ""
	}
	for _, g := range r.Gate.Rules {
		if at := trim(g.At); at != "" {
			return positionFile(at)
		}
	}
	return ""
}

// positionFile strips a ":line:col" (or ":line") suffix.
func positionFile(at string) string {
	for range 2 {
		i := strings.LastIndexByte(at, ':')
		if i < 0 || !allDigits(at[i+1:]) {
			break
		}
		at = at[:i]
	}
	return at
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func ranking(r *foundry.Report) []RankPlace {
	out := []RankPlace{}
	if r == nil {
		return out
	}
	for _, e := range report.Ranking(r) {
		c := e.Candidate
		out = append(out, RankPlace{Place: e.Place, Key: c.ManifestKey, Digest: c.ManifestDigest, Promoted: e.Promoted,
			Validation: Rate{Passed: c.Validation.Passed, Total: c.Validation.Total}, Train: Rate{Passed: c.Train.Passed, Total: c.Train.Total},
			AgentCalls: c.Work.AgentCalls, Units: c.Work.Units, DecidedBy: e.DecidedBy, Why: e.Why})
	}
	return out
}

// caseLabel is where a receipt came from in a run set.
type caseLabel struct{ workload, subject, kase, split string }

// receiptLabels maps every receipt digest a run set's reports name to its
// workload, system (bench) or candidate key (foundry), and case.
func receiptLabels(s *Set) map[string]caseLabel {
	out := map[string]caseLabel{}
	if s == nil {
		return out
	}
	put := func(digest string, l caseLabel) {
		if _, dup := out[digest]; digest != "" && !dup {
			out[digest] = l
		}
	}
	for _, r := range s.Runs {
		for _, sys := range r.BenchVerdicts {
			for _, c := range sys.Cases {
				put(c.Receipt(), caseLabel{r.Workload, sys.ID, c.ID, ""})
			}
		}
		if f := r.Foundry; f != nil {
			var promoted string
			for _, c := range f.Candidates {
				if c.ManifestDigest == f.Promoted {
					promoted = c.ManifestKey
				}
				for _, cs := range c.Cases {
					put(cs.ReceiptDigest, caseLabel{r.Workload, c.ManifestKey, cs.ID, cs.Split})
				}
			}
			for _, cs := range f.Holdout.Cases {
				put(cs.ReceiptDigest, caseLabel{r.Workload, promoted, cs.ID, cs.Split})
			}
		}
	}
	return out
}

// labelReplays names each archived receipt by the workload, system or
// candidate, and case whose base run recorded it, so the comment can say
// which case a verdict is about instead of showing a bare hash.
func labelReplays(r *Replays, base *Set) {
	if r == nil {
		return
	}
	labels := receiptLabels(base)
	for i := range r.Results {
		if l, ok := labels[r.Results[i].Stored]; ok {
			x := &r.Results[i]
			x.Workload, x.Subject, x.Case, x.Split = l.workload, l.subject, l.kase, l.split
		}
	}
	// Rows read by organism, then by where they came from.
	slices.SortStableFunc(r.Results, func(a, b Replay) int {
		return cmp.Or(strings.Compare(a.Key, b.Key), strings.Compare(a.Workload, b.Workload), strings.Compare(a.Subject, b.Subject),
			strings.Compare(a.Case, b.Case), strings.Compare(a.File, b.File), strings.Compare(a.HeadPath, b.HeadPath))
	})
}
