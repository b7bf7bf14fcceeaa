package manifest

import (
	"errors"

	"github.com/algal-assay/assay/engine/expr"
)

// compileExpr statically checks an embedded program; the error text is the
// expr package's canonical {code,...} rendering.
func compileExpr(src any, names []string) (*expr.Program, error) {
	p, err := expr.Compile(src, names)
	if err != nil {
		return nil, errors.New(expr.Canonical(err))
	}
	return p, nil
}
