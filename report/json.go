package report

import (
	"encoding/json"

	"github.com/algal-assay/assay/engine/canon"
)

// jsonWorkload is one workload file's result in `assay run --json`.
type jsonWorkload struct {
	File     string   `json:"file"`
	Name     string   `json:"name,omitempty"`
	Kind     string   `json:"kind,omitempty"`
	Revision int      `json:"revision,omitempty"`
	Passed   bool     `json:"passed"`
	Code     string   `json:"code,omitempty"`
	Status   string   `json:"status,omitempty"`
	RunDir   string   `json:"runDir,omitempty"`
	Runs     int      `json:"runs,omitempty"`
	Reasons  []string `json:"reasons"`
	Warnings []string `json:"warnings"`
	// Gates is null, not [], when there are none (as it always was).
	Gates           []jsonGate `json:"gates"`
	Verified        *bool      `json:"verified,omitempty"`
	CheckedReceipts int        `json:"checkedReceipts,omitempty"`
	Table           *jsonTable `json:"table,omitempty"`
	// Resumed says which parts of a bench in parts an interrupted run's
	// reports supplied.
	Resumed *jsonResumed `json:"resumed,omitempty"`
}

type jsonGate struct {
	Name    string `json:"name"`
	Passed  bool   `json:"passed"`
	Message string `json:"message"`
	At      string `json:"at"`
}

type jsonResumed struct {
	ReusedParts []int    `json:"reusedParts"`
	RanParts    []int    `json:"ranParts"`
	Rejected    []string `json:"rejected"`
}

type jsonTable struct {
	Header []string   `json:"header"`
	Rows   [][]string `json:"rows"`
}

// jsonResults is the whole document.
type jsonResults struct {
	Passed    bool           `json:"passed"`
	Total     int            `json:"total"`
	Failed    int            `json:"failed"`
	NotRun    int            `json:"notRun"`
	Stopped   string         `json:"stopped,omitempty"`
	Workloads []jsonWorkload `json:"workloads"`
}

func workloadJSON(w *Workload) jsonWorkload {
	j := jsonWorkload{File: w.File, Name: w.Name, Kind: w.Kind, Revision: w.Revision, Runs: w.Runs,
		Passed: w.Passed, Code: w.Code, Reasons: append([]string{}, w.Reasons...), Warnings: []string{}}
	if r := w.Run; r != nil {
		j.Status, j.RunDir = r.Status, r.Dir
		j.Warnings = append(j.Warnings, r.Warnings...)
		for _, g := range r.Gates {
			j.Gates = append(j.Gates, jsonGate{g.Name, g.Passed, g.Message, g.At})
		}
		if v := r.Verification; v != nil {
			ok := v.OK
			j.Verified, j.CheckedReceipts = &ok, v.CheckedReceipts
		}
		if t := w.Table; len(t.Header) > 0 {
			j.Table = &jsonTable{Header: t.Header, Rows: t.Rows}
		}
		if rs := r.Resumed; rs != nil {
			j.Resumed = &jsonResumed{ReusedParts: append([]int{}, rs.Reused...), RanParts: append([]int{}, rs.Ran...), Rejected: append([]string{}, rs.Rejected...)}
		}
	}
	return j
}

// JSON renders the job's results as `assay run --json` prints them: one
// canonical JSON document (without the line break).
func JSON(r *Results) ([]byte, error) {
	passed, failed := r.Tally()
	doc := jsonResults{Passed: passed == r.Total, Total: r.Total, Failed: failed, NotRun: r.Total - len(r.Workloads),
		Stopped: r.Stopped, Workloads: []jsonWorkload{}}
	for i := range r.Workloads {
		doc.Workloads = append(doc.Workloads, workloadJSON(&r.Workloads[i]))
	}
	// One canonical line, as every verb prints JSON: encoding/json shapes
	// the document, canon orders and encodes it.
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	v, err := canon.Parse(b, 0)
	if err != nil {
		return nil, err
	}
	return canon.Encode(v)
}
