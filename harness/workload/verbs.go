package workload

import (
	"fmt"
	"strings"

	"github.com/algal-assay/assay/engine/fault"
)

// NotAConfig refuses a YAML workload given to a verb that takes a JSON
// config (bench, foundry, foundry search): the workload runs with
// `assay run`, which compiles it to the config the verb reads.
func NotAConfig(verb, path string) error {
	if _, ok := KindOf(path); !ok {
		return nil
	}
	return &fault.Error{Code: CodeWorkload, File: path,
		Message: fmt.Sprintf("is a YAML workload, and `assay %s` takes an algal.%s.config.v1 JSON config", verb, strings.Fields(verb)[0]),
		Hint:    fmt.Sprintf(" (run the workload with `assay run %s`)", path)}
}

// DefaultSuites is where the verbs that take workload paths look when
// given none.
const DefaultSuites = "suites"
