package manifest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/fault"
)

// leafSource is a small embeddable manifest; pad adds a const payload of
// that many bytes so the byte budget can be reached with few instances.
func leafSource(key string, pad int) string {
	padCell := ""
	if pad > 0 {
		padCell = fmt.Sprintf(`,{"id":"pad","kind":"const","outputs":{"v":{"type":"text","value":"%s"}}}`, strings.Repeat("p", pad))
	}
	return fmt.Sprintf(`{"contract":"algal.organism.v1","key":"organism:%s","name":"L",
	 "cells":[{"id":"in","kind":"input","outputs":{"q":"text"}}%s],
	 "interface":{"inputs":{"q":{"cell":"in","port":"q"}},"outputs":{"a":{"cell":"in","port":"q"}}}}`, key, padCell)
}

// wrapSource embeds child n times (organism cells) behind an interface.
func wrapSource(key, child string, n int) string {
	cells := []string{`{"id":"in","kind":"input","outputs":{"q":"text"}}`}
	for i := 0; i < n; i++ {
		cells = append(cells, fmt.Sprintf(`{"id":"o%d","kind":"organism","manifest":"%s"}`, i, child))
	}
	return fmt.Sprintf(`{"contract":"algal.organism.v1","key":"organism:%s","name":"W","cells":[%s],
	 "interface":{"inputs":{"q":{"cell":"in","port":"q"}},"outputs":{"a":{"cell":"in","port":"q"}}}}`, key, strings.Join(cells, ","))
}

