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
	d := func(k string) string {
		switch v := e.Details[k].(type) {
		case string:
			return v
		case float64:
			return string(canon.FormatNumber(nil, v))
		}
		return ""
	}
	op := strconv.Quote(d("op"))
	switch e.Code {
	case CodeOp:
		return "unknown op " + op + suggest.DidYouMean(d("op"), Ops())
	case CodeArity:
		return "op " + op + " takes " + arityWords(d("want")) + ", got " + d("got")
	case CodeType:
		if want := d("want"); want == "two numbers or two strings" {
			return "op " + op + " compares two numbers or two strings, got " + strings.Replace(d("got"), ",", " and ", 1)
		}
		return "op " + op + " argument " + d("arg") + " must be " + article(d("want")) + ", got " + d("got")
	case CodePath:
		what := d("what")
		if name, ok := strings.CutPrefix(what, "unbound name "); ok && d("op") == "get" {
			unquoted := strings.TrimSuffix(strings.TrimPrefix(name, `"`), `"`)
			return "unbound name " + name + suggest.DidYouMean(unquoted, names)
		}
		return "op " + op + ": " + what
	case CodeArg:
		return "op " + op + ": " + d("what")
	case CodeNum:
		return "op " + op + " gave a number that is not finite"
	case CodeDivZero:
		return "op " + op + " divides by zero"
	case CodeBounds:
		return boundWords(d("what"), d("max"))
	case CodeFuel:
		return "out of fuel: the next step costs " + d("cost") + " and " + d("left") + " is left"
	case CodeParse:
		if _, ok := e.Details["op"]; ok {
			return "op " + op + ": " + d("what")
		}
		return d("what")
	}
	return e.Message
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
