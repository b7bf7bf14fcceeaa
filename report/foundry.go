package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/algal-assay/assay/engine/foundry"
)

// FoundryInput is what a foundry run's report.html shows. Report is nil
// when the habitat budget ran out before promotion; Exhausted is then the
// account that says so.
type FoundryInput struct {
	Run
	Report    *foundry.Report
	Exhausted *foundry.Account
}

// Ranking columns; a row's deciding column is the one whose name
// foundry.Tiebreak.String returns.
var rankColumns = []string{"validation", "train", "agent calls", "work units", "digest"}

type rankCell struct {
	Value   string
	Decided bool
}

type rankRow struct {
	Place    int
	Key      string
	Digest   string
	Promoted bool
	Cells    []rankCell // in rankColumns order
	Tokens   string
	Why      string
	Train    string
	Valid    string
	Holdout  string
}

type splitCell struct {
	Candidate string
	Run       bool
	Passed    bool
	Outcome   string
	Outputs   string
	Receipt   string
	Tokens    string
	Work      string
}

type splitCase struct {
	ID, Split    string
	Args, Expect string
	Cells        []splitCell
}

type foundryView struct {
	page
	Promoted   string
	Columns    []string
	Ranking    []rankRow
	Candidates []string
	Cases      []splitCase
	Lineage    *foundry.Lineage
	Exhausted  *foundry.Account
}

func rate(s foundry.Score) string { return fmt.Sprintf("%d/%d", s.Passed, s.Total) }

// Ranking is the promotion order of a foundry report with, for every
// place, the criterion that put it below the one above (for the winner,
// what put it above the runner-up) and the sentence foundry.Decided says
// about it. The PR comment and pr.html show the same ranking.
func Ranking(r *foundry.Report) []RankEntry {
	order := foundry.Rank(r.Candidates)
	out := make([]RankEntry, len(order))
	for place, i := range order {
		c := &r.Candidates[i]
		e := RankEntry{Place: place + 1, Candidate: c, Promoted: c.ManifestDigest == r.Promoted}
		switch {
		case place > 0:
			above := &r.Candidates[order[place-1]]
			e.DecidedBy = foundry.Decider(above, c).String()
			e.Why = "below #" + strconv.Itoa(place) + ": " + foundry.Decided(above, c)
		case len(order) > 1:
			next := &r.Candidates[order[1]]
			e.DecidedBy = foundry.Decider(c, next).String()
			e.Why = "above #2: " + foundry.Decided(c, next)
		default:
			e.Why = "the only candidate"
		}
		out[place] = e
	}
	return out
}

// RankEntry is one place of a [Ranking].
type RankEntry struct {
	Place     int
	Candidate *foundry.CandidateResult
	Promoted  bool
	// DecidedBy is the deciding column ("validation", "train", "agent
	// calls", "work units", "digest"); "" for a population of one.
	DecidedBy string
	Why       string
}

func rankRows(r *foundry.Report) []rankRow {
	var rows []rankRow
	for _, e := range Ranking(r) {
		c := e.Candidate
		row := rankRow{Place: e.Place, Key: c.ManifestKey, Digest: c.ManifestDigest, Promoted: e.Promoted, Why: e.Why,
			Tokens: strconv.FormatInt(c.Usage.TokensIn+c.Usage.TokensOut, 10),
			Train:  rate(c.Train), Valid: rate(c.Validation), Holdout: "not run (holdout runs once, on the winner)"}
		if e.Promoted {
			row.Holdout = rate(r.Holdout.Score)
		}
		values := []string{rate(c.Validation), rate(c.Train), strconv.FormatInt(c.Work.AgentCalls, 10), strconv.FormatInt(c.Work.Units, 10), short(c.ManifestDigest)}
		for i, v := range values {
			row.Cells = append(row.Cells, rankCell{Value: v, Decided: rankColumns[i] == e.DecidedBy})
		}
		rows = append(rows, row)
	}
	return rows
}

