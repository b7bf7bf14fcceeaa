package vm

import (
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/store"
)

// cellSig is a cell's complete port signature.
type cellSig struct {
	inputs  []manifest.Port
	outputs []manifest.Port
	child   *manifest.Manifest // organism/repeat/each
	via     string             // transport that served the child, if any
}

func (s *cellSig) output(name string) (manifest.Port, bool) {
	for _, p := range s.outputs {
		if p.Name == name {
			return p, true
		}
	}
	return manifest.Port{}, false
}

func jsonPort(name string) manifest.Port { return manifest.Port{Name: name, Type: manifest.TypeJSON} }

// signature computes (and caches per manifest) a cell's ports.
func (s *scope) signature(c *manifest.Cell) (*cellSig, *Failure) {
	key := s.m.Digest + "\x00" + c.ID
	if sig, ok := s.r.sigs[key]; ok {
		return sig, nil
	}
	sig, f := s.r.computeSig(s.m, c)
	if f != nil {
		return nil, f
	}
	s.r.sigs[key] = sig
	return sig, nil
}

// computeSig reads where a cell's ports come from in the kind table
// (manifest.KindOf), as the compiler does.
func (r *runner) computeSig(m *manifest.Manifest, c *manifest.Cell) (*cellSig, *Failure) {
	spec, ok := manifest.KindOf(c.Kind)
	if !ok {
		return nil, failf(fault.ManifestInvalid, "unsupported cell kind %s", c.Kind)
	}
	switch spec.Ports {
	case manifest.FnPorts:
		_, sig, ok := r.host.fn(c.Fn)
		if !ok {
			return nil, failf(fault.FnUnknown, "unknown fn %s", c.Fn)
		}
		return &cellSig{inputs: sig.Inputs, outputs: sig.Outputs}, nil
	case manifest.ToolPorts:
		t, ok := r.toolSig(c.Tool.Name)
		if !ok {
			return nil, failf(fault.ToolUnknown, "tool not configured")
		}
		return &cellSig{inputs: t.Inputs, outputs: t.Outputs}, nil
	case manifest.ChildPorts:
		return r.embedSig(c)
	}
	sig := spec.Signature(c)
	return &cellSig{inputs: sig.Inputs, outputs: sig.Outputs}, nil
}

// resolveManifest loads a manifest by digest from the store, falling back
// to the cell's transport when it is absent locally.
func (r *runner) resolveManifest(digest, via string) (*manifest.Manifest, string, *Failure) {
	v, ok, err := r.host.Store.Get(store.Manifests, digest)
	if err != nil {
		return nil, "", asFailure(err)
	}
	served := r.fetched[digest]
	if !ok && via != "" {
		if f := r.fetchBundle(digest, via); f != nil {
			return nil, "", f
		}
		v, ok, err = r.host.Store.Get(store.Manifests, digest)
		if err != nil {
			return nil, "", asFailure(err)
		}
		served = via
	}
	if !ok {
		return nil, "", failf(fault.StoreMiss, "manifest %s is not in the store", digest)
	}
	m, perr := manifest.ParseValue(v)
	if perr != nil {
		return nil, "", asFailure(perr)
	}
	if m.Digest != digest {
		return nil, "", failf(fault.DigestMismatch, "manifest %s normalizes to %s", digest, m.Digest)
	}
	return m, served, nil
}

// interfacePort finds the type of a child interface port.
func (r *runner) interfacePort(m *manifest.Manifest, ip manifest.InterfacePort, output bool) (manifest.Port, *Failure) {
	c, ok := m.Cell(ip.Cell)
	if !ok {
		return manifest.Port{}, failf(fault.InterfaceMismatch, "interface names unknown cell %s", ip.Cell)
	}
	sig, f := r.computeSig(m, c)
	if f != nil {
		return manifest.Port{}, f
	}
	ports := sig.outputs
	if !output && c.Kind != manifest.KindInput {
		ports = sig.inputs
	}
	for _, p := range ports {
		if p.Name == ip.Port {
			p.Name = ip.Name
			return p, nil
		}
	}
	return manifest.Port{}, failf(fault.InterfaceMismatch, "interface port %s.%s is not declared", ip.Cell, ip.Port)
}

func (r *runner) embedSig(c *manifest.Cell) (*cellSig, *Failure) {
	child, via, f := r.resolveManifest(c.Embed.Manifest, c.Embed.Via)
	if f != nil {
		return nil, f
	}
	if child.Interface == nil {
		return nil, failf(fault.InterfaceMismatch, "manifest %s declares no interface", c.Embed.Manifest)
	}
	sig := &cellSig{child: child, via: via}
	for _, ip := range child.Interface.Inputs {
		p, f := r.interfacePort(child, ip, false)
		if f != nil {
			return nil, f
		}
		p.Optional = false
		switch c.Kind {
		case manifest.KindRepeat:
			for _, cr := range c.Embed.Carry {
				if cr.Input == ip.Name {
					p.Optional = true
				}
			}
		case manifest.KindEach:
			if ip.Name == c.Embed.Over {
				p = jsonPort(ip.Name)
			}
		}
		sig.inputs = append(sig.inputs, p)
	}
	for _, ip := range child.Interface.Outputs {
		p, f := r.interfacePort(child, ip, true)
		if f != nil {
			return nil, f
		}
		if c.Kind == manifest.KindEach {
			p.Many = true
		}
		sig.outputs = append(sig.outputs, p)
	}
	return sig, nil
}

