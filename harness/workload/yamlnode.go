package workload

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/internal/suggest"
	"github.com/algal-assay/assay/internal/yamlsize"
	"gopkg.in/yaml.v3"
)

// CodeWorkload is the contract code of every workload rejection.
const CodeWorkload = "WORKLOAD_INVALID"

// Pos is where something was written: file, line and column (1-based).
type Pos struct {
	File         string
	Line, Column int
}

func (p Pos) String() string {
	if p.Line == 0 {
		return p.File
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Column)
}

// decoder walks yaml.v3 nodes strictly: closed key sets, exact types, and
// every error carrying the node's position and key path. Decoding into
// nodes (rather than structs with KnownFields) keeps positions for errors
// found after decoding, such as a gate naming a system that does not exist.
type decoder struct {
	file string
	// lineOffset shifts node lines; JSONL files parse one line at a time.
	lineOffset int
	// values counts the nodes json has converted. yaml.v3 keeps an alias
	// as one node, so a few lines of nested aliases can stand for billions
	// of values; the bound stops that long before memory or time run out.
	values int
	// expanded is the bytes the file's documents stand for so far, aliases
	// expanded (yamlsize); it stays under maxExpandedBytes.
	expanded int64
}

// maxExpandedBytes bounds the bytes one file may stand for once its
// aliases are expanded. A file without aliases stays under twice its size
// (yamlsize.Check), so only alias expansion trips it, and it trips before
// any value is converted or encoded.
const maxExpandedBytes = 2 * maxWorkloadBytes

// bound charges doc's expanded size to the file, failing at the node
// where it passes maxExpandedBytes.
func (d *decoder) bound(doc *yaml.Node) error {
	size, over := yamlsize.Check(doc, maxExpandedBytes-d.expanded)
	if over != nil {
		return d.fail(over, nodePath(doc, over, ""), "aliases expand this file to more than %d bytes; write the values out or alias less", maxExpandedBytes)
	}
	d.expanded += size
	return nil
}

// maxValues bounds the values one file may convert into JSON. A file
// without aliases cannot reach it within maxWorkloadBytes (every value
// takes at least two bytes), so only alias expansion trips it.
const maxValues = maxWorkloadBytes / 2

func (d *decoder) pos(n *yaml.Node) Pos {
	if n == nil {
		return Pos{File: d.file}
	}
	return Pos{File: d.file, Line: n.Line + d.lineOffset, Column: n.Column}
}

func (d *decoder) fail(n *yaml.Node, path, format string, a ...any) *fault.Error {
	p := d.pos(n)
	return &fault.Error{Code: CodeWorkload, File: p.File, Line: p.Line, Column: p.Column, Path: path, Message: fmt.Sprintf(format, a...)}
}

func errAt(p Pos, path, format string, a ...any) *fault.Error {
	return &fault.Error{Code: CodeWorkload, File: p.File, Line: p.Line, Column: p.Column, Path: path, Message: fmt.Sprintf(format, a...)}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

// resolve follows aliases.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// nodePath is the key path from n down to target (written like
// `cases[0].args`), without following aliases; "" when target is n or not
// under it.
func nodePath(n, target *yaml.Node, path string) string {
	p, _ := findPath(n, target, path)
	return p
}

func findPath(n, target *yaml.Node, path string) (string, bool) {
	if n == target {
		return path, true
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if p, ok := findPath(c, target, path); ok {
				return p, true
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			if p, ok := findPath(c, target, index(path, i)); ok {
				return p, true
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := join(path, n.Content[i].Value)
			if p, ok := findPath(n.Content[i], target, k); ok {
				return p, true
			}
			if p, ok := findPath(n.Content[i+1], target, k); ok {
				return p, true
			}
		}
	}
	return "", false
}

// parseYAML parses a file holding exactly one YAML document into its root
// node. yaml.Unmarshal silently drops every document after the first, so
// a stray `---` would hide the rest of a workload; it is rejected instead.
func parseYAML(file string, data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &fault.Error{Code: CodeWorkload, File: file, Line: 1, Column: 1, Message: "the file is empty"}
		}
		return nil, locateIndentation(file, data, yamlSyntaxError(file, 0, err))
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, &fault.Error{Code: CodeWorkload, File: file, Line: 1, Column: 1, Message: "the file is empty"}
	}
	if err := (&decoder{file: file}).bound(&doc); err != nil {
		return nil, err
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, yamlSyntaxError(file, 0, err)
	default:
		at := &next
		if len(next.Content) > 0 {
			at = next.Content[0]
		}
		d := &decoder{file: file}
		return nil, d.fail(at, "", "the file holds more than one YAML document (a `---` line starts another); a workload is one document")
	}
	return resolve(doc.Content[0]), nil
}

