package expr

import (
	"fmt"
	"io"
	"strings"
)

// NamesNotAList is a --names @FILE that holds no JSON array: an argument
// problem (it carries no expression error code).
type NamesNotAList struct{ File string }

func (e *NamesNotAList) Error() string {
	return fmt.Sprintf("expr check: --names @%s must hold a JSON array", e.File)
}

// ReadNames reads the names a literal get may read besides enclosing
// binders (`assay expr check --names`): comma-separated, or @FILE (@- for
// stdin) holding a JSON array whose string entries are the names (other
// entries are ignored, as upstream does). "" is no names.
func ReadNames(arg string, stdin io.Reader) ([]string, error) {
	rest, fromFile := strings.CutPrefix(arg, "@")
	if !fromFile {
		if arg == "" {
			return nil, nil
		}
		return strings.Split(arg, ","), nil
	}
	v, err := ReadArgument("names", arg, NamesText, stdin)
	if err != nil {
		return nil, err
	}
	list, ok := v.([]any)
	if !ok {
		return nil, &NamesNotAList{File: rest}
	}
	var names []string
	for _, n := range list {
		if s, ok := n.(string); ok {
			names = append(names, s)
		}
	}
	return names, nil
}
