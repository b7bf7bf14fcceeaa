package receipt

import (
	"io"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

// ReadFile reads a receipt file: a bounded regular file (MaxBytes)
// holding one JSON object. It is parsed, not checked (Check does that).
func ReadFile(path string) (map[string]any, error) {
	v, err := canon.ReadFile(path, MaxBytes)
	if err != nil {
		return nil, err
	}
	return Object(v, path, "receipt")
}

// Object is the document read from path when it is a JSON object;
// anything else fails PARSE_FAILED naming path and what it had to be
// ("receipt", "args").
func Object(v any, path, what string) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &fault.Error{Code: fault.Parse, Message: path + ": " + what + " must be an object"}
	}
	return m, nil
}

// CheckFile checks a receipt read from path as Check does; an error that
// names no file names path.
func CheckFile(rec map[string]any, path string) error {
	err := Check(rec)
	if e, ok := fault.As(err); ok && e.File == "" {
		named := *e
		named.File = path
		return &named
	}
	return err
}

// Comparison is `assay diff`'s record of two receipts,
// {"same","a","b","mismatches"} with one line per difference (Compare),
// and whether they are the same.
func Comparison(a, b map[string]any) (map[string]any, bool) {
	ms := Compare(a, b)
	list := make([]any, len(ms))
	for i, m := range ms {
		list[i] = m
	}
	return map[string]any{"same": len(ms) == 0, "a": a["digest"], "b": b["digest"], "mismatches": list}, len(ms) == 0
}

// ReadArgs reads a run-arguments file ("-": stdin): one JSON object of at
// most MaxArgsBytes.
func ReadArgs(path string, stdin io.Reader) (map[string]any, error) {
	var v any
	var err error
	if path == "-" {
		v, err = canon.ParseReader(stdin, MaxArgsBytes)
	} else {
		v, err = canon.ReadFile(path, MaxArgsBytes)
	}
	if err != nil {
		return nil, err
	}
	return Object(v, path, "args")
}
