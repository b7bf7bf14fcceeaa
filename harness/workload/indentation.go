package workload

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/algal-assay/assay/engine/fault"
)

// locateIndentation sharpens a YAML syntax error caused by indentation:
// yaml.v3 reports where the block it could not close began, at column 1
// ("did not find expected '-' indicator" on the line of `systems:`), while
// the mistake is a later line. It points at the first line indented with
// a tab, or indented to a column no enclosing block uses, and says how to
// fix it; any other error is returned as it was.
func locateIndentation(file string, data []byte, e *fault.Error) *fault.Error {
	line, col, msg, ok := indentationMistake(data, true)
	if !ok {
		return e
	}
	return &fault.Error{Code: e.Code, File: file, Line: line, Column: col, Message: msg}
}

var blockScalar = regexp.MustCompile(`[|>][-+0-9]*$`)

// indentationMistake walks the lines as a YAML block structure: a line may
// open a deeper block only after a line that opens one (`key:` with no
// value, a list item), and a shallower line must line up with a block
// around it.
func indentationMistake(data []byte, tabs bool) (line, col int, msg string, ok bool) {
	lines := bytes.Split(data, []byte("\n"))
	if tabs {
		for i, l := range lines {
			lead := len(l) - len(bytes.TrimLeft(l, " \t"))
			if j := bytes.IndexByte(l[:lead], '\t'); j >= 0 {
				return i + 1, j + 1, "a tab indents this line; YAML indents with spaces only (replace the tab with spaces, as many as the lines around it use)", true
			}
		}
	}
	levels := []int{0}
	opens, scalarAt, depth := false, -1, 0
	prevContent := ""
	for i, raw := range lines {
		l := strings.TrimRight(string(raw), " \r")
		content := strings.TrimLeft(l, " ")
		if content == "" || strings.HasPrefix(content, "#") {
			continue
		}
		ind := len(l) - len(content)
		if scalarAt >= 0 {
			if ind > scalarAt {
				continue // a block scalar's text
			}
			scalarAt = -1
		}
		if depth > 0 { // inside a multi-line [ ] or { }
			depth += strings.Count(content, "[") + strings.Count(content, "{") - strings.Count(content, "]") - strings.Count(content, "}")
			continue
		}
		top := levels[len(levels)-1]
		switch {
		case ind > top && opens:
			levels = append(levels, ind)
		case ind > top:
			if strings.Contains(content, ": ") || strings.HasSuffix(content, ":") || strings.HasPrefix(content, "- ") {
				return i + 1, ind + 1, fmt.Sprintf("this line is indented %d spaces, deeper than the line above (%q), which opens no block: indent it %d spaces like that line, or end that line with `:`", ind, prevContent, top), true
			}
			continue // a plain scalar continued on the next line
		case ind < top:
			around := joinInts(levels, ", ")
			for len(levels) > 1 && levels[len(levels)-1] > ind {
				levels = levels[:len(levels)-1]
			}
			if levels[len(levels)-1] != ind {
				return i + 1, ind + 1, fmt.Sprintf("this line is indented %d spaces, which lines up with no block around it (they are indented %s): indent it to one of those columns", ind, around), true
			}
		}
		item := content
		for strings.HasPrefix(item, "- ") { // a list item: its mapping sits after the dash
			rest := strings.TrimLeft(item[2:], " ")
			ind += len(item) - len(rest)
			item = rest
			levels = append(levels, ind)
		}
		opens = strings.HasSuffix(item, ":") || item == "-"
		if blockScalar.MatchString(item) && strings.Contains(item, ":") {
			scalarAt = ind
		}
		depth = strings.Count(item, "[") + strings.Count(item, "{") - strings.Count(item, "]") - strings.Count(item, "}")
		if depth < 0 {
			depth = 0
		}
		prevContent = content
	}
	return 0, 0, "", false
}

func joinInts(xs []int, sep string) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, sep)
}
