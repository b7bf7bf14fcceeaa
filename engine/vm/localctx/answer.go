package localctx

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

// answer is what a query found: an inspection, a reading, a slice of text
// or a search result.
type answer interface {
	// value is the answer as the tool's output carries it under "result".
	value() any
}

// contextOps are the local context tool's operations by name.
var contextOps = map[string]func(snap *Snapshot, q *query) (answer, *fault.Error){
	"inspect": inspectContext,
	"read":    readContextEntry,
	"slice":   sliceContextEntry,
	"search":  searchContext,
}

// Query answers one agent.context.local.v1 query (inspect, read, slice or
// search) over the snapshot, with upstream's shapes, bounds, messages and
// codes: PARSE_FAILED for a malformed query, BUDGET_EXHAUSTED for a bound,
// CAPABILITY_DENIED for an entry outside the snapshot. inputs are the tool
// call's inputs ({"query": ...}); the caller charges QueryCost.
func (snap *Snapshot) Query(inputs map[string]any) (any, *fault.Error) {
	if f := closedKeys(utf16Order(inputs), "context tool inputs", "query"); f != nil {
		return nil, f
	}
	if f := queryBounds(inputs["query"]); f != nil {
		return nil, f
	}
	q, f := parseQuery(inputs["query"])
	if f != nil {
		return nil, f
	}
	op, known := contextOps[q.op]
	if !known {
		return nil, ctxInvalid("context operation must be inspect, read, slice, or search")
	}
	result, f := op(snap, q)
	if f != nil {
		return nil, f
	}
	out := object(member{"result", result.value()})
	if b, _ := canon.Encode(out); len(b) > localMaxOutput {
		return nil, ctxLimit("context result exceeds tool JSON limit; request a smaller slice")
	}
	return out, nil
}

// entry returns snapshot entry i, or CAPABILITY_DENIED outside it.
func (snap *Snapshot) entry(i int) (contextEntry, *fault.Error) {
	if i >= len(snap.entries) {
		return contextEntry{}, ctxDenied()
	}
	return snap.entries[i], nil
}

// inspection is an inspect answer: one page of the snapshot's entries.
type inspection struct {
	snapshot string // the snapshot's digest
	entries  []listing
	offset   int
	total    int
	next     int // offset of the next page; 0: this is the last
}

// listing is snapshot entry index as an inspection lists it.
type listing struct {
	index int
	entry contextEntry
}

func (in inspection) value() any {
	entries := make([]any, len(in.entries))
	for i, l := range in.entries {
		entries[i] = l.value()
	}
	var next any
	if in.next > 0 {
		next = float64(in.next)
	}
	return object(member{"snapshot", in.snapshot}, member{"entries", entries}, member{"offset", float64(in.offset)},
		member{"totalEntries", float64(in.total)}, member{"nextOffset", next})
}

func (l listing) value() any {
	e := l.entry
	return object(member{"index", float64(l.index)}, member{"digest", e.digest}, member{"kind", e.kind},
		member{"label", e.label}, member{"bytes", float64(len(e.text))})
}

func inspectContext(snap *Snapshot, q *query) (answer, *fault.Error) {
	if f := q.closed("context inspect", "op", "offset", "limit"); f != nil {
		return nil, f
	}
	offset, f := q.offset.optionalInteger("context offset", 0, 0, 1024)
	if f != nil {
		return nil, f
	}
	limit, f := q.limit.optionalInteger("context limit", 16, 1, 64)
	if f != nil {
		return nil, f
	}
	in := inspection{snapshot: snap.digest, entries: []listing{}, offset: offset, total: len(snap.entries)}
	for i := offset; i < len(snap.entries) && i < offset+limit; i++ {
		in.entries = append(in.entries, listing{index: i, entry: snap.entries[i]})
	}
	if offset+limit < len(snap.entries) {
		in.next = offset + limit
	}
	return in, nil
}

// reading is a read answer: one entry whole.
type reading struct{ entry contextEntry }

func (r reading) value() any {
	return object(member{"kind", r.entry.kind}, member{"label", r.entry.label}, member{"text", r.entry.text})
}

func readContextEntry(snap *Snapshot, q *query) (answer, *fault.Error) {
	if f := q.closed("context read", "op", "index"); f != nil {
		return nil, f
	}
	i, f := q.index.integer("context index", 0, localMaxIndex)
	if f != nil {
		return nil, f
	}
	e, f := snap.entry(i)
	if f != nil {
		return nil, f
	}
	if len(e.text) > localReadBytes {
		return nil, ctxLimit("context read exceeds byte limit; use slice")
	}
	return reading{entry: e}, nil
}

