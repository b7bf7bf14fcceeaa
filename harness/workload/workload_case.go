package workload

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/algal-assay/assay/engine/canon"
)

// A bench workload may hold 20,000 cases (parts.go), and the harness keeps
// its run's peak memory flat in the number of cases (issue 19). Decoded into
// maps, one small case (an args object, an expectation, two executors'
// responses) takes about 2.5 KB of heap; its canonical JSON takes about
// 200 bytes. So a case keeps its data packed, as the canonical JSON of its
// responses, args and expectation back to back in one allocation, and
// decodes it where a config or scripted table is compiled, a part (at most
// 256 cases) at a time. Packing is lossless: configs and tables are
// canonical encodings of the decoded values, so they come out byte for
// byte as they would from the values as parsed.

// caseData is a case's packed data and where its parts were written.
type caseData struct {
	// b holds the responses (executor -> cell -> values; empty when the
	// case declares none), the args and the expectation, in that order.
	b []byte
	// respEnd and argsEnd are where the responses and the args end in b.
	respEnd, argsEnd uint32
	// Where args:, expect: and responses: were written (their file is the
	// case's), for the engine's rejections of cases[<id>].args and the like.
	argsAt, expectAt, respAt lineCol
}

// lineCol is a position in the case's own file.
type lineCol struct{ line, col int32 }

func toLineCol(p Pos) lineCol {
	clamp := func(n int) int32 { return int32(min(n, math.MaxInt32)) }
	return lineCol{clamp(p.Line), clamp(p.Column)}
}

func (c *Case) at(lc lineCol) Pos {
	return Pos{File: c.Pos.File, Line: int(lc.line), Column: int(lc.col)}
}

// pack stores the case's args, expectation and responses (repeat 1's
// values for cells tagged !repeats). The responses are framed entries,
// executor and cell sorted, each value encoded on its own (a value may
// be nested as deeply as any response may, and decodes as written):
//
//	uvarint len, executor, uvarint len, cell, uvarint count,
//	then count times: uvarint len, canonical JSON
func (c *Case) pack(args, expect map[string]any, responses map[string]map[string][]any) error {
	var b []byte
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	var enc []byte // one value's encoding, its buffer reused
	for _, ex := range slices.Sorted(maps.Keys(responses)) {
		cells := responses[ex]
		for _, cell := range slices.Sorted(maps.Keys(cells)) {
			str(ex)
			str(cell)
			b = binary.AppendUvarint(b, uint64(len(cells[cell])))
			for _, v := range cells[cell] {
				var err error
				if enc, err = canon.AppendEncode(enc[:0], v); err != nil {
					return err
				}
				b = binary.AppendUvarint(b, uint64(len(enc)))
				b = append(b, enc...)
			}
		}
	}
	respEnd := len(b)
	var err error
	if b, err = canon.AppendEncode(b, args); err != nil {
		return err
	}
	argsEnd := len(b)
	if b, err = canon.AppendEncode(b, expect); err != nil {
		return err
	}
	if len(b) > math.MaxUint32 {
		return fmt.Errorf("case %s is %d bytes packed", c.ID, len(b))
	}
	// One exact allocation: appending leaves slack.
	c.data.b = append(make([]byte, 0, len(b)), b...)
	c.data.respEnd, c.data.argsEnd = uint32(respEnd), uint32(argsEnd)
	return nil
}

// unpack decodes one packed JSON value, which pack encoded itself.
func (c *Case) unpack(b []byte, what string) any {
	v, err := canon.Parse(b, 0)
	if err != nil {
		panic(fmt.Sprintf("harness: case %s: packed %s do not decode: %v", c.ID, what, err))
	}
	return v
}

// Args are the case's args (a fresh value on every call).
func (c *Case) Args() map[string]any {
	if c.data.argsEnd == c.data.respEnd {
		return nil // released (withoutArgs)
	}
	return c.unpack(c.data.b[c.data.respEnd:c.data.argsEnd], "args").(map[string]any)
}

