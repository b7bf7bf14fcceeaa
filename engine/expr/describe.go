package expr

import (
	"strconv"
	"strings"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/internal/suggest"
)

// Describe renders an expression error as a sentence for a person, with a
// suggestion where one is likely:
//
//	unknown op "eqq" (did you mean "eq"?)
//	op "add" argument 1 must be a number, got text
//	unbound name "scroe" (did you mean "score"?)
//
// names are the env names the program may read; they feed the suggestion
// for an unbound name. The sentence is for people only: receipts, reports
// and the JSON boundary keep the canonical {code, ...details} text
// (Canonical), which is the contract's. An error that is not an
// expression error is returned as err.Error().
func Describe(err error, names ...string) string {
	e, ok := fault.As(err)
	if !ok || e.Details == nil {
		if err == nil {
			return ""
		}
		return err.Error()
	}
	if sentence, ok := sentences[e.Code]; ok {
		return sentence(details(e.Details), names)
	}
	return e.Message
}

// details reads an expression error's detail fields as text.
type details map[string]any

func (d details) text(k string) string {
	switch v := d[k].(type) {
	case string:
		return v
	case float64:
		return string(canon.FormatNumber(nil, v))
	}
	return ""
}

// op is the quoted op name.
func (d details) op() string { return strconv.Quote(d.text("op")) }

// sentences word each error code for a person; names are the env names,
// for an unbound name's suggestion.
var sentences = map[string]func(d details, names []string) string{
	CodeOp:      describeOp,
	CodeArity:   describeArity,
	CodeType:    describeType,
	CodePath:    describePath,
	CodeArg:     describeOpWhat,
	CodeNum:     func(d details, _ []string) string { return "op " + d.op() + " gave a number that is not finite" },
	CodeDivZero: func(d details, _ []string) string { return "op " + d.op() + " divides by zero" },
	CodeBounds:  func(d details, _ []string) string { return boundWords(d.text("what"), d.text("max")) },
	CodeFuel:    describeFuel,
	CodeParse:   describeParse,
}

func describeOp(d details, _ []string) string {
	return "unknown op " + d.op() + suggest.DidYouMean(d.text("op"), Ops())
}

func describeArity(d details, _ []string) string {
	return "op " + d.op() + " takes " + arityWords(d.text("want")) + ", got " + d.text("got")
}

func describeType(d details, _ []string) string {
	if want := d.text("want"); want == "two numbers or two strings" {
		return "op " + d.op() + " compares two numbers or two strings, got " + strings.Replace(d.text("got"), ",", " and ", 1)
	}
	return "op " + d.op() + " argument " + d.text("arg") + " must be " + article(d.text("want")) + ", got " + d.text("got")
}

func describePath(d details, names []string) string {
	what := d.text("what")
	if name, ok := strings.CutPrefix(what, "unbound name "); ok && d.text("op") == "get" {
		unquoted := strings.TrimSuffix(strings.TrimPrefix(name, `"`), `"`)
		return "unbound name " + name + suggest.DidYouMean(unquoted, names)
	}
	return "op " + d.op() + ": " + what
}

func describeOpWhat(d details, _ []string) string { return "op " + d.op() + ": " + d.text("what") }

func describeFuel(d details, _ []string) string {
	return "out of fuel: the next step costs " + d.text("cost") + " and " + d.text("left") + " is left"
}

func describeParse(d details, _ []string) string {
	if _, ok := d["op"]; ok {
		return describeOpWhat(d, nil)
	}
	return d.text("what")
}

// arityWords renders an arity range "min..max" or "min.." in words.
func arityWords(want string) string {
	lo, hi, _ := strings.Cut(want, "..")
	plural := func(n string) string {
		if n == "1" {
			return n + " argument"
		}
		return n + " arguments"
	}
	switch {
	case hi == "":
		return "at least " + plural(lo)
	case lo == hi:
		return plural(lo)
	}
	return lo + " to " + plural(hi)
}

func article(want string) string {
	switch want {
	case "number", "string", "list", "map", "bool", "name string", "nonneg integer",
		"nonneg integer index", "string key or nonneg integer index":
		return "a " + want
	}
	return want
}

var boundSubjects = map[string]string{
	"program-bytes": "the program is over %s canonical bytes",
	"program-nodes": "the program has over %s nodes",
	"program-depth": "the program nests deeper than %s levels",
	"env-bytes":     "the env is over %s canonical bytes",
	"value-depth":   "a value nests deeper than %s levels",
	"list-len":      "a list has over %s elements",
	"object-keys":   "an object has over %s keys",
	"string-bytes":  "a string is over %s bytes",
	"value-bytes":   "a value is over %s canonical bytes",
	"output-bytes":  "the result is over %s canonical bytes",
}

func boundWords(what, max string) string {
	if s, ok := boundSubjects[what]; ok {
		return strings.Replace(s, "%s", max, 1)
	}
	return what // the fuel budget's own sentence
}

// Humanize rewrites every canonical expression error embedded in text
// (`{"code":"EXPR_OP","op":"eqq"}`, as a manifest error or a receipt's
// failure message carries it) into its Describe sentence, leaving the
// rest of text as it is. It is for the last step before a person reads a
// message that was built, or recorded, with the canonical form:
//
//	cells[0] "rate": expr.program: {"code":"EXPR_OP","op":"frobnicate"}
//	cells[0] "rate": expr.program: unknown op "frobnicate"
//
// Only an object that is exactly the canonical form of an EXPR_* error
// is rewritten.
func Humanize(text string) string {
	var b strings.Builder
	rest := text
	for {
		i := strings.Index(rest, `{"`)
		if i < 0 {
			break
		}
		if sentence, n, ok := embeddedError(rest[i:]); ok {
			b.WriteString(rest[:i])
			b.WriteString(sentence)
			rest = rest[i+n:]
			continue
		}
		b.WriteString(rest[:i+2])
		rest = rest[i+2:]
	}
	if b.Len() == 0 {
		return text
	}
	b.WriteString(rest)
	return b.String()
}

// embeddedError reads the canonical expression error s starts with: its
// sentence and its length in bytes.
func embeddedError(s string) (string, int, bool) {
	end := objectEnd(s)
	if end < 0 {
		return "", 0, false
	}
	v, err := canon.Parse([]byte(s[:end]), 0)
	if err != nil {
		return "", 0, false
	}
	m, ok := v.(map[string]any)
	code, _ := m["code"].(string)
	if !ok || !strings.HasPrefix(code, "EXPR_") {
		return "", 0, false
	}
	details := make(map[string]any, len(m))
	for k, x := range m {
		if k != "code" {
			details[k] = x
		}
	}
	e := NewError(code, details)
	if e.Message != s[:end] {
		return "", 0, false
	}
	return Describe(e), end, true
}

// objectEnd is the length of the JSON object s starts with, found by
// matching braces outside strings, or -1.
func objectEnd(s string) int {
	depth, inString := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '{':
			depth++
		case c == '}':
			if depth--; depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}
