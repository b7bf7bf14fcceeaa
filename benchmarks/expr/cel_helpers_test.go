package expr

import (
	"reflect"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"
)

var anyType = reflect.TypeOf((*any)(nil)).Elem()

// celBindings enables cel.bind, CEL's let, for the nested let/if workload.
func celBindings() cel.EnvOption { return ext.Bindings() }

// normalize turns cel-go's native conversions into plain JSON values.
func normalize(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	case int64:
		return float64(x)
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Slice {
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = normalize(rv.Index(i).Interface())
		}
		return out
	}
	return v
}
