// Package expr is Assay's evaluator for algal.expr.v1, the bounded, pure
// JSON expression language that scorers, axes, guards, expr cells and recall
// queries run on.
//
// A program is a plain JSON value (nil, bool, float64, string, []any,
// map[string]any). Compile checks it statically (program bytes, nodes,
// depth, the op table, arity, binder names, literal get names) and turns it
// into a node tree with resolved ops and slot-indexed binders, so an
// evaluation never re-parses or re-checks.
//
// Each op is one entry (an opDef) in one of the ops_*.go files, grouped by
// family: name, arity, binder slots, base cost, the extra charges, a
// summary and example for the reference (Reference, `assay expr ops`,
// docs/expr.md), and the implementation. Literals, object literals and get
// are dispatched inline; every other op through its entry. Eval then meters fuel exactly as
// the upstream evaluator does: the same program and env give the same value
// or error and the same burn on every machine. Run is the upstream "run"
// pipeline in its exact order (env admission, static check with the env
// keys as names, budget check, evaluation, output checks).
//
// Every failure is an *fault.Error whose Code is one of EXPR_PARSE, EXPR_OP,
// EXPR_ARITY, EXPR_TYPE, EXPR_PATH, EXPR_ARG, EXPR_NUM, EXPR_DIV_ZERO,
// EXPR_BOUNDS, EXPR_FUEL and whose Message is the canonical JSON of
// {code, ...details}, the text receipts embed.
//
// Choices where the facts leave room (each only decides which of two
// simultaneous failures is reported, never a successful result):
//   - The value-bytes walk counts a container's brackets and commas when
//     it enters the container, and an object entry's quoted key and colon
//     just before its value.
//   - Object literals and map add a member's key/comma bytes after the
//     member has been evaluated, then walk it at depth 1.
//   - Results that are sub-values of already-walked values (get, nth,
//     if/let/fold results, take/drop/reverse/sort/unique/concat/flat/merge/
//     keys/values) are not walked again: such a walk cannot fail. split
//     and join results are measured, since quotes around each part or an
//     escaped separator can make them larger than their inputs.
//   - has takes its key as want "string" (arg 1); text ops name want
//     "string" as upstream's string helper does.
//   - Values returned share structure with the program and env; callers
//     must treat them as immutable.
package expr
