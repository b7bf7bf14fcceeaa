// Package synth writes synthetic bench workloads of any size, for the
// scale tests and benchmarks of bench runs in parts (issue 19): a ticket
// triage bench over the fixtures/triage organisms whose systems and cases
// are generated, so a 20,000-case workload is a few megabytes of case
// files rather than a checked-in fixture.
package synth

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Spec shapes a synthetic workload.
type Spec struct {
	Name    string // default "scale"
	Systems int    // 1..64
	Cases   int    // 1..20000
	// Triage is the fixtures/triage directory (triage-single.algal.json
	// and triage-escalating.algal.json).
	Triage string
	// Gate, when set, adds a gate: min-passed on the first system, an
	// outcomes rule on its last case and on-pareto for the last system.
	Gate bool
	// Distinct gives every system its own copy of its organism under its
	// own key (sys-NN.algal.json), so no two systems share a manifest
	// digest and every receipt of the run is different: per-system work
	// (verification above all) is not hidden by identical receipts.
	// Without it, systems cycle through three contenders and systems i
	// and i+3 write byte-identical receipts. The scale benchmarks take it
	// with a trailing "d" (ASSAY_SCALE=8x20000d; BENCHMARKS.md "Scale
	// out").
	Distinct bool
}

var queues = []string{"billing", "technical", "account", "other"}

// Write writes the workload (dir/<name>.bench.yaml, its case files and
// copies of the two organisms) and returns the workload file's path. The
// same spec writes the same bytes.
func Write(dir string, s Spec) (string, error) {
	if s.Name == "" {
		s.Name = "scale"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for _, m := range []string{"triage-single.algal.json", "triage-escalating.algal.json"} {
		b, err := os.ReadFile(filepath.Join(s.Triage, m))
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, m), b, 0o644); err != nil {
			return "", err
		}
	}
	var y strings.Builder
	fmt.Fprintf(&y, "name: %s\nrevision: 1\ndescription: synthetic ticket triage, %d systems x %d cases\nsystems:\n", s.Name, s.Systems, s.Cases)
	for i := range s.Systems {
		id := SystemID(i)
		organism, executors := "triage-single.algal.json", "cheap: cases"
		switch i % 3 {
		case 1:
			executors = "frontier: cases"
		case 2:
			organism, executors = "triage-escalating.algal.json", "cheap: cases, frontier: cases"
		}
		if s.Distinct {
			own, err := writeOwnOrganism(dir, organism, id)
			if err != nil {
				return "", err
			}
			organism = own
		}
		fmt.Fprintf(&y, "  - { id: %s, manifest: %s, executors: { %s } }\n", id, organism, executors)
	}
	y.WriteString(`usage:
  cheap:
    route: { model: small-1, tokensIn: 210, tokensOut: 2 }
    screen: { model: small-1, tokensIn: 230, tokensOut: 2 }
  frontier:
    route: { model: large-1, tokensIn: 210, tokensOut: 2 }
    escalate: { model: large-1, tokensIn: 260, tokensOut: 2 }
prices:
  small-1: { input: 0.15, output: 0.60 }
  large-1: { input: 3.00, output: 15.00 }
cases:
`)
	const perFile = 2000
	for f := 0; f*perFile < s.Cases; f++ {
		name := fmt.Sprintf("cases-%03d.jsonl", f+1)
		if err := writeCases(filepath.Join(dir, name), f*perFile, min((f+1)*perFile, s.Cases)); err != nil {
			return "", err
		}
		fmt.Fprintf(&y, "  - file: %s\n", name)
	}
	if s.Gate {
		fmt.Fprintf(&y, "gate:\n  min-passed: { %s: 1 }\n  outcomes: { %s: { %s: pass } }\n  on-pareto: [%s]\n",
			SystemID(0), SystemID(0), CaseID(s.Cases-1), SystemID(s.Systems-1))
	}
	p := filepath.Join(dir, s.Name+".bench.yaml")
	return p, os.WriteFile(p, []byte(y.String()), 0o644)
}

// writeOwnOrganism writes a copy of the organism file in dir under the
// system's own name and key, and returns its file name.
func writeOwnOrganism(dir, organism, system string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, organism))
	if err != nil {
		return "", err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return "", fmt.Errorf("%s: %v", organism, err)
	}
	key, _ := m["key"].(string)
	if key == "" {
		return "", fmt.Errorf("%s: no key to make the system's own", organism)
	}
	m["key"] = key + "-" + system
	out, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return "", err
	}
	name := system + ".algal.json"
	return name, os.WriteFile(filepath.Join(dir, name), append(out, '\n'), 0o644)
}

// WriteBatch writes n workloads of spec s into dir, named w00, w01, ...
// (s.Name is ignored), for the tests and benchmarks of many workloads run
// together, and returns their files in name order. They share dir's case
// files and organism copies, which the one spec makes identical.
func WriteBatch(dir string, n int, s Spec) ([]string, error) {
	files := make([]string, 0, n)
	for i := range n {
		s.Name = fmt.Sprintf("w%02d", i)
		p, err := Write(dir, s)
		if err != nil {
			return nil, err
		}
		files = append(files, p)
	}
	return files, nil
}

// SystemID names system i (0-based).
func SystemID(i int) string { return fmt.Sprintf("sys-%02d", i+1) }

// CaseID names case i (0-based).
func CaseID(i int) string { return fmt.Sprintf("t%05d", i+1) }

// writeCases writes cases [from, to) as JSONL: the cheap model misroutes
// every seventh ticket and is unsure of every fifth (the escalating
// system then asks the frontier, which is always right).
func writeCases(path string, from, to int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for i := from; i < to; i++ {
		q := queues[i%len(queues)]
		cheap := q
		if i%7 == 3 {
			cheap = queues[(i+1)%len(queues)]
		}
		screen := cheap
		if i%5 == 2 {
			screen = "unsure"
		}
		frontier := map[string]any{"route": q}
		if screen == "unsure" {
			frontier["escalate"] = q
		}
		c := map[string]any{
			"id":     CaseID(i),
			"args":   map[string]any{"ticket": fmt.Sprintf("Ticket %d: a customer writes about something the %s team owns.", i+1, q)},
			"expect": map[string]any{"queue": q},
			"responses": map[string]any{
				"cheap":    map[string]any{"route": cheap, "screen": screen},
				"frontier": frontier,
			},
		}
		if err := enc.Encode(c); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
