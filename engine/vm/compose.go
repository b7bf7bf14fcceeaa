package vm

import (
	"slices"
	"strconv"
	"strings"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/receipt"
	"github.com/algal-assay/assay/engine/store"
)

// nested runs child under prefix and maps its result onto the enclosing
// cell: an inner unhandled failure becomes the cell's failure, an inner
// stuck run fails STUCK, an inner suspension suspends the cell.
func (s *scope) nested(child *manifest.Manifest, prefix string, feed map[string]ports, rec *receipt.Cell) (*scope, bool, *Failure) {
	depth := s.depth + 1
	if depth > s.r.budgets.MaxDepth {
		// The nested run itself fails, so the run failure (first wins)
		// names the nested prefix ("loop/r0", "map/i2"), not the cell.
		f := failf(fault.DepthExceeded, "depth %d exceeds maxDepth %d", depth, s.r.budgets.MaxDepth)
		s.r.fail(f, strings.TrimSuffix(prefix, "/"))
		return nil, false, f
	}
	sc := newScope(s.r, child, prefix, depth, feed)
	switch sc.run() {
	case receipt.Failed:
		f := s.r.failure
		if f == nil {
			return nil, false, failf(fault.Internal, "inner run at %q failed without a failure", prefix)
		}
		return nil, false, &Failure{Code: f.Code, Message: f.Message}
	case receipt.Suspended:
		rec.Status = receipt.StatusSuspended
		return nil, true, nil
	case receipt.Stuck:
		return nil, false, failf(fault.Stuck, "inner run stuck")
	}
	return sc, false, nil
}

// interfaceFeed maps interface input values onto the child's input cells.
func interfaceFeed(child *manifest.Manifest, vals ports) map[string]ports {
	feed := map[string]ports{}
	for _, ip := range child.Interface.Inputs {
		v, ok := vals[ip.Name]
		if !ok {
			continue
		}
		if feed[ip.Cell] == nil {
			feed[ip.Cell] = ports{}
		}
		feed[ip.Cell][ip.Port] = v
	}
	return feed
}

// interfaceOutputs reads the child's committed interface outputs.
func interfaceOutputs(sc *scope) ports {
	out := ports{}
	for _, ip := range sc.m.Interface.Outputs {
		j, ok := sc.m.CellIndex(ip.Cell)
		if !ok || sc.st[j].status != receipt.StatusCommitted {
			continue
		}
		if v, ok := sc.st[j].outputs[ip.Port]; ok {
			out[ip.Name] = v
		}
	}
	return out
}

func (s *scope) recordVia(p string, sig *cellSig, rec *receipt.Cell) {
	if s.r.host.recorded != nil {
		if rc := s.r.host.recorded[p]; rc != nil {
			rec.Via = rc.Via
		}
		return
	}
	if sig.via != "" {
		via := sig.via
		rec.Via = &via
	}
}

func (s *scope) organismCell(c *manifest.Cell, p string, sig *cellSig, in ports, rec *receipt.Cell) (ports, *Failure) {
	sc, susp, f := s.nested(sig.child, p+"/", interfaceFeed(sig.child, in), rec)
	if f != nil || susp {
		return nil, f
	}
	s.recordVia(p, sig, rec)
	return interfaceOutputs(sc), nil
}

func untilMet(u *manifest.Until, outs ports) bool {
	v, ok := outs[u.Output]
	if !ok {
		return false
	}
	if u.Field != "" {
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		fv, ok := m[u.Field]
		return ok && fv == u.Equals
	}
	a, _ := canon.Encode(v)
	b, _ := canon.Encode(u.Equals)
	return string(a) == string(b)
}

func (s *scope) repeatCell(c *manifest.Cell, p string, sig *cellSig, in ports, rec *receipt.Cell) (ports, *Failure) {
	e := c.Embed
	vals := in.clone()
	var outs ports
	rounds := 0
	for round := 0; round < e.MaxRounds; round++ {
		rounds++
		sc, susp, f := s.nested(sig.child, p+"/r"+strconv.Itoa(round)+"/", interfaceFeed(sig.child, vals), rec)
		if f != nil || susp {
			return nil, f
		}
		outs = interfaceOutputs(sc)
		if e.Until != nil && untilMet(e.Until, outs) {
			break
		}
		for _, cr := range e.Carry {
			if v, ok := outs[cr.Output]; ok {
				vals[cr.Input] = v
			}
		}
	}
	if rounds > 1 {
		rec.Rounds = rounds
	}
	s.recordVia(p, sig, rec)
	return outs, nil
}