// textSlice is a slice answer: the bytes of one entry's text between two
// character boundaries.
type textSlice string

func (t textSlice) value() any { return string(t) }

func sliceContextEntry(snap *Snapshot, q *query) (answer, *fault.Error) {
	if f := q.closed("context slice", "op", "index", "startByte", "endByte"); f != nil {
		return nil, f
	}
	i, f := q.index.integer("context index", 0, localMaxIndex)
	if f != nil {
		return nil, f
	}
	start, f := q.startByte.integer("context startByte", 0, 1_048_576)
	if f != nil {
		return nil, f
	}
	end, f := q.endByte.integer("context endByte", 0, 1_048_576)
	if f != nil {
		return nil, f
	}
	e, f := snap.entry(i)
	if f != nil {
		return nil, f
	}
	return sliceText(e.text, start, end)
}

// sliceText is text[start:end] within the slice bounds, on UTF-8
// boundaries.
func sliceText(text string, start, end int) (answer, *fault.Error) {
	if _, f := integerIn(float64(start), "slice start", 0, len(text)); f != nil {
		return nil, f
	}
	if _, f := integerIn(float64(end), "slice end", start, len(text)); f != nil {
		return nil, f
	}
	if end-start > localReadBytes {
		return nil, ctxLimit("context slice exceeds byte limit")
	}
	if !boundary(text, start) || !boundary(text, end) {
		return nil, ctxInvalid("context slice must use UTF-8 boundaries")
	}
	return textSlice(text[start:end]), nil
}

func searchContext(snap *Snapshot, q *query) (answer, *fault.Error) {
	if f := q.closed("context search", "op", "query", "maxResults", "maxScanBytes"); f != nil {
		return nil, f
	}
	text, ok := q.text.value.(string)
	if !ok || len(utf16.Encode([]rune(text))) > 1024 {
		return nil, ctxInvalid("context search query must be a string of at most 1024 characters")
	}
	if text == "" {
		return nil, ctxInvalid("context search query must not be empty")
	}
	limit, f := q.searchLimit()
	if f != nil {
		return nil, f
	}
	scan := localScanBytes
	if q.maxScanBytes.present {
		if scan, f = q.maxScanBytes.integer("context maxScanBytes", 1, localScanBytes); f != nil {
			return nil, f
		}
	}
	if len(text) > 4096 {
		return nil, ctxInvalid("context search query byte bound")
	}
	return search(snap, text, limit, scan), nil
}

// searchLimit reads a search's maxResults: within the query bound 128 and
// the result bound 16, checked in that order.
func (q *query) searchLimit() (int, *fault.Error) {
	if !q.maxResults.present {
		return localSearchMatches, nil
	}
	limit, f := q.maxResults.integer("context maxResults", 1, 128)
	if f != nil {
		return 0, f
	}
	if _, f := q.maxResults.integer("result limit", 1, localSearchMatches); f != nil {
		return 0, f
	}
	return limit, nil
}

// boundary reports whether byte offset i of s starts a character (or is
// its end).
func boundary(s string, i int) bool { return i == len(s) || utf8.RuneStart(s[i]) }

// searchResult is a search answer: the matches found, the bytes scanned
// and whether the scan reached the end.
type searchResult struct {
	matches  []match
	scanned  int
	complete bool
}

// match is one literal match: entry index, bytes [start, end) of its
// text.
type match struct{ index, start, end int }

func (r searchResult) value() any {
	matches := make([]any, len(r.matches))
	for i, m := range r.matches {
		matches[i] = m.value()
	}
	return object(member{"matches", matches}, member{"scannedBytes", float64(r.scanned)}, member{"complete", r.complete})
}

func (m match) value() any {
	return object(member{"index", float64(m.index)}, member{"startByte", float64(m.start)}, member{"endByte", float64(m.end)})
}

// search scans entries in order for non-overlapping literal matches: an
// entry that no longer fits the scan budget ends the scan, incomplete, and
// so does reaching the match limit.
func search(snap *Snapshot, text string, limit, scan int) searchResult {
	var r searchResult
	for i, e := range snap.entries {
		if len(e.text) > scan-r.scanned {
			return r
		}
		r.scanned += len(e.text)
		for off := 0; ; {
			k := strings.Index(e.text[off:], text)
			if k < 0 {
				break
			}
			start := off + k
			r.matches = append(r.matches, match{index: i, start: start, end: start + len(text)})
			if len(r.matches) >= limit {
				return r
			}
			off = start + len(text)
		}
	}
	r.complete = true
	return r
}
