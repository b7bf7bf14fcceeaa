package builtins

import (
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/memoryquery"
)

// memory.query.v1 answers a bounded Datalog program over a memory
// snapshot (engine/memoryquery). Beyond the signature's fixed cost the run
// is charged the result's work. A rejected query keeps the evaluator's
// code (PARSE_FAILED for a malformed snapshot or program,
// BUDGET_EXHAUSTED for an exceeded bound) and message, as the native
// registry passes them through.
func fnMemoryQuery(in map[string]any) (map[string]any, int, error) {
	result, err := memoryquery.Query(in["snapshot"], in["program"])
	if err != nil {
		if e, ok := fault.As(err); ok {
			return nil, 0, &fault.Error{Code: e.Code, Message: e.Message}
		}
		return nil, 0, err
	}
	return map[string]any{"result": result}, memoryquery.Work(result), nil
}
