package report

import (
	"fmt"
	"strings"
)

// Evidence is `assay ci verify`'s check of the evidence under some roots:
// one EvidenceFile per receipt, report, budget account or run directory
// found, and what interrupted writes left behind. ci/verify fills it; its
// text lines, JSON, GitHub annotations and job summary render from it.
type Evidence struct {
	Roots []string
	Store string
	// AllowEmpty makes finding nothing a success.
	AllowEmpty bool
	Files      []EvidenceFile
	// Leftovers are what interrupted writers left: listed, not failed.
	Leftovers []Leftover
}

// EvidenceFile is the verification of one file or run directory.
type EvidenceFile struct {
	Path, Kind string
	OK         bool
	// Digest is the receipt, report or account digest ("" for a run
	// directory or a file that does not parse); Status a run directory's
	// record status.
	Digest, Status string
	Mismatches     []string
	// Detail is the line's last column: the digest (or run status) when
	// the file verifies, else the first mismatch and how many more.
	Detail string
}

// Leftover is what an interrupted writer left, with what it is.
type Leftover struct {
	Path, Kind string
	// Status is an interrupted run's record status ("" when unreadable).
	Status      string
	Description string
}

// OK reports whether everything found verified and something was found
// (or AllowEmpty).
func (e *Evidence) OK() bool { return e.Failed() == 0 && (len(e.Files) > 0 || e.AllowEmpty) }

// Failed counts the files that did not verify.
func (e *Evidence) Failed() int {
	n := 0
	for _, f := range e.Files {
		if !f.OK {
			n++
		}
	}
	return n
}

// Sentence is the one-sentence outcome.
func (e *Evidence) Sentence() string {
	n := len(e.Files)
	var s string
	switch f := e.Failed(); {
	case n == 0:
		s = "no receipts, reports, budget accounts or run directories found under " + strings.Join(e.Roots, ", ")
	case f > 0:
		s = fmt.Sprintf("%d of %d %s failed to verify", f, n, plural(n, "file"))
	default:
		s = fmt.Sprintf("all %d %s verified", n, plural(n, "file"))
	}
	if k := len(e.Leftovers); k > 0 {
		s += fmt.Sprintf("; %d %s of interrupted writes listed", k, plural(k, "leftover"))
	}
	return s
}

func plural(n int, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
}

// oneLine folds s onto one line, runs of white space made one space.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\r", " ")), " ")
}