func (s *scope) eachCell(c *manifest.Cell, p string, sig *cellSig, in ports, rec *receipt.Cell) (ports, *Failure) {
	e := c.Embed
	list, ok := in[e.Over].([]any)
	if !ok {
		return nil, failf(fault.TypeMismatch, "each over %s must deliver a list", e.Over)
	}
	if len(list) > e.MaxItems {
		return nil, failf(fault.BudgetExhausted, "each maxItems")
	}
	// Items are not type-checked here: the child's input cell checks its
	// value, so a mistyped item leaves the inner failed record and the run
	// failure names the inner path, as in the native runtime.
	outs := ports{}
	for _, op := range sig.outputs {
		outs[op.Name] = []any{}
	}
	for i, item := range list {
		vals := in.clone()
		vals[e.Over] = item
		sc, susp, f := s.nested(sig.child, p+"/i"+strconv.Itoa(i)+"/", interfaceFeed(sig.child, vals), rec)
		if f != nil || susp {
			return nil, f
		}
		for k, v := range interfaceOutputs(sc) {
			outs[k] = append(outs[k].([]any), v)
		}
	}
	if len(list) > 0 {
		rec.Items = len(list)
	}
	s.recordVia(p, sig, rec)
	return outs, nil
}

func (s *scope) spawnCell(c *manifest.Cell, p string, in ports, rec *receipt.Cell) (ports, *Failure) {
	child, err := manifest.ParseValue(in["manifest"])
	if err != nil {
		return nil, asFailure(err)
	}
	if err := s.r.admit(child); err != nil {
		return nil, asFailure(err)
	}
	vals, f := spawnArgs(in)
	if f != nil {
		return nil, f
	}
	feed, f := s.r.spawnFeed(child, vals)
	if f != nil {
		return nil, f
	}
	if _, err := s.r.host.Store.Put(store.Manifests, child.Value); err != nil {
		return nil, asFailure(err)
	}
	sc, susp, f := s.nested(child, p+"/", feed, rec)
	if f != nil || susp {
		return nil, f
	}
	data := ports{}
	if child.Interface != nil {
		data = interfaceOutputs(sc)
	}
	return ports{"data": data.object(), "digest": child.Digest}, nil
}

// spawnArgs reads a spawn cell's optional args: an object keyed by the
// child's interface inputs.
func spawnArgs(in ports) (ports, *Failure) {
	a, ok := in["args"]
	if !ok {
		return ports{}, nil
	}
	vals, ok := a.(map[string]any)
	if !ok {
		return nil, failf(fault.TypeMismatch, "spawn args must be an object keyed by interface inputs")
	}
	return vals, nil
}

// spawnFeed checks a spawned child's interface inputs (no capability
// port) and that the args name only them, and maps the args onto the
// child's input cells.
func (r *runner) spawnFeed(child *manifest.Manifest, vals ports) (map[string]ports, *Failure) {
	if child.Interface == nil {
		if len(vals) > 0 {
			return nil, failf(fault.InterfaceMismatch, "spawned manifest declares no interface")
		}
		return map[string]ports{}, nil
	}
	for _, ip := range child.Interface.Inputs {
		pt, f := r.interfacePort(child, ip, false)
		if f != nil {
			return nil, f
		}
		if pt.Type == manifest.TypeCap {
			return nil, failf(fault.TypeMismatch, "spawned interface input %s is a capability port", ip.Name)
		}
	}
	for _, k := range canon.SortedKeys(vals) {
		if !slices.ContainsFunc(child.Interface.Inputs, func(ip manifest.InterfacePort) bool { return ip.Name == k }) {
			return nil, failf(fault.InterfaceMismatch, "spawn args name %s, not an interface input", k)
		}
	}
	return interfaceFeed(child, vals), nil
}
