package scaffold

import (
	"fmt"
	"io"

	"github.com/algal-assay/assay/engine/canon"
)

// Value is what `assay init --json` prints for the files written into
// dir: {"dir","files","next"}.
func (w *Written) Value(dir string) map[string]any {
	return map[string]any{"dir": dir, "files": canon.Strings(w.Files), "next": canon.Strings(w.Next)}
}

// WriteText prints what was written into dir and what to do next, for a
// person.
func (w *Written) WriteText(out io.Writer, dir string) error {
	fmt.Fprintf(out, "assay init: wrote %d files in %s\n", len(w.Files), dir)
	for _, n := range w.Files {
		fmt.Fprintf(out, "  %s\n", n)
	}
	fmt.Fprintln(out, "\nNext:")
	for _, n := range w.Next {
		fmt.Fprintf(out, "  %s\n", n)
	}
	return nil
}