// packedArgs are the canonical bytes of the case's args and expectation,
// false once they are released (withoutArgs).
func (c *Case) packedArgs() (args, expect []byte, ok bool) {
	if c.data.argsEnd == c.data.respEnd {
		return nil, nil, false
	}
	return c.data.b[c.data.respEnd:c.data.argsEnd], c.data.b[c.data.argsEnd:], true
}

// Expect is the case's expected outputs (a fresh value on every call).
func (c *Case) Expect() map[string]any {
	if len(c.data.b) == int(c.data.argsEnd) {
		return nil // released (withoutArgs)
	}
	return c.unpack(c.data.b[c.data.argsEnd:], "expectations").(map[string]any)
}

// Responses are the scripted responses the case declares: executor ->
// cell -> the values served to that cell's calls in this case, in call
// order (repeat 1's for a cell tagged !repeats; see PerRepeat). Nil when
// the case declares none; a fresh value on every call.
func (c *Case) Responses() map[string]map[string][]any {
	var out map[string]map[string][]any
	c.eachResponse(func(exb, cell []byte, vals [][]byte) {
		if out == nil {
			out = map[string]map[string][]any{}
		}
		ex := string(exb)
		if out[ex] == nil {
			out[ex] = map[string][]any{}
		}
		dec := make([]any, len(vals))
		for i, v := range vals {
			dec[i] = c.unpack(v, "responses")
		}
		out[ex][string(cell)] = dec
	})
	return out
}

// eachResponse calls f for each executor and cell the case declares
// responses for, executor then cell sorted, with the canonical JSON of
// each value in call order, without decoding them. f must not keep ex,
// cell or the vals slice (reused from call to call); the values' bytes
// are the case's own and may be kept.
func (c *Case) eachResponse(f func(ex, cell []byte, vals [][]byte)) {
	b := c.data.b[:c.data.respEnd]
	next := func() []byte {
		n, k := binary.Uvarint(b)
		out := b[k : k+int(n)]
		b = b[k+int(n):]
		return out
	}
	var vals [][]byte
	for len(b) > 0 {
		ex, cell := next(), next()
		n, k := binary.Uvarint(b)
		b = b[k:]
		vals = vals[:0]
		for range n {
			vals = append(vals, next())
		}
		f(ex, cell, vals)
	}
}

// eachExecutorResponse is eachResponse for executor ex's cells: what
// compiles a scripted table from a part's cases without decoding them.
func (c *Case) eachExecutorResponse(ex string, f func(cell []byte, vals [][]byte)) {
	c.eachResponse(func(e, cell []byte, vals [][]byte) {
		if string(e) == ex {
			f(cell, vals)
		}
	})
}

// responseCounts calls f for each executor and cell the case declares
// responses for, with how many values it declares (repeat 1's for cells
// tagged !repeats), without decoding them.
func (c *Case) responseCounts(f func(ex, cell string, n int)) {
	c.eachResponse(func(ex, cell []byte, vals [][]byte) { f(string(ex), string(cell), len(vals)) })
}

// withoutArgs is the case keeping only its responses (their counts are
// what a run's alignment check reads once the parts' configs are written).
func (c Case) WithoutArgs() Case {
	c.PerRepeat = nil
	c.data.b = append([]byte(nil), c.data.b[:c.data.respEnd]...)
	c.data.argsEnd = c.data.respEnd
	if c.data.respEnd == 0 {
		c.data.b = nil
	}
	return c
}

// casePosition is where the case part an engine field names was written:
// cases[<id>], cases[<id>].args, cases[<id>].expect (the engine names
// cases by id in these rejections).
func (w *Workload) casePosition(field string) (Pos, bool) {
	rest, ok := strings.CutPrefix(field, "cases[")
	if !ok {
		return Pos{}, false
	}
	id, sub, ok := strings.Cut(rest, "]")
	if !ok {
		return Pos{}, false
	}
	for i := range w.Cases {
		c := &w.Cases[i]
		if c.ID != id {
			continue
		}
		switch sub {
		case "":
			return c.Pos, true
		case ".args":
			return c.at(c.data.argsAt), true
		case ".expect":
			return c.at(c.data.expectAt), true
		}
		return Pos{}, false
	}
	return Pos{}, false
}
