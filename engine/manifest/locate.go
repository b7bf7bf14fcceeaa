package manifest

import (
	"strconv"
	"strings"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

// A rejection's message begins with the field it is about, as this
// package writes it (`cells[3] "route": output.labels: duplicate label`),
// and must keep those bytes: a spawned manifest's rejection rides its
// receipt. A person reading a file wants the line and column as well, so
// the readers of files (ReadFile, LocateFile) read the path back out of
// the message and find it in the file's text.

// LocateFile gives err, a rejection of the manifest file at path (by
// Compile, say, after ReadFile admitted it), the file, line and column of
// the field its message names, and appends its hint to the message. An
// error that already names a file, or a file that no longer reads, is
// returned as it is.
func LocateFile(path string, err error) error {
	e, ok := fault.As(err)
	if !ok || e.File != "" {
		return err
	}
	data, rerr := canon.ReadBounded(path, MaxManifestBytes)
	if rerr != nil {
		return err
	}
	return locate(path, data, err)
}

// locate is LocateFile on the file's text already read.
func locate(path string, data []byte, err error) error {
	e, ok := fault.As(err)
	if !ok || e.File != "" {
		return err
	}
	located := *e
	located.File = path
	located.Message += e.Hint
	located.Hint = ""
	if steps, key := messagePath(e.Message); len(steps) > 0 {
		loc := canon.Locate(data, steps...)
		off := loc.Value
		if key && loc.Matched == len(steps) {
			off = loc.Key
		}
		located.Line, located.Column = canon.LineColumn(data, off)
	}
	return &located
}

// messagePath reads the field path a message starts with: the leading
// ": "-separated pieces that parse as paths. key reports that the last
// step is an object key to point at (an unknown key) rather than a value.
func messagePath(msg string) (steps []string, key bool) {
	rest := msg
	for {
		piece, after, ok := strings.Cut(rest, ": ")
		if !ok {
			break
		}
		s, ok := canon.FieldSteps(piece)
		if !ok {
			break
		}
		steps = append(steps, s...)
		rest = after
	}
	// The message names a member more precisely than its field path: the
	// unknown key itself, or the end of an edge that is wrong.
	if q, ok := strings.CutPrefix(rest, "unknown key "); ok {
		if k, err := strconv.Unquote(quotedPrefix(q)); err == nil {
			return append(steps, k), true
		}
	}
	for _, r := range endpointMistakes {
		if strings.HasPrefix(rest, r.prefix) && strings.Contains(rest, r.infix) {
			return append(steps, r.step), false
		}
	}
	return steps, false
}

// endpointMistakes refine the path of an edge end or interface port
// ({"cell","port"}) to the member at fault.
var endpointMistakes = []struct{ prefix, infix, step string }{
	{prefix: "unknown producer cell ", step: "cell"},
	{prefix: "unknown consumer cell ", step: "cell"},
	{prefix: "names missing cell ", step: "cell"},
	{prefix: "must name an input cell", step: "cell"},
	{prefix: "cell ", infix: " has no output port ", step: "port"},
	{prefix: "cell ", infix: " has no input port ", step: "port"},
}

func quotedPrefix(s string) string {
	q, err := strconv.QuotedPrefix(s)
	if err != nil {
		return ""
	}
	return q
}
