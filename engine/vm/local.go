package vm

import (
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/expr"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/receipt"
	"github.com/algal-assay/assay/engine/store"
)

// activation is one cell kind's behaviour: it runs a cell's body. rec is
// the cell record being built: the body fills in its extra fields (effect
// digest, tool calls, shadowOut, rounds, items, via, slot: the kind's
// manifest.KindSpec.Record keys), and a body that suspends sets rec.Status
// to receipt.StatusSuspended.
type activation func(s *scope, c *manifest.Cell, p string, sig *cellSig, in ports, rec *receipt.Cell) (ports, *Failure)

// activations is the VM's half of the cell-kind table: what a cell of
// each kind (manifest.Kinds) does when it activates. It is filled in init
// because the bodies of embedding kinds activate cells themselves.
var activations map[manifest.Kind]activation

func init() {
	agentLike := func(s *scope, c *manifest.Cell, p string, _ *cellSig, in ports, rec *receipt.Cell) (ports, *Failure) {
		return s.agentCell(c, p, in, rec)
	}
	activations = map[manifest.Kind]activation{
		manifest.KindInput: func(s *scope, c *manifest.Cell, _ string, _ *cellSig, _ ports, _ *receipt.Cell) (ports, *Failure) {
			return s.inputCell(c)
		},
		manifest.KindConst: func(s *scope, c *manifest.Cell, _ string, _ *cellSig, _ ports, _ *receipt.Cell) (ports, *Failure) {
			return s.constCell(c)
		},
		manifest.KindFn: func(s *scope, c *manifest.Cell, _ string, _ *cellSig, in ports, _ *receipt.Cell) (ports, *Failure) {
			return s.fnCell(c, in)
		},
		manifest.KindExpr: func(s *scope, c *manifest.Cell, _ string, _ *cellSig, in ports, _ *receipt.Cell) (ports, *Failure) {
			return s.exprCell(c, in)
		},
		manifest.KindStore: func(s *scope, _ *manifest.Cell, _ string, _ *cellSig, in ports, _ *receipt.Cell) (ports, *Failure) {
			return s.storeCell(in)
		},
		manifest.KindLoad: func(s *scope, _ *manifest.Cell, _ string, _ *cellSig, in ports, _ *receipt.Cell) (ports, *Failure) {
			return s.loadCell(in)
		},
		manifest.KindSlot: func(s *scope, c *manifest.Cell, p string, _ *cellSig, in ports, rec *receipt.Cell) (ports, *Failure) {
			return s.slotCell(c, p, in, rec)
		},
		manifest.KindTool: func(s *scope, c *manifest.Cell, p string, _ *cellSig, in ports, rec *receipt.Cell) (ports, *Failure) {
			tsig, _ := s.r.toolSig(c.Tool.Name)
			return s.toolCall(c.ID, p, p, c.Tool.Name, tsig, in, c.Tool.Budget.MaxEffectMs, rec)
		},
		manifest.KindAgent:      agentLike,
		manifest.KindClassifier: agentLike,
		manifest.KindGate:       agentLike,
		manifest.KindDecide: func(s *scope, c *manifest.Cell, p string, _ *cellSig, in ports, rec *receipt.Cell) (ports, *Failure) {
			return s.decideCell(c, p, in, rec)
		},
		manifest.KindRecall: func(s *scope, c *manifest.Cell, p string, _ *cellSig, in ports, rec *receipt.Cell) (ports, *Failure) {
			return s.recallCell(c, p, in, rec)
		},
		manifest.KindOrganism: (*scope).organismCell,
		manifest.KindRepeat:   (*scope).repeatCell,
		manifest.KindEach:     (*scope).eachCell,
		manifest.KindSpawn: func(s *scope, c *manifest.Cell, p string, _ *cellSig, in ports, rec *receipt.Cell) (ports, *Failure) {
			return s.spawnCell(c, p, in, rec)
		},
	}
}

// activate runs one cell's body (see activation).
func (s *scope) activate(c *manifest.Cell, p string, sig *cellSig, in ports, rec *receipt.Cell) (ports, *Failure) {
	act, ok := activations[c.Kind]
	if !ok {
		return nil, failf(fault.ManifestInvalid, "unsupported cell kind %s", c.Kind)
	}
	return act(s, c, p, sig, in, rec)
}

func (s *scope) constCell(c *manifest.Cell) (ports, *Failure) {
	out := ports{}
	for _, port := range c.Declared {
		if port.Type == manifest.TypeRef {
			if f := s.mustResolve(port.Value); f != nil {
				return nil, f
			}
		}
		out[port.Name] = port.Value
	}
	return out, nil
}

func (s *scope) fnCell(c *manifest.Cell, in ports) (ports, *Failure) {
	fn, fsig, _ := s.r.host.fn(c.Fn)
	out, extra, err := fn(in)
	s.r.units += fsig.Cost + extra
	if err != nil {
		f := asFailure(err)
		if f.Code == fault.Internal {
			f.Code = fault.FnFailed
		}
		return nil, f
	}
	return out, nil
}

