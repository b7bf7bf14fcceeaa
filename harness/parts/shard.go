package parts

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/harness/workload"
)

// Shards split one batch of workloads across machines. Every loaded
// workload contributes its parts, in file order, to one sequence (a
// workload in one part contributes one); part g of the sequence (0-based)
// belongs to shard g mod n + 1. The split depends only on the workload
// files, so every machine computes the same one. A shard runs a workload
// all of whose parts it holds as any run (a complete run directory); of a
// workload whose parts it shares with other shards it writes only its
// parts, with their configs and tables, into <out>/<name>/<slug>/ (no
// record, no verdict: not a run directory). It writes ShardFile at the
// runs root listing the whole batch, so `assay ci merge` can check that
// every part of every workload came back exactly once.

// ShardFile is the shard manifest at a shard's runs root.
const (
	ShardFile     = "shard.json"
	ShardContract = "assay.shard.v1"
)

// Shard is shard I of N (1-based).
type Shard struct{ I, N int }

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.I, s.N) }

// ParseShard reads "i/n".
func ParseShard(text string) (Shard, error) {
	a, b, ok := strings.Cut(text, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return Shard{}, fmt.Errorf("--shard wants i/n with 1 <= i <= n (e.g. 2/4), got %q", text)
	}
	return Shard{I: i, N: n}, nil
}

// ShardWorkload is one workload of a sharded batch as a shard manifest
// lists it.
type ShardWorkload struct {
	Name, Path, Slug string
	Kind             workload.Kind
	// Parts is how many parts the workload has; Held lists this shard's
	// (1-based part numbers).
	Parts int
	Held  []int
}

// ShardManifest is shard.json.
type ShardManifest struct {
	Shard     Shard
	Workloads []ShardWorkload
}

// Value is shard.json's canonical value.
func (m *ShardManifest) Value() map[string]any {
	ws := make([]any, len(m.Workloads))
	for i, w := range m.Workloads {
		held := make([]any, len(w.Held))
		for j, h := range w.Held {
			held[j] = float64(h)
		}
		ws[i] = map[string]any{"name": w.Name, "path": filepath.ToSlash(w.Path), "slug": w.Slug, "kind": string(w.Kind), "parts": float64(w.Parts), "held": held}
	}
	return map[string]any{"contract": ShardContract, "shard": m.Shard.String(), "workloads": ws}
}

// ReadShardManifest reads a shard's runs root's shard.json.
func ReadShardManifest(root string) (*ShardManifest, error) {
	path := filepath.Join(root, ShardFile)
	v, err := canon.ReadFile(path, 0)
	if err != nil {
		return nil, err
	}
	bad := func(what string) error { return fmt.Errorf("%s: %s", path, what) }
	m, _ := v.(map[string]any)
	if m["contract"] != ShardContract {
		return nil, bad("contract is not " + ShardContract)
	}
	text, _ := m["shard"].(string)
	s, err := ParseShard(text)
	if err != nil {
		return nil, bad(err.Error())
	}
	out := &ShardManifest{Shard: s}
	list, _ := m["workloads"].([]any)
	for i, x := range list {
		e, _ := x.(map[string]any)
		w := ShardWorkload{}
		w.Name, _ = e["name"].(string)
		w.Path, _ = e["path"].(string)
		w.Slug, _ = e["slug"].(string)
		k, _ := e["kind"].(string)
		w.Kind = workload.Kind(k)
		n, _ := e["parts"].(float64)
		w.Parts = int(n)
		held, _ := e["held"].([]any)
		for _, h := range held {
			f, _ := h.(float64)
			w.Held = append(w.Held, int(f))
		}
		if w.Name == "" || w.Slug == "" || w.Parts < 1 || (w.Kind != workload.KindBench && w.Kind != workload.KindFoundry) {
			return nil, bad(fmt.Sprintf("workloads[%d] is not a workload entry", i))
		}
		out.Workloads = append(out.Workloads, w)
	}
	return out, nil
}

// Assign lists, per workload, the parts (1-based) shard s holds.
func Assign(ws []*workload.Workload, s Shard) [][]int {
	out := make([][]int, len(ws))
	g := 0
	for i, w := range ws {
		if w == nil {
			continue
		}
		n := len(w.Parts())
		if n == 0 {
			n = 1 // a foundry
		}
		for p := 1; p <= n; p++ {
			if g%s.N == s.I-1 {
				out[i] = append(out[i], p)
			}
			g++
		}
	}
	return out
}

// Reports supply part reports a run takes instead of running their parts
// (`assay ci merge`): for a file of a part (its report, its verification
// record), the file's bytes, or false when the source does not hold it.
type Reports func(file string) ([]byte, bool, error)
