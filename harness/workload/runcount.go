package workload

import (
	"fmt"
	"strings"
)

// RunCount says how many runs (contender x case) a workload makes and how
// they multiply, e.g. 18, "3 systems x 6 cases"; 0 and "" when a generator
// decides the population.
func (w *Workload) RunCount() (int, string) {
	n, shape := w.runCount()
	if w.Repeats > 1 && n > 0 {
		if strings.Contains(shape, " + ") {
			return n * w.Repeats, fmt.Sprintf("%s of %s", plural(w.Repeats, "repeat"), shape)
		}
		return n * w.Repeats, fmt.Sprintf("%s x %s", shape, plural(w.Repeats, "repeat"))
	}
	return n, shape
}

func (w *Workload) runCount() (int, string) {
	if w.Kind == KindBench {
		return len(w.Systems) * w.NumCases(), fmt.Sprintf("%s x %s", plural(len(w.Systems), "system"), plural(w.NumCases(), "case"))
	}
	if w.Generator != nil {
		return 0, ""
	}
	sel, hold := 0, 0
	for _, c := range w.Cases {
		if c.Split == "holdout" {
			hold++
		} else {
			sel++
		}
	}
	shape := fmt.Sprintf("%s x %s", plural(len(w.Candidates), "candidate"), plural(sel, "selection case"))
	if hold > 0 {
		shape += fmt.Sprintf(" + %s on the winner", plural(hold, "holdout case"))
	}
	return len(w.Candidates)*sel + hold, shape
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// NamePos is where the workload's name: was written.
func (w *Workload) NamePos() Pos { return w.namePos }

// Header is a copy of w that keeps what names and places it (path, kind,
// name, revision, description, repeats and their positions) and none of
// its systems, cases or gate: what a batch keeps of a workload it ran.
func (w *Workload) Header() *Workload {
	return &Workload{Path: w.Path, Dir: w.Dir, Kind: w.Kind, Name: w.Name, Revision: w.Revision, Description: w.Description, Repeats: w.Repeats, pos: w.pos, namePos: w.namePos}
}