func (s *scope) exprCell(c *manifest.Cell, in ports) (ports, *Failure) {
	v, burn, err := c.Expr.Program.Compiled.Eval(in, MaxExprFuel)
	s.r.units += burn
	if err != nil {
		return nil, exprFailure(err)
	}
	if f := exactOutput(c.ID, &c.Expr.Output, v); f != nil {
		return nil, f
	}
	return ports{"out": v}, nil
}

func (s *scope) storeCell(in ports) (ports, *Failure) {
	b, err := canon.Encode(in["data"])
	if err != nil {
		return nil, failf(fault.TypeMismatch, "store payload is not canonical JSON")
	}
	s.r.units += len(b)
	if len(b) > MaxBlobBytes {
		return nil, failf(fault.BudgetExhausted, "store payload %dB exceeds maxBlobBytes %dB", len(b), MaxBlobBytes)
	}
	d, perr := s.r.host.Store.Put(store.Values, in["data"])
	if perr != nil {
		return nil, asFailure(perr)
	}
	return ports{"ref": d}, nil
}

func (s *scope) loadCell(in ports) (ports, *Failure) {
	ref, _ := in["ref"].(string)
	v, ok, err := s.r.host.Store.Get(store.Values, ref)
	if err != nil {
		return nil, asFailure(err)
	}
	if !ok {
		return nil, failf(fault.InputMissing, "reference not in store")
	}
	b, _ := canon.Encode(v)
	s.r.units += len(b)
	if len(b) > MaxBlobBytes {
		return nil, failf(fault.BudgetExhausted, "loaded payload %dB exceeds maxBlobBytes %dB", len(b), MaxBlobBytes)
	}
	return ports{"data": v}, nil
}

func exprFailure(err error) *Failure {
	if fault.CodeOf(err) == expr.CodeFuel {
		return failf(fault.BudgetExhausted, "expr fuel exhausted")
	}
	return failf(fault.ExprFailed, "expr %s", expr.Canonical(err))
}

// exactOutput binds a program result to an output contract; programs
// return exact values, so there is no onMiss.
func exactOutput(cellID string, o *manifest.Output, v any) *Failure {
	if f := checkValue(o.Port(), v); f != nil {
		return failf(fault.TypeMismatch, "cell %s output: %s", cellID, f.Message)
	}
	return nil
}

func (s *scope) mustResolve(v any) *Failure {
	ref, _ := v.(string)
	ok, err := s.r.host.Store.Has(store.Values, ref)
	if err != nil {
		return asFailure(err)
	}
	if !ok {
		return failf(fault.StoreMiss, "input/const reference does not resolve")
	}
	return nil
}

func (s *scope) inputCell(c *manifest.Cell) (ports, *Failure) {
	args := s.feed[c.ID]
	out := ports{}
	for _, k := range canon.SortedKeys(args) {
		declared := false
		for _, port := range c.Declared {
			if port.Name == k {
				declared = true
				if port.Type == manifest.TypeRef {
					if f := checkValue(port, args[k]); f != nil {
						return nil, failf(f.Code, "input %s: %s", k, f.Message)
					}
					if f := s.mustResolve(args[k]); f != nil {
						return nil, f
					}
				}
			}
		}
		if !declared {
			return nil, failf(fault.TypeMismatch, "cell %s produced undeclared port %s", c.ID, k)
		}
		out[k] = args[k]
	}
	return out, nil
}

func (s *scope) slotCell(c *manifest.Cell, p string, in ports, rec *receipt.Cell) (ports, *Failure) {
	sc := c.Slot
	rec.Slot = &receipt.Slot{Name: sc.Name, Mode: sc.Mode}
	if sc.Mode == "write" {
		b, err := canon.Encode(in["data"])
		if err != nil {
			return nil, failf(fault.TypeMismatch, "slot payload is not canonical JSON")
		}
		s.r.units += len(b)
		if len(b) > MaxBlobBytes {
			return nil, failf(fault.BudgetExhausted, "slot payload %dB exceeds maxBlobBytes %dB", len(b), MaxBlobBytes)
		}
		if err := s.r.host.Store.SetSlot(sc.Name, in["data"]); err != nil {
			return nil, asFailure(err)
		}
		return ports{"data": in["data"]}, nil
	}
	// A read is nondeterministic input: verification serves the recorded
	// outcome instead of the live slot.
	if s.r.host.recorded != nil {
		if recd := s.r.host.recorded[p]; recd != nil && recd.Slot != nil && recd.Slot.Mode == "read" {
			switch recd.Status {
			case receipt.StatusCommitted:
				outs := recd.Outputs
				if outs == nil {
					outs = ports{}
				}
				return outs, nil
			case receipt.StatusFailed:
				return nil, &Failure{Code: recd.Failure.Code, Message: recd.Failure.Message}
			}
		}
	}
	v, ok, err := s.r.host.Store.GetSlot(sc.Name)
	if err != nil {
		return nil, asFailure(err)
	}
	if !ok {
		if !sc.HasDefault {
			return nil, failf(fault.InputMissing, "slot cell %q: slot %q is empty and declares no default", c.ID, sc.Name)
		}
		v = sc.Default
	}
	return ports{"data": v}, nil
}