// producesMany reports whether cell j's port is a list producer.
func (s *scope) producesMany(j int, port string) bool {
	c := s.m.Cells[j]
	if c.Kind != manifest.KindEach {
		return false
	}
	sig, f := s.signature(c)
	if f != nil {
		return false
	}
	p, ok := sig.output(port)
	return ok && p.Many
}

// checkPorts checks delivered or produced values against their ports.
func checkPorts(declared []manifest.Port, vals ports, what string) *Failure {
	for _, p := range declared {
		v, ok := vals[p.Name]
		if !ok {
			continue
		}
		if f := checkValue(p, v); f != nil {
			return failf(f.Code, "%s %s: %s", what, p.Name, f.Message)
		}
	}
	return nil
}

// checkOutputs rejects undeclared output ports and values that do not fit.
func checkOutputs(cellID string, sig *cellSig, outs ports) *Failure {
	for _, k := range canon.SortedKeys(outs) {
		if _, ok := sig.output(k); !ok {
			return failf(fault.TypeMismatch, "cell %s produced undeclared port %s", cellID, k)
		}
	}
	return checkPorts(sig.outputs, outs, "output")
}

// CheckValue checks v against port p exactly as a run checks a value
// delivered to it (size bound, type, labels, schema): nil, or a coded
// error saying what does not fit. A workload loader uses it to reject a
// case's args before anything runs.
func CheckValue(p manifest.Port, v any) error {
	if f := checkValue(p, v); f != nil {
		return &fault.Error{Code: f.Code, Message: f.Message}
	}
	return nil
}

// checkValue checks one port value: size bound, type, labels and schema.
func checkValue(p manifest.Port, v any) *Failure {
	n, err := canon.EncodedSize(v)
	if err != nil {
		return failf(fault.TypeMismatch, "value is not canonical JSON")
	}
	if n > MaxValueBytes {
		return failf(fault.BudgetExhausted, "port value bytes")
	}
	if p.Many {
		l, ok := v.([]any)
		if !ok {
			return failf(fault.TypeMismatch, "expected a list")
		}
		if len(l) > MaxManyItems {
			return failf(fault.BudgetExhausted, "port value bytes")
		}
		for i, e := range l {
			if f := checkScalar(p, e); f != nil {
				return failf(f.Code, "item %d: %s", i, f.Message)
			}
		}
		return nil
	}
	return checkScalar(p, v)
}

func checkScalar(p manifest.Port, v any) *Failure {
	switch p.Type {
	case manifest.TypeText:
		if _, ok := v.(string); !ok {
			return failf(fault.TypeMismatch, "expected text, got %s", kindName(v))
		}
	case manifest.TypeChoice:
		s, ok := v.(string)
		if !ok {
			return failf(fault.TypeMismatch, "expected a choice label, got %s", kindName(v))
		}
		if !p.HasLabel(s) {
			return failf(fault.TypeMismatch, "%q is not a declared label", s)
		}
	case manifest.TypeRef:
		s, ok := v.(string)
		if !ok || !canon.IsDigest(s) {
			return failf(fault.TypeMismatch, "expected a sha256 ref token")
		}
	case manifest.TypeCap:
		if _, ok := v.(string); !ok {
			return failf(fault.TypeMismatch, "expected a capability handle")
		}
	case manifest.TypeJSON:
		if p.Schema != nil {
			if msg := manifest.ValidateValue(p.Schema, v, p.SchemaVersion); msg != "" {
				return failf(fault.TypeMismatch, "%s", msg)
			}
		}
	}
	return nil
}

// ports holds the values at a cell's ports by port name: the inputs
// delivered to an activation, the outputs it commits, the args of one
// input cell or the interface values a nested organism is fed. Each value
// is arbitrary canonical JSON; the names are the cell's signature. canon
// encodes only plain objects, so a ports value goes into a JSON value
// through object().
type ports map[string]any

// object is p as a plain JSON object, for a request, a context or a
// receipt value (a ports value inside an any would not encode).
func (p ports) object() map[string]any { return p }

// clone is a shallow copy (the values are shared, never modified).
func (p ports) clone() ports {
	out := make(ports, len(p))
	for k, v := range p {
		out[k] = v
	}
	return out
}