// yamlSyntaxError turns a yaml.v3 syntax error ("yaml: line 3: ...") into a
// positioned Error.
func yamlSyntaxError(file string, lineOffset int, err error) *fault.Error {
	msg := err.Error()
	line := 0
	rest := strings.TrimPrefix(msg, "yaml: ")
	if strings.HasPrefix(rest, "line ") {
		tail := rest[len("line "):]
		if i := strings.Index(tail, ":"); i > 0 {
			if n, convErr := strconv.Atoi(tail[:i]); convErr == nil {
				line = n
				rest = strings.TrimSpace(tail[i+1:])
			}
		}
	}
	e := &fault.Error{Code: CodeWorkload, File: file, Message: "not valid YAML: " + rest}
	if line > 0 {
		e.Line, e.Column = line+lineOffset, 1
	}
	return e
}

// field is one key of a mapping with its key node (for "unknown key"
// positions) and value node.
type field struct {
	key   *yaml.Node
	value *yaml.Node
}

// mapping checks that n is a mapping whose keys are all in allowed (a nil
// allowed accepts any key) and none repeats, and that every required key is
// present. It returns the fields and the keys in written order.
func (d *decoder) mapping(n *yaml.Node, path string, allowed, required []string) (map[string]field, []string, error) {
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, nil, d.fail(n, path, "must be a mapping (key: value lines), not %s", describeNode(n))
	}
	if err := d.plainTag(n, path, "!!map"); err != nil {
		return nil, nil, err
	}
	out := make(map[string]field, len(n.Content)/2)
	order := make([]string, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, nil, d.fail(k, path, "keys must be plain strings")
		}
		key := k.Value
		if k.Tag == "!!merge" {
			return nil, nil, d.fail(k, path, "merge keys (<<) are not supported in workloads; write the keys out")
		}
		if allowed != nil && !slices.Contains(allowed, key) {
			return nil, nil, d.fail(k, join(path, key), "unknown key %q%s (allowed here: %s)", key, suggest.DidYouMean(key, allowed), strings.Join(allowed, ", "))
		}
		if _, dup := out[key]; dup {
			return nil, nil, d.fail(k, join(path, key), "key %q appears twice", key)
		}
		out[key] = field{k, resolve(v)}
		order = append(order, key)
	}
	for _, r := range required {
		if _, ok := out[r]; !ok {
			return nil, nil, d.fail(n, path, "missing required key %q", r)
		}
	}
	return out, order, nil
}

// entries is mapping for a block of named entries (systems, cases,
// backends: any key) that must name at least one; empty is the message
// when it names none.
func (d *decoder) entries(n *yaml.Node, path, empty string) (map[string]field, []string, error) {
	f, order, err := d.mapping(n, path, nil, nil)
	if err != nil {
		return nil, nil, err
	}
	if len(order) == 0 {
		return nil, nil, d.fail(n, path, "%s", empty)
	}
	return f, order, nil
}

func describeNode(n *yaml.Node) string {
	n = resolve(n)
	if n == nil {
		return "nothing"
	}
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "null"
		case "!!bool":
			return "a boolean (" + n.Value + ")"
		case "!!int", "!!float":
			return "a number (" + n.Value + ")"
		default:
			return fmt.Sprintf("the string %q", n.Value)
		}
	}
	return "an unsupported node"
}

func (d *decoder) str(n *yaml.Node, path string) (string, error) {
	n = resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		return "", d.fail(n, path, "must be a string, not %s", describeNode(n))
	}
	if !utf8.ValidString(n.Value) {
		return "", d.fail(n, path, "is not valid UTF-8")
	}
	return n.Value, nil
}

func (d *decoder) nonEmpty(n *yaml.Node, path string) (string, error) {
	s, err := d.str(n, path)
	if err == nil && s == "" {
		err = d.fail(n, path, "must not be empty")
	}
	return s, err
}

func (d *decoder) integer(n *yaml.Node, path string, min, max int) (int, error) {
	n = resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		return 0, d.fail(n, path, "must be an integer, not %s", describeNode(n))
	}
	var v int
	if err := n.Decode(&v); err != nil || v < min || v > max {
		return 0, d.fail(n, path, "must be an integer from %d to %d", min, max)
	}
	return v, nil
}

func (d *decoder) number(n *yaml.Node, path string) (float64, error) {
	n = resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
		return 0, d.fail(n, path, "must be a number, not %s", describeNode(n))
	}
	var f float64
	if err := n.Decode(&f); err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, d.fail(n, path, "must be a finite number")
	}
	return f, nil
}

func (d *decoder) boolean(n *yaml.Node, path string) (bool, error) {
	n = resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		return false, d.fail(n, path, "must be true or false, not %s", describeNode(n))
	}
	var b bool
	err := n.Decode(&b)
	return b, err
}

