// Package expr holds the comparison benchmarks of Assay's algal.expr.v1
// evaluator against github.com/google/cel-go on equivalent programs. It
// lives in its own module so cel-go never enters the main module's
// dependency graph.
package expr
