package memoryquery

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/algal-assay/assay/engine/fault"
)

// The reference runtime reads facts, rules, the query literal and the
// limits through a strict typed decoder (closed records, typed fields).
// Its rejection messages are receipt data, so this file reproduces that
// decoder's rules and wording: a record may be an object (keys visited in
// byte order, the first unknown key rejected, then the first missing field
// in declaration order) or a positional array; a typed field names what it
// got and what it expected.

// unexpected describes a JSON value the way the decoder's messages do.
func unexpected(v any) string {
	switch x := v.(type) {
	case nil:
		return "unit value"
	case bool:
		return fmt.Sprintf("boolean `%t`", x)
	case float64:
		switch numberClass(x) {
		case classUnsigned, classSigned:
			return fmt.Sprintf("integer `%s`", strconv.FormatFloat(x, 'f', -1, 64))
		}
		s := strconv.FormatFloat(x, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return "floating point `" + s + "`"
	case string:
		return "string " + debugString(x)
	case []any:
		return "sequence"
	case map[string]any:
		return "map"
	}
	return fmt.Sprintf("%T", v)
}

const (
	classUnsigned = iota
	classSigned
	classFloat
)

// numberClass sorts a number the way the reference parser stores it: an
// integral value in the unsigned or signed 64-bit range is an integer,
// anything else a float. (Source text "5.0" is a float there and an
// integer here: canonical JSON cannot tell them apart.)
func numberClass(f float64) int {
	if f != math.Trunc(f) || math.IsInf(f, 0) {
		return classFloat
	}
	if f >= 0 && f < 1<<64 {
		return classUnsigned
	}
	if f < 0 && f >= -(1<<63) {
		return classSigned
	}
	return classFloat
}

// debugString quotes s like the reference's debug formatting of text.
func debugString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case 0:
			b.WriteString(`\0`)
		default:
			if unicode.IsPrint(r) || r == ' ' {
				b.WriteRune(r)
			} else {
				fmt.Fprintf(&b, `\u{%x}`, r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

func invalidType(v any, expected string) *fault.Error {
	return invalid("invalid type: %s, expected %s", unexpected(v), expected)
}

// oneOf lists expected field names the way unknown-field messages do.
func oneOf(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "`" + n + "`"
	}
	switch len(names) {
	case 0:
		return "there are no fields"
	case 1:
		return "expected " + q[0]
	case 2:
		return "expected " + q[0] + " or " + q[1]
	}
	return "expected one of " + strings.Join(q, ", ")
}

// record decodes a closed record. fields are in declaration order; field
// is called once per present field, in visiting order. With defaults, a
// missing field keeps its default instead of failing.
func record(v any, name string, fields []string, defaults bool, field func(name string, v any) *fault.Error) *fault.Error {
	switch x := v.(type) {
	case map[string]any:
		return recordObject(x, fields, defaults, field)
	case []any:
		return recordArray(x, name, fields, defaults, field)
	}
	return invalidType(v, "struct "+name)
}

// recordObject decodes a record written as an object, visiting its keys
// in byte order.
func recordObject(x map[string]any, fields []string, defaults bool, field func(name string, v any) *fault.Error) *fault.Error {
	keys := make([]string, 0, len(x))
	for k := range x {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !slices.Contains(fields, k) {
			return invalid("unknown field `%s`, %s", k, oneOf(fields))
		}
		if err := field(k, x[k]); err != nil {
			return err
		}
	}
	if defaults {
		return nil
	}
	for _, f := range fields {
		if _, seen := x[f]; !seen {
			return invalid("missing field `%s`", f)
		}
	}
	return nil
}

// recordArray decodes a record written as an array of its fields in
// declaration order.
func recordArray(x []any, name string, fields []string, defaults bool, field func(name string, v any) *fault.Error) *fault.Error {
	n := min(len(x), len(fields))
	for i, f := range fields[:n] {
		if err := field(f, x[i]); err != nil {
			return err
		}
	}
	if n < len(fields) && !defaults {
		return invalid("invalid length %d, expected struct %s with %d element%s", n, name, len(fields), plural(len(fields)))
	}
	if len(x) > len(fields) {
		return invalid("invalid length %d, expected fewer elements in array", len(x))
	}
	return nil
}

// plural is the "s" of a count other than one.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func decodeString(v any) (string, *fault.Error) {
	s, ok := v.(string)
	if !ok {
		return "", invalidType(v, "a string")
	}
	return s, nil
}

func decodeSeq(v any) ([]any, *fault.Error) {
	l, ok := v.([]any)
	if !ok {
		return nil, invalidType(v, "a sequence")
	}
	return l, nil
}

func decodeStrings(v any) ([]string, *fault.Error) {
	l, err := decodeSeq(v)
	if err != nil {
		return nil, err
	}
	return decodeEach(l, decodeString)
}

// decodeEach decodes every element of l, stopping at the first failure.
func decodeEach[T any](l []any, decode func(any) (T, *fault.Error)) ([]T, *fault.Error) {
	out := make([]T, len(l))
	for i, x := range l {
		var err *fault.Error
		if out[i], err = decode(x); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// decodeUsize reads a machine-size unsigned integer.
func decodeUsize(v any) (int, *fault.Error) {
	f, ok := v.(float64)
	if !ok {
		return 0, invalidType(v, "usize")
	}
	switch numberClass(f) {
	case classSigned:
		return 0, invalid("invalid value: %s, expected usize", unexpected(f))
	case classFloat:
		return 0, invalidType(f, "usize")
	}
	if f > math.MaxInt {
		// Past every ceiling; keep it out of int range without wrapping.
		return math.MaxInt, nil
	}
	return int(f), nil
}

var (
	literalFields = []string{"relation", "terms"}
	factFields    = []string{"relation", "tuple", "sources"}
	ruleFields    = []string{"id", "head", "body"}
	limitFields   = []string{"maxWork", "maxRounds", "maxDerived", "maxBindings", "maxRows", "maxOutputBytes"}
)

func decodeLiteral(v any) (Literal, *fault.Error) {
	var l Literal
	err := record(v, "Literal", literalFields, false, func(name string, x any) *fault.Error {
		var err *fault.Error
		switch name {
		case "relation":
			l.Relation, err = decodeString(x)
		case "terms":
			l.Terms, err = decodeSeq(x)
		}
		return err
	})
	return l, err
}

func decodeFact(v any) (Fact, *fault.Error) {
	var f Fact
	err := record(v, "Fact", factFields, false, func(name string, x any) *fault.Error {
		var err *fault.Error
		switch name {
		case "relation":
			f.Relation, err = decodeString(x)
		case "tuple":
			f.Tuple, err = decodeSeq(x)
		case "sources":
			f.Sources, err = decodeStrings(x)
		}
		return err
	})
	return f, err
}

func decodeRule(v any) (Rule, *fault.Error) {
	var r Rule
	err := record(v, "Rule", ruleFields, false, func(name string, x any) *fault.Error {
		var err *fault.Error
		switch name {
		case "id":
			r.ID, err = decodeString(x)
		case "head":
			r.Head, err = decodeLiteral(x)
		case "body":
			var l []any
			if l, err = decodeSeq(x); err != nil {
				return err
			}
			r.Body, err = decodeEach(l, decodeLiteral)
		}
		return err
	})
	return r, err
}

func decodeLimits(v any) (Limits, *fault.Error) {
	l := DefaultLimits()
	err := record(v, "Limits", limitFields, true, func(name string, x any) *fault.Error {
		n, err := decodeUsize(x)
		if err != nil {
			return err
		}
		*l.field(name) = n
		return nil
	})
	return l, err
}

func (l *Limits) field(name string) *int {
	switch name {
	case "maxWork":
		return &l.MaxWork
	case "maxRounds":
		return &l.MaxRounds
	case "maxDerived":
		return &l.MaxDerived
	case "maxBindings":
		return &l.MaxBindings
	case "maxRows":
		return &l.MaxRows
	}
	return &l.MaxOutputBytes
}
