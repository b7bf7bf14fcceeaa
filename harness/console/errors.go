package console

import (
	"fmt"
	"io"
	"strings"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/expr"
	"github.com/algal-assay/assay/internal/suggest"
)

// How an error reads, for every verb and for the job's display: upstream's
// one JSON line for a program (a pipe, --json), a sentence for a person
// on a terminal.

// WriteError prints upstream's error shape, one canonical line
// {"error":{"code","message"},"ok":false}.
//
// Expression errors embedded in the message in their canonical form (a
// manifest's guard or expr cell, a cell failure read back from a receipt)
// are printed as sentences for the person reading; the code stays.
func WriteError(w io.Writer, code, message string) {
	message = expr.Humanize(message)
	b, err := canon.Encode(map[string]any{"ok": false, "error": map[string]any{"code": code, "message": message}})
	if err != nil {
		b = []byte(`{"ok":false}`)
	}
	fmt.Fprintf(w, "%s\n", b)
}

// WriteSentence prints an error for a person: "assay: MESSAGE (CODE)" and
// the hint, if any, as "hint: ..." below it. A hint written to be appended
// (` (did you mean "eq"?)`) loses its parentheses.
func WriteSentence(w io.Writer, code, message, hint string) {
	message = expr.Humanize(message)
	if hint == "" {
		// Most suggestions ride at the end of the message itself.
		message, hint, _ = suggest.SplitHint(message)
	}
	fmt.Fprintf(w, "assay: %s (%s)\n", strings.TrimRight(message, ". \n"), code)
	hint = strings.TrimSpace(hint)
	if strings.HasPrefix(hint, "(") && strings.HasSuffix(hint, ")") {
		hint = hint[1 : len(hint)-1]
	}
	if hint != "" {
		fmt.Fprintf(w, "hint: %s\n", hint)
	}
}