func add(t testing.TB, r MapResolver, src string) *Manifest {
	t.Helper()
	m, err := r.Add(mustParse(t, src).Value)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// binaryDAG builds levels manifests, each embedding the previous twice:
// the root expands to 2^(levels+1)-1 instances from levels+1 documents.
func binaryDAG(t testing.TB, levels int) (*Manifest, MapResolver) {
	r := MapResolver{}
	m := add(t, r, leafSource("leaf", 0))
	for i := 1; i <= levels; i++ {
		m = add(t, r, wrapSource(fmt.Sprintf("level-%d", i), m.Digest, 2))
	}
	return m, r
}

func wantCode(t *testing.T, err error, code, contains string) {
	t.Helper()
	e, ok := err.(*fault.Error)
	if !ok || e.Code != code || !strings.Contains(e.Message, contains) {
		t.Fatalf("got %v, want %s containing %q", err, code, contains)
	}
}

func TestCompileInstanceBudget(t *testing.T) {
	t.Parallel()
	root, r := binaryDAG(t, 9) // 1023 instances
	c, err := Compile(root, Options{Resolver: r})
	if err != nil {
		t.Fatal(err)
	}
	if c.Stats.Instances != 1023 {
		t.Fatalf("instances %d, want 1023 (repeated digests count each time)", c.Stats.Instances)
	}
	root, r = binaryDAG(t, 10) // 2047 instances
	_, err = Compile(root, Options{Resolver: r})
	wantCode(t, err, fault.BudgetExhausted, "count budget")
}

func TestCompileCellAndEdgeBudgets(t *testing.T) {
	t.Parallel()
	// 64 cells per instance: 63 children of 64 cells plus a 64-cell
	// parent is 4096 cells exactly; one more child cell is over.
	r := MapResolver{}
	var fat []string
	for i := 0; i < 64; i++ {
		fat = append(fat, fmt.Sprintf(`{"id":"s%d","kind":"store"}`, i))
	}
	fat[0] = `{"id":"in","kind":"input","outputs":{"q":"text"}}`
	fatSrc := `{"contract":"algal.organism.v1","key":"organism:fat","name":"F","cells":[` + strings.Join(fat, ",") +
		`],"interface":{"inputs":{"q":{"cell":"in","port":"q"}},"outputs":{"a":{"cell":"in","port":"q"}}}}`
	child := add(t, r, fatSrc)
	root := add(t, r, wrapSource("cells-ok", child.Digest, 63))
	c, err := Compile(root, Options{Resolver: r})
	if err != nil {
		t.Fatal(err)
	}
	if c.Stats.Cells != 4096 {
		t.Fatalf("cells %d", c.Stats.Cells)
	}
	// Replacing one child by a wrapper around it adds 2 cells: 4098.
	mid := add(t, r, wrapSource("cells-mid", child.Digest, 1))
	src := strings.Replace(wrapSource("cells-over2", child.Digest, 63), `"id":"o0","kind":"organism","manifest":"`+child.Digest, `"id":"o0","kind":"organism","manifest":"`+mid.Digest, 1)
	_, err = Compile(add(t, r, src), Options{Resolver: r})
	wantCode(t, err, fault.BudgetExhausted, "count budget")

	// Edges: a leaf with 256 edges into a many port; 64 of them is 16384.
	edges := make([]string, 256)
	for i := range edges {
		edges[i] = `{"from":{"cell":"in","port":"q"},"to":{"cell":"j","port":"items"}}`
	}
	wide := add(t, r, `{"contract":"algal.organism.v1","key":"organism:wide","name":"W",
	 "cells":[{"id":"in","kind":"input","outputs":{"q":"text"}},{"id":"j","kind":"fn","fn":"join.v1"}],
	 "edges":[`+strings.Join(edges, ",")+`],
	 "interface":{"inputs":{"q":{"cell":"in","port":"q"}},"outputs":{"a":{"cell":"j","port":"value"}}}}`)
	sixtyFour := add(t, r, wrapSource("edges-64", wide.Digest, 63))
	c, err = Compile(sixtyFour, Options{Resolver: r})
	if err != nil {
		t.Fatal(err)
	}
	if c.Stats.Edges != 63*256 {
		t.Fatalf("edges %d", c.Stats.Edges)
	}
	_, err = Compile(add(t, r, wrapSource("edges-over", sixtyFour.Digest, 2)), Options{Resolver: r})
	wantCode(t, err, fault.BudgetExhausted, "count budget")
}

func TestCompileByteBudget(t *testing.T) {
	t.Parallel()
	r := MapResolver{}
	big := add(t, r, leafSource("big", 1_000_000))
	mid := add(t, r, wrapSource("mid", big.Digest, 40)) // ~40 MB expanded
	root := add(t, r, wrapSource("root", mid.Digest, 1))
	if _, err := Compile(root, Options{Resolver: r}); err != nil {
		t.Fatal(err)
	}
	root = add(t, r, wrapSource("root2", mid.Digest, 2)) // ~80 MB expanded
	_, err := Compile(root, Options{Resolver: r})
	wantCode(t, err, fault.BudgetExhausted, "byte budget")
}

func TestCompileDepth(t *testing.T) {
	t.Parallel()
	chain := func(n int) (*Manifest, MapResolver) {
		r := MapResolver{}
		m := add(t, r, leafSource("leaf", 0))
		for i := 1; i <= n; i++ {
			m = add(t, r, wrapSource(fmt.Sprintf("d%d", i), m.Digest, 1))
		}
		return m, r
	}
	root, r := chain(64) // leaf at depth 64
	if _, err := Compile(root, Options{Resolver: r}); err != nil {
		t.Fatal(err)
	}
	root, r = chain(65)
	_, err := Compile(root, Options{Resolver: r})
	wantCode(t, err, fault.DepthExceeded, "depth 65 exceeds 64")
}

// badResolver serves content that does not hash to the requested digest.
type badResolver struct{ v any }

func (b badResolver) ResolveManifest(string, string) (any, error) { return b.v, nil }

func TestCompileDigestMismatchAndMiss(t *testing.T) {
	t.Parallel()
	r := MapResolver{}
	leaf := add(t, r, leafSource("leaf", 0))
	other := mustParse(t, leafSource("other", 0))
	root := mustParse(t, wrapSource("root", leaf.Digest, 1))
	_, err := Compile(root, Options{Resolver: badResolver{other.Value}})
	wantCode(t, err, fault.DigestMismatch, `cells[1] "o0"`)
	_, err = Compile(root, Options{Resolver: MapResolver{}})
	wantCode(t, err, fault.StoreMiss, "not in the store")
	_, err = Compile(root, Options{})
	wantCode(t, err, fault.StoreMiss, "not in the store")
}

func TestToolRegistry(t *testing.T) {
	t.Parallel()
	src := `{"contract":"algal.organism.v1","key":"organism:t","name":"T",
	 "cells":[{"id":"in","kind":"input","outputs":{"h":{"type":"cap","capability":"mailbox-receive"}}},
	          {"id":"wait","kind":"tool","tool":"mailbox.receive.v1"},
	          {"id":"look","kind":"tool","tool":"ledger.charges.v1","budget":{"maxEffectMs":5}}],
	 "edges":[{"from":{"cell":"in","port":"h"},"to":{"cell":"wait","port":"mailbox"}},
	          {"from":{"cell":"wait","port":"id"},"to":{"cell":"look","port":"q"}}]}`
	m := mustParse(t, src)
	_, err := Compile(m, Options{})
	wantCode(t, err, fault.ToolUnknown, "ledger.charges.v1")
	sig, err := ParseSignature("ledger.charges.v1", mustParse(t, remoteInner).Value["budgets"])
	if err == nil {
		t.Fatalf("budgets object accepted as a signature: %+v", sig)
	}
	raw := map[string]any{"inputs": map[string]any{"q": "text"}, "outputs": map[string]any{"rows": "json"},
		"effect": "read", "cost": 7.0, "maxOutputBytes": 100.0}
	sig, err = ParseSignature("ledger.charges.v1", raw)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Compile(m, Options{Tools: map[string]Signature{"ledger.charges.v1": sig}})
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := c.Signature("look"); s.Cost != 7 || s.Effect != "read" {
		t.Fatalf("tool signature %+v", s)
	}
	if _, err := Compile(m, Options{Tools: map[string]Signature{"ledger.charges.v1": sig}, NoReservedTools: true}); err == nil {
		t.Fatal("reserved mailbox tool admitted with NoReservedTools")
	}
}
