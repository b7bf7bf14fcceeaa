package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/expr"
	"github.com/algal-assay/assay/harness/console"
	"github.com/spf13/cobra"
)

func newExprCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "expr",
		Short: "Evaluate or statically check algal.expr.v1 programs",
	}
	cmd.AddCommand(newExprEvalCmd(c), newExprCheckCmd(c), newExprOpsCmd(c))
	return cmd
}

func newExprEvalCmd(c *cli) *cobra.Command {
	var program, env, fuel string
	cmd := &cobra.Command{
		Use:   "eval --program JSON [--env JSON] [--fuel N]",
		Short: "Run a program through the expr run pipeline",
		Args:  cobra.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			if program == "" {
				return usagef("expr eval: --program is required")
			}
			return c.exprEval(program, env, fuel)
		},
	}
	cmd.Flags().StringVar(&program, "program", "", "program as JSON, or @FILE")
	cmd.Flags().StringVar(&env, "env", "", "env object as JSON, or @FILE (default {})")
	cmd.Flags().StringVar(&fuel, "fuel", strconv.Itoa(expr.DefaultFuel), "fuel budget, an integer in [0, 1000000]")
	return cmd
}

func newExprCheckCmd(c *cli) *cobra.Command {
	var program, names string
	cmd := &cobra.Command{
		Use:   "check --program JSON [--names a,b,c]",
		Short: "Statically check a program (bounds, ops, arity, binders, get names)",
		Args:  cobra.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			if program == "" {
				return usagef("expr check: --program is required")
			}
			return c.exprCheck(program, names)
		},
	}
	cmd.Flags().StringVar(&program, "program", "", "program as JSON, or @FILE")
	cmd.Flags().StringVar(&names, "names", "", "declared names: a,b,c or @FILE (JSON array)")
	return cmd
}

func (c *cli) exprEval(programArg, envArg, fuelArg string) error {
	v, burn, err := expr.EvalArguments(programArg, envArg, fuelArg, c.stdin)
	return c.exprResult(v, burn, err)
}

// exprResult prints {"burn","value"} or {"burn","error"} canonically; a
// failure exits 1 without a second report on stderr.
func (c *cli) exprResult(v any, burn int, err error) error {
	if err != nil && c.readable() {
		c.exprSentence(err)
		return reported(err)
	}
	b, encErr := canon.Encode(expr.ResultValue(v, burn, err))
	if encErr != nil {
		return encErr
	}
	if _, werr := fmt.Fprintf(c.stdout, "%s\n", b); werr != nil {
		return werr
	}
	if err != nil {
		return reported(err)
	}
	return nil
}

// exprSentence prints an expression error for a person on a terminal:
// the sentence the canonical error stands for, its code and the hint.
func (c *cli) exprSentence(err error) {
	console.WriteSentence(c.stdout, expr.ErrorCode(err), expr.Describe(err), "")
}

func (c *cli) exprCheck(programArg, namesArg string) error {
	report := func(err error) error {
		if c.readable() {
			c.exprSentence(err)
			return reported(err)
		}
		b, encErr := canon.Encode(map[string]any{"error": expr.ErrorValue(err)})
		if encErr != nil {
			return encErr
		}
		fmt.Fprintf(c.stdout, "%s\n", b)
		return reported(err)
	}
	program, err := expr.ReadArgument("program", programArg, expr.ProgramText, c.stdin)
	if err != nil {
		return report(err)
	}
	names, err := expr.ReadNames(namesArg, c.stdin)
	var notList *expr.NamesNotAList
	if errors.As(err, &notList) {
		return err // an argument problem, not the program's
	}
	if err != nil {
		return report(err)
	}
	if err := expr.Check(program, names); err != nil {
		return report(err)
	}
	_, err = fmt.Fprintln(c.stdout, `{"ok":true}`)
	return err
}

func newExprOpsCmd(c *cli) *cobra.Command {
	var markdown bool
	cmd := &cobra.Command{
		Use:   "ops [--json | --markdown]",
		Short: "List every op of algal.expr.v1: arity, fuel, an example and its result",
		Args:  cobra.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			ref, err := expr.Reference()
			if err != nil {
				return err
			}
			switch {
			case markdown:
				_, err = io.WriteString(c.stdout, expr.ReferenceMarkdown(ref))
			case c.json:
				err = expr.WriteReferenceJSON(c.stdout, ref)
			default:
				err = expr.WriteReferenceTable(c.stdout, ref)
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&markdown, "markdown", false, "print the reference as Markdown (docs/expr.md)")
	return cmd
}
