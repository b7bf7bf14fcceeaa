package canon

// Kind is the JSON type of a decoded value.
type Kind uint8

// The kinds, in the order Names lists their words.
const (
	KindNull Kind = iota
	KindBool
	KindNumber
	KindString
	KindArray
	KindObject
	KindOther // a Go value that is not decoded JSON
)

// KindOf returns the JSON type of v.
func KindOf(v any) Kind {
	switch v.(type) {
	case nil:
		return KindNull
	case bool:
		return KindBool
	case float64:
		return KindNumber
	case string:
		return KindString
	case []any:
		return KindArray
	case map[string]any:
		return KindObject
	}
	return KindOther
}

// Names holds one vocabulary's word for each kind. The contracts name JSON
// types in their own words (algal.expr.v1 says "text", "list" and "map",
// organism ports say "text" and "boolean", receipts' guard failures say
// "string" and "bool") and those words are receipt data, so each package
// keeps its vocabulary as one Names value and classifies through KindOf.
type Names [KindOther + 1]string

// Of names v's kind.
func (n *Names) Of(v any) string { return n[KindOf(v)] }