func (d *decoder) seq(n *yaml.Node, path string) ([]*yaml.Node, error) {
	n = resolve(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil, d.fail(n, path, "must be a list, not %s", describeNode(n))
	}
	if err := d.plainTag(n, path, "!!seq"); err != nil {
		return nil, err
	}
	return n.Content, nil
}

// plainTag rejects an explicit tag on a mapping or list: a workload gives
// no meaning to custom tags, and a `!queue` written anywhere but on a
// response would otherwise read as a plain list.
func (d *decoder) plainTag(n *yaml.Node, path, want string) error {
	if n.Tag == want {
		return nil
	}
	if n.Tag == QueueTag || n.Tag == RepeatsTag {
		return d.fail(n, path, "tag %s only marks a response, under cases[].responses.<executor>.<cell>", n.Tag)
	}
	return d.fail(n, path, "tag %s is not supported here; remove it", n.Tag)
}

// maxSafe keeps integers exact in a JSON number.
const maxSafe = 1<<53 - 1

// json converts a node into a plain JSON value (nil, bool, float64, string,
// []any, map[string]any). Custom tags, binary data and non-finite numbers
// are rejected: a workload value must be something canonical JSON holds.
func (d *decoder) json(n *yaml.Node, path string, depth int) (any, error) {
	n = resolve(n)
	if depth > 64 {
		return nil, d.fail(n, path, "is nested more than 64 levels deep")
	}
	if n == nil {
		return nil, nil
	}
	if d.values++; d.values > maxValues {
		return nil, d.fail(n, path, "aliases expand to more than %d values; write the values out or use fewer nested aliases", maxValues)
	}
	switch n.Kind {
	case yaml.MappingNode:
		// mapping's checks in mapping's order (every key before any
		// value), with the value map itself finding repeated keys: a
		// workload's values are most of its mappings, and 20,000 cases'
		// args and answers need no field map and key list apiece.
		if err := d.plainTag(n, path, "!!map"); err != nil {
			return nil, err
		}
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := resolve(n.Content[i])
			if k.Kind != yaml.ScalarNode {
				return nil, d.fail(k, path, "keys must be plain strings")
			}
			if k.Tag == "!!merge" {
				return nil, d.fail(k, path, "merge keys (<<) are not supported in workloads; write the keys out")
			}
			if _, dup := out[k.Value]; dup {
				return nil, d.fail(k, join(path, k.Value), "key %q appears twice", k.Value)
			}
			out[k.Value] = nil
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := resolve(n.Content[i])
			if !utf8.ValidString(k.Value) {
				return nil, d.fail(k, path, "key is not valid UTF-8")
			}
			v, err := d.json(n.Content[i+1], join(path, k.Value), depth+1)
			if err != nil {
				return nil, err
			}
			out[k.Value] = v
		}
		return out, nil
	case yaml.SequenceNode:
		if err := d.plainTag(n, path, "!!seq"); err != nil {
			return nil, err
		}
		out := make([]any, 0, len(n.Content))
		for i, c := range n.Content {
			v, err := d.json(c, index(path, i), depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return nil, nil
		case "!!bool":
			return d.boolean(n, path)
		case "!!int":
			var i int64
			if err := n.Decode(&i); err != nil || i > maxSafe || i < -maxSafe {
				return nil, d.fail(n, path, "integer %s does not fit a JSON number exactly", n.Value)
			}
			return float64(i), nil
		case "!!float":
			return d.number(n, path)
		case "!!str", "!!timestamp":
			if !utf8.ValidString(n.Value) {
				return nil, d.fail(n, path, "is not valid UTF-8")
			}
			if overflowingNumber(n) {
				return nil, d.fail(n, path, "number %s is outside the range of a JSON number (float64); quote it to keep it as a string", n.Value)
			}
			return n.Value, nil
		}
		if n.Tag == QueueTag || n.Tag == RepeatsTag {
			return nil, d.plainTag(n, path, "")
		}
		return nil, d.fail(n, path, "tag %s is not supported in a JSON value", n.Tag)
	}
	return nil, d.fail(n, path, "is not a JSON value")
}

// overflowingNumber reports whether n is a plain scalar written as a
// number too large for a float64. yaml.v3 resolves such a scalar (1e400)
// to the string it spells, where a JSON reader would fail or read
// infinity: either way not the value the author wrote, so it is refused
// rather than silently turned into text.
func overflowingNumber(n *yaml.Node) bool {
	if n.Style != 0 || n.Tag != "!!str" {
		return false
	}
	_, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
	return errors.Is(err, strconv.ErrRange)
}

// object converts a node that must be a mapping into a JSON object.
func (d *decoder) object(n *yaml.Node, path string) (map[string]any, error) {
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, d.fail(n, path, "must be a mapping, not %s", describeNode(n))
	}
	v, err := d.json(n, path, 0)
	if err != nil {
		return nil, err
	}
	return v.(map[string]any), nil
}
