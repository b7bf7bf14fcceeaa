package expr

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/algal-assay/assay/engine/canon"
)

// The renderings of the op reference (Reference): a table for people,
// canonical JSON, and the Markdown of docs/expr.md (`assay expr ops`).

// fuelWords is an op's fuel in words: the base charge, then the extra.
func fuelWords(o OpInfo) string {
	s := strconv.Itoa(o.BaseCost)
	if o.PerArgument {
		s += " + number of arguments"
	}
	if o.ExtraCost != "" {
		s += ", " + o.ExtraCost
	}
	return s
}

// WriteReferenceTable prints the reference family by family as aligned
// columns.
func WriteReferenceTable(w io.Writer, ref []OpInfo) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	family := ""
	for _, o := range ref {
		if o.Family != family {
			if family != "" {
				fmt.Fprintln(tw)
			}
			family = o.Family
			fmt.Fprintf(tw, "%s\n  OP\tARITY\tFUEL\tEXAMPLE\tRESULT\tBURN\tWHAT IT DOES\n", family)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%d\t%s\n", o.Name, o.Arity, fuelWords(o), o.Example, o.Result, o.Burn, o.Summary)
	}
	return tw.Flush()
}

// WriteReferenceJSON prints the reference as one canonical JSON array.
func WriteReferenceJSON(w io.Writer, ref []OpInfo) error {
	raw, err := json.Marshal(ref)
	if err != nil {
		return err
	}
	v, err := canon.Parse(raw, 0)
	if err != nil {
		return err
	}
	b, err := canon.Encode(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// referenceIntro opens docs/expr.md.
const referenceIntro = `# The expression language (algal.expr.v1): every op

<!-- Generated from engine/expr's op table by ` + "`assay expr ops --markdown`" + `.
     Do not edit: change the op's entry in engine/expr/ops_*.go, then run
     go test ./cmd/assay -run TestExprDocsInSync -update -->

A program is a JSON value: a scalar is itself, an object builds an object
from its evaluated fields, and an array is an op call ` + "`[op, arg...]`" + `. Names
come from the binders of let, map, filter and fold, then from the env.
Every program runs on a fuel budget (default 10,000, at most 1,000,000): a
literal costs 1, an op its base cost on entry plus the extra charges below,
and a program that runs out fails EXPR_FUEL. Burns are the contract's:
the same program and env burn the same on every machine.

` + "`assay expr ops`" + ` prints this table, ` + "`assay expr ops --json`" + ` the same as JSON,
` + "`assay expr eval --program JSON`" + ` runs a program. Each example below was run to
produce its result and burn.
`

// ReferenceMarkdown renders docs/expr.md; cmd/assay's TestExprDocsInSync
// keeps the file equal to it.
func ReferenceMarkdown(ref []OpInfo) string {
	var b strings.Builder
	b.WriteString(referenceIntro)
	family := ""
	cell := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	code := func(s string) string { return "`" + s + "`" }
	for _, o := range ref {
		if o.Family != family {
			family = o.Family
			b.WriteString("\n## " + family + "\n\n| op | arity | fuel | what it does | example | result | burn |\n| --- | --- | --- | --- | --- | --- | ---: |\n")
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %d |\n", code(o.Name), o.Arity, cell(fuelWords(o)),
			cell(o.Summary), code(cell(o.Example)), code(cell(o.Result)), o.Burn)
	}
	return b.String()
}
