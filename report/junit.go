package report

import "encoding/xml"

// Codes of the JUnit failures that are not a load or run error's own.
const (
	codeGateFailed   = "GATE_FAILED"
	codeVerifyFailed = "VERIFY_FAILED"
	codeRunFailed    = "RUN_FAILED"
	codeCancelled    = "CANCELLED"
)

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
	runDir     string
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

// JUnit renders the job's results as a JUnit XML document, header and
// final line break included.
func JUnit(r *Results) ([]byte, error) {
	b, err := xml.MarshalIndent(junitReport(r), "", "  ")
	if err != nil {
		return nil, err
	}
	data := append([]byte(xml.Header), b...)
	return append(data, '\n'), nil
}

func junitReport(r *Results) junitSuites {
	doc := junitSuites{Name: "assay"}
	for i := range r.Workloads {
		s := junitWorkload(&r.Workloads[i])
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Suites = append(doc.Suites, s)
	}
	if r.Stopped != "" {
		doc.Suites = append(doc.Suites, junitSuite{Name: "assay run", Tests: 1, Failures: 1, Cases: []junitCase{{
			Name: "runs every workload", Classname: "assay run",
			Failure: &junitFailure{Message: r.Stopped, Type: codeCancelled, Body: r.Stopped},
		}}})
		doc.Tests++
		doc.Failures++
	}
	return doc
}

// junitWorkload is one workload's suite: it loads and runs, its evidence
// verifies, a foundry promotes within its budget, each gate rule holds.
func junitWorkload(w *Workload) junitSuite {
	s := junitSuite{Name: w.Label()}
	r := w.Run
	if r != nil {
		s.runDir = r.Dir
		s.Properties = append(s.Properties, junitProperty{"run directory", r.Dir}, junitProperty{"file", w.File})
	}
	runFailed := w.Err != "" || r == nil || r.Status != "complete"
	s.add(w, "loads and runs to completion", w.File, runFailed, w.Code, runFailure(w))
	if r == nil {
		return s
	}
	if v := r.Verification; v != nil {
		msg := ""
		for _, m := range v.Mismatches {
			msg += m + "\n"
		}
		s.add(w, "verifies the report and every receipt", w.File, !v.OK, codeVerifyFailed, msg)
	}
	if r.BudgetExhausted {
		s.add(w, "promotes a candidate within the habitat budget", w.File, true, codeRunFailed, "the habitat budget was exhausted before a candidate was promoted (budget.json)")
	}
	for _, g := range r.Gates {
		s.add(w, "gate: "+g.Name, g.File, !g.Passed, codeGateFailed, g.Message)
	}
	return s
}

// runFailure says why the workload did not run to completion ("" when it
// did).
func runFailure(w *Workload) string {
	switch {
	case w.Err != "":
		return w.Err
	case w.Run == nil:
		return "the workload did not run"
	case w.Run.Status != "complete":
		return "the run ended " + w.Run.Status
	}
	return ""
}

// add records one check of w, a failure (with the run directory in its
// body) when failed.
func (s *junitSuite) add(w *Workload, name, file string, failed bool, code, msg string) {
	c := junitCase{Name: name, Classname: w.Label(), File: file}
	if failed {
		body := msg
		if s.runDir != "" {
			body += "\nrun directory: " + s.runDir
		}
		c.Failure = &junitFailure{Message: msg, Type: code, Body: body}
		s.Failures++
	}
	s.Cases = append(s.Cases, c)
	s.Tests++
}
