package main

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/harness"
	"github.com/algal-assay/assay/internal/atomicfile"
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
	Gates    []struct {
		Name    string `json:"name"`
		Passed  bool   `json:"passed"`
		Message string `json:"message"`
		At      string `json:"at"`
	} `json:"gates"`
	Verified        *bool      `json:"verified,omitempty"`
	CheckedReceipts int        `json:"checkedReceipts,omitempty"`
	Table           *jsonTable `json:"table,omitempty"`
	// Resumed says which parts of a bench in parts an interrupted run's
	// reports supplied.
	Resumed *jsonResumed `json:"resumed,omitempty"`
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

func resultJSON(r *harness.Result) jsonWorkload {
	j := jsonWorkload{File: r.Path, Passed: r.Passed(), Code: r.Code(), Reasons: r.Reasons(), Warnings: []string{}}
	if j.Reasons == nil {
		j.Reasons = []string{}
	}
	j.Gates = j.Gates[:0]
	if w := r.Workload; w != nil {
		j.Name, j.Kind, j.Revision = w.Name, string(w.Kind), w.Revision
		j.Runs, _ = r.RunCount()
	}
	if o := r.Outcome; o != nil {
		j.Status, j.RunDir = o.Status, o.RunDir
		j.Warnings = append(j.Warnings, o.Warnings...)
		for _, g := range o.Gates {
			j.Gates = append(j.Gates, struct {
				Name    string `json:"name"`
				Passed  bool   `json:"passed"`
				Message string `json:"message"`
				At      string `json:"at"`
			}{g.Rule.Name(), g.Passed, g.Message, g.Rule.Pos.String()})
		}
		if v := o.Verification; v != nil {
			ok := v.OK
			j.Verified, j.CheckedReceipts = &ok, v.CheckedReceipts
		}
		if t := harness.SummaryTable(o); len(t.Header) > 0 {
			j.Table = &jsonTable{Header: t.Header, Rows: t.Rows}
		}
		if rs := o.Resume; rs != nil {
			j.Resumed = &jsonResumed{ReusedParts: append([]int{}, rs.Reused...), RanParts: append([]int{}, rs.Ran...), Rejected: append([]string{}, rs.Rejected...)}
		}
	}
	return j
}

// printResultsJSON prints the job's results as one canonical JSON line.
func printResultsJSON(w io.Writer, results []*harness.Result, total int, stopErr error) error {
	passed, failed := harness.Tally(results)
	doc := struct {
		Passed    bool           `json:"passed"`
		Total     int            `json:"total"`
		Failed    int            `json:"failed"`
		NotRun    int            `json:"notRun"`
		Stopped   string         `json:"stopped,omitempty"`
		Workloads []jsonWorkload `json:"workloads"`
	}{Total: total, Failed: failed, NotRun: total - len(results), Workloads: []jsonWorkload{}}
	doc.Passed = passed == total
	if stopErr != nil {
		doc.Stopped = stopErr.Error()
	}
	for _, r := range results {
		doc.Workloads = append(doc.Workloads, resultJSON(r))
	}
	// One canonical line, as every verb prints JSON: encoding/json shapes
	// the document, canon orders and encodes it.
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	v, err := canon.Parse(b, 0)
	if err != nil {
		return err
	}
	if b, err = canon.Encode(v); err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// JUnit XML, as CI systems read it: one testsuite per workload, one
// testcase per check (it loads and runs, its evidence verifies, each gate
// rule), the run directory as a property and in every failure.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	File      string        `xml:"file,attr,omitempty"`
	Failure   *junitFailure `xml:"failure,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Body    string `xml:",chardata"`
}

func junitReport(results []*harness.Result, stopErr error) junitSuites {
	doc := junitSuites{Name: "assay"}
	for _, r := range results {
		s := junitSuite{Name: r.Name()}
		runDir := ""
		if o := r.Outcome; o != nil {
			runDir = o.RunDir
			s.Properties = append(s.Properties, junitProperty{"run directory", runDir}, junitProperty{"file", r.Path})
		}
		add := func(name, file string, failed bool, code, msg string) {
			c := junitCase{Name: name, Classname: r.Name(), File: file}
			if failed {
				body := msg
				if runDir != "" {
					body += "\nrun directory: " + runDir
				}
				c.Failure = &junitFailure{Message: msg, Type: code, Body: body}
				s.Failures++
			}
			s.Cases = append(s.Cases, c)
			s.Tests++
		}
		o := r.Outcome
		runFailed := r.Err != nil || o == nil || o.Status != "complete"
		runMsg := ""
		switch {
		case r.Err != nil:
			runMsg = r.Err.Error()
		case o == nil:
			runMsg = "the workload did not run"
		case runFailed:
			runMsg = "the run ended " + o.Status
		}
		add("loads and runs to completion", r.Path, runFailed, r.Code(), runMsg)
		if o != nil && o.Verification != nil {
			msg := ""
			for _, m := range o.Verification.Mismatches {
				msg += m + "\n"
			}
			add("verifies the report and every receipt", r.Path, !o.Verification.OK, harness.CodeVerifyFailed, msg)
		}
		if o != nil && o.BudgetExhausted() {
			add("promotes a candidate within the habitat budget", r.Path, true, harness.CodeRunFailed, "the habitat budget was exhausted before a candidate was promoted (budget.json)")
		}
		if o != nil {
			for _, g := range o.Gates {
				add("gate: "+g.Rule.Name(), g.Rule.Pos.File, !g.Passed, harness.CodeGateFailed, g.Message)
			}
		}
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Suites = append(doc.Suites, s)
	}
	if stopErr != nil {
		doc.Suites = append(doc.Suites, junitSuite{Name: "assay run", Tests: 1, Failures: 1, Cases: []junitCase{{
			Name: "runs every workload", Classname: "assay run",
			Failure: &junitFailure{Message: stopErr.Error(), Type: harness.CodeCancelled, Body: stopErr.Error()},
		}}})
		doc.Tests++
		doc.Failures++
	}
	return doc
}

// writeJUnit writes the JUnit report atomically.
func writeJUnit(path string, results []*harness.Result, stopErr error) error {
	b, err := xml.MarshalIndent(junitReport(results, stopErr), "", "  ")
	if err != nil {
		return err
	}
	data := append([]byte(xml.Header), b...)
	if err := atomicfile.Write(path, append(data, '\n')); err != nil {
		return &fault.Error{Code: fault.IOFailed, File: path, Message: "cannot write the JUnit report: " + err.Error()}
	}
	return nil
}