func foundryCases(r *foundry.Report, ranking []RankEntry) []splitCase {
	type key struct{ id, split string }
	var order []key
	seen := map[key]*splitCase{}
	byCand := map[string]map[key]*foundry.CaseResult{}
	add := func(cand string, cs []foundry.CaseResult) {
		m := byCand[cand]
		if m == nil {
			m = map[key]*foundry.CaseResult{}
			byCand[cand] = m
		}
		for i := range cs {
			c := &cs[i]
			k := key{c.ID, c.Split}
			m[k] = c
			if seen[k] == nil {
				seen[k] = &splitCase{ID: c.ID, Split: c.Split, Args: jsonText(c.Args), Expect: jsonText(c.Expect)}
				order = append(order, k)
			}
		}
	}
	for _, e := range ranking {
		add(e.Candidate.ManifestDigest, e.Candidate.Cases)
	}
	add(r.Promoted, r.Holdout.Cases)
	var out []splitCase
	for _, k := range order {
		sc := seen[k]
		for _, e := range ranking {
			c := byCand[e.Candidate.ManifestDigest][k]
			cell := splitCell{Candidate: e.Candidate.ManifestKey}
			if c != nil {
				cell = splitCell{Candidate: e.Candidate.ManifestKey, Run: true, Passed: c.Passed, Outcome: c.Outcome,
					Outputs: jsonText(c.Outputs), Receipt: c.ReceiptDigest,
					Tokens: fmt.Sprintf("%d in, %d out", c.Usage.TokensIn, c.Usage.TokensOut),
					Work:   fmt.Sprintf("%d steps, %d agent calls, %d units", c.Work.Steps, c.Work.AgentCalls, c.Work.Units)}
			}
			sc.Cells = append(sc.Cells, cell)
		}
		out = append(out, *sc)
	}
	return out
}

// Foundry renders the report.html of a foundry run.
func Foundry(in FoundryInput) ([]byte, error) {
	v := &foundryView{page: runPage(in.Run, "foundry"), Columns: rankColumns, Exhausted: in.Exhausted}
	r := in.Report
	if r == nil {
		if in.Exhausted == nil {
			return nil, fmt.Errorf("report: foundry %q has neither a report nor an exhausted account", in.Workload)
		}
		a := in.Exhausted
		v.Facts = append(v.Facts, fact{Name: "promoted", Value: "nothing: the habitat budget ran out before promotion"},
			fact{Name: "charged", Value: fmt.Sprintf("%d/%d work, %d/%d attempts, %d/%d runs", a.Charged.Work, a.Limits.Work, a.Charged.Attempts, a.Limits.Attempts, a.Charged.Runs, a.Limits.Runs)})
		if a.Refused != nil {
			v.Facts = append(v.Facts, fact{Name: "refused", Value: short(a.Refused.Manifest) + ": " + strings.Join(a.Refused.Reasons, ", ")})
		}
		return render("foundry", v)
	}
	ranking := Ranking(r)
	for _, e := range ranking {
		v.Candidates = append(v.Candidates, e.Candidate.ManifestKey)
		if e.Promoted {
			v.Promoted = e.Candidate.ManifestKey
		}
	}
	v.Facts = append(v.Facts, fact{Name: "promoted", Value: v.Promoted + " (" + short(r.Promoted) + ")", Code: true},
		fact{Name: "holdout", Value: rate(r.Holdout.Score) + " on the promoted candidate"},
		fact{Name: "candidates", Value: strconv.Itoa(len(r.Candidates))}, fact{Name: "report", Value: r.Digest, Code: true})
	if r.Scorer != nil {
		v.Facts = append(v.Facts, fact{Name: "scorer", Value: "algal.expr.v1 program"})
	} else {
		v.Facts = append(v.Facts, fact{Name: "scorer", Value: "exact match"})
	}
	if a := r.Budget; a != nil {
		v.Facts = append(v.Facts, fact{Name: "budget", Value: fmt.Sprintf("%d/%d work, %d/%d attempts, %d/%d runs charged", a.Charged.Work, a.Limits.Work, a.Charged.Attempts, a.Limits.Attempts, a.Charged.Runs, a.Limits.Runs)})
	}
	v.Lineage = r.Lineage
	v.Ranking = rankRows(r)
	v.Cases = foundryCases(r, ranking)
	return render("foundry", v)
}
