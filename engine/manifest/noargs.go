package manifest

import (
	"fmt"
	"strings"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

// NeedsNoArgs refuses a run without args of a manifest (read from path)
// whose input cells declare ports that are not optional: every cell
// downstream would be skipped and the run would report "complete" having
// done nothing. The error names the inputs and the shape of the args that
// would serve them.
func (m *Manifest) NeedsNoArgs(path string) error {
	example := map[string]any{}
	var missing []string
	for _, cell := range m.Cells {
		if cell.Kind != KindInput {
			continue
		}
		ports := map[string]any{}
		for _, p := range cell.Declared {
			if !p.Optional {
				missing = append(missing, fmt.Sprintf("%s.%s", cell.ID, p.Name))
				ports[p.Name] = "<" + p.Type + ">"
			}
		}
		if len(ports) > 0 {
			example[cell.ID] = ports
		}
	}
	if len(missing) == 0 {
		return nil
	}
	shape, _ := canon.Encode(example)
	return &fault.Error{Code: fault.InputMissing, File: path,
		Message: fmt.Sprintf("the organism needs input %s, and no --args were given: nothing would run", strings.Join(missing, ", ")),
		Hint:    fmt.Sprintf(" (pass --args FILE holding %s, or --args - to read it from stdin)", shape)}
}
