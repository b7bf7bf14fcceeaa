// Package yamlsize bounds what a YAML document stands for once its aliases
// are expanded. yaml.v3 keeps an alias as one node pointing at its anchor,
// so a 3 MB string aliased 20,000 times is a 3 MB file that becomes 60 GB
// the moment anything encodes the values it holds. Counting values cannot
// catch that (20,000 is few); counting bytes can. Every reader that turns
// YAML nodes into values runs Check on the parsed document first, before
// converting or encoding anything.
package yamlsize

import "gopkg.in/yaml.v3"

// Size is what a node stands for, in bytes: a scalar its value's length
// plus one, a collection one plus its content, an alias what its anchor
// stands for. A document without aliases stands for at most about twice
// its length (every scalar and key is written out; only an implicit null
// or an unbracketed collection costs a byte it did not write), so a bound
// of twice the file-size bound only ever trips on alias expansion.
//
// Check walks doc in document order and returns its size and, when that
// passes max, the first node at which the running total did (an alias, or
// the node whose own bytes tipped it); over is nil when the document fits.
// It visits every node once: an anchor's size is remembered, never
// recomputed per alias.
func Check(doc *yaml.Node, max int64) (size int64, over *yaml.Node) {
	w := &walker{max: max, memo: map[*yaml.Node]int64{}}
	w.visit(doc)
	return w.total, w.over
}

type walker struct {
	max   int64
	total int64
	over  *yaml.Node
	memo  map[*yaml.Node]int64
}

// visit adds n to the running total, stopping at the first node over max.
func (w *walker) visit(n *yaml.Node) {
	if n == nil || w.over != nil {
		return
	}
	if n.Kind == yaml.AliasNode {
		w.add(n, w.size(n.Alias, 0))
		return
	}
	w.add(n, int64(len(n.Value))+1)
	for _, c := range n.Content {
		w.visit(c)
	}
}

func (w *walker) add(n *yaml.Node, s int64) {
	if w.over != nil {
		return
	}
	w.total += s
	if w.total > w.max {
		w.over = n
	}
}

// size is n's expanded size, saturated just past max so nested aliases
// cannot overflow the arithmetic. depth stops a self-referencing alias (the
// parser refuses those, but a hand-built node tree might not).
func (w *walker) size(n *yaml.Node, depth int) int64 {
	if n == nil {
		return 0
	}
	if depth > 10000 {
		return w.max + 1
	}
	if n.Kind == yaml.AliasNode {
		return w.size(n.Alias, depth+1)
	}
	if s, ok := w.memo[n]; ok {
		return s
	}
	s := int64(len(n.Value)) + 1
	for _, c := range n.Content {
		if s > w.max {
			break
		}
		s += w.size(c, depth+1)
	}
	if s > w.max {
		s = w.max + 1
	}
	w.memo[n] = s
	return s
}
