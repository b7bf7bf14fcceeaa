package workload

import (
	"encoding/binary"
	"strings"
)

// A run in parts compiles every part's config and tables from the loaded
// cases, then runs the parts from those files. What it still reads of the
// cases afterwards is how many there are, their ids (report.html names
// each part's first and last) and how many responses each declares per
// executor and cell (the alignment check, a part at a time). Release
// keeps only that: 8 bytes a case besides its id, the counts shared
// between cases that declare alike. Copies of the cases without their
// args kept about 230 bytes a case (issue 31: 4.6 MB at 8 x 20,000, twice
// that in peak RSS with the heap goal at twice the live heap).

// released is what Release keeps of a workload's cases.
type released struct {
	n int
	// ids are the cases' ids back to back; case i's ends at idEnd[i].
	ids   string
	idEnd []uint32
	// shape[i] indexes shapes: case i's declared counts. Most cases of a
	// workload declare the same executors and cells, so a few shapes
	// serve them all.
	shape  []uint32
	shapes [][]declaredCount
}

// declaredCount is how many responses a case declares for one cell of
// one executor.
type declaredCount struct {
	executor, cell string
	n              int
}

// Release is w keeping of its cases only their number, ids and declared
// response counts (repeat 1's), for a run in parts once every part's
// config and tables are written: NumCases, CaseID, Parts, InParts,
// RunCount and PartDeclared answer as they did, while w.Cases is nil, so
// nothing that compiles a config or table from the cases may be called on
// it. w itself is left as it was.
func (w *Workload) Release() *Workload {
	r := &released{n: w.NumCases(), idEnd: make([]uint32, 0, len(w.Cases)), shape: make([]uint32, 0, len(w.Cases))}
	var ids strings.Builder
	index := map[string]uint32{}
	var key []byte
	for i := range w.Cases {
		c := &w.Cases[i]
		ids.WriteString(c.ID)
		r.idEnd = append(r.idEnd, uint32(ids.Len()))
		key = key[:0]
		var counts []declaredCount
		c.eachResponse(func(ex, cell []byte, vals [][]byte) {
			key = binary.AppendUvarint(key, uint64(len(ex)))
			key = append(key, ex...)
			key = binary.AppendUvarint(key, uint64(len(cell)))
			key = append(key, cell...)
			key = binary.AppendUvarint(key, uint64(len(vals)))
			counts = append(counts, declaredCount{string(ex), string(cell), len(vals)})
		})
		s, ok := index[string(key)]
		if !ok {
			s = uint32(len(r.shapes))
			index[string(key)] = s
			r.shapes = append(r.shapes, counts)
		}
		r.shape = append(r.shape, s)
	}
	r.ids = ids.String()
	v := *w
	v.Cases, v.released = nil, r
	return &v
}

// NumCases is how many cases w has (also once released).
func (w *Workload) NumCases() int {
	if w.released != nil {
		return w.released.n
	}
	return len(w.Cases)
}

// CaseID is case i's id (also once released).
func (w *Workload) CaseID(i int) string {
	r := w.released
	if r == nil {
		return w.Cases[i].ID
	}
	from := uint32(0)
	if i > 0 {
		from = r.idEnd[i-1]
	}
	return r.ids[from:r.idEnd[i]]
}

// PartDeclared is DeclaredCalls of part p's cases in repeat 1 (also once
// released): case id -> executor -> cell -> responses declared.
func (w *Workload) PartDeclared(p Part) map[string]map[string]map[string]int {
	r := w.released
	if r == nil {
		return DeclaredCalls(w.PartView(p), 1)
	}
	out := map[string]map[string]map[string]int{}
	for i := p.CaseFrom; i < p.CaseTo; i++ {
		for _, d := range r.shapes[r.shape[i]] {
			id := w.CaseID(i)
			if out[id] == nil {
				out[id] = map[string]map[string]int{}
			}
			if out[id][d.executor] == nil {
				out[id][d.executor] = map[string]int{}
			}
			out[id][d.executor][d.cell] = d.n
		}
	}
	return out
}
