package vm

import (
	"strings"

	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/vm/localctx"
)

// HostToolServer is implemented by router executors that serve reserved
// standard-library host tools in-process (mailbox.Tools serves
// mailbox.send.v1 and mailbox.receive.v1). Such an executor answers tool
// requests as an effect.RecordSource, after any replay placed before it;
// the VM types the tools it names with the contract's reserved signatures.
type HostToolServer interface {
	HostTools() []string
}

// addHostTools types the reserved tools the router's executors serve.
func addHostTools(h *Host, out map[string]manifest.Signature) {
	if h.Router == nil {
		return
	}
	for _, ex := range h.Router.Executors() {
		p, ok := ex.(HostToolServer)
		if !ok {
			continue
		}
		for _, name := range p.HostTools() {
			if s, ok := manifest.ReservedTool(name); ok && name != localctx.Tool {
				if _, taken := out[name]; !taken {
					out[name] = s
				}
			}
		}
	}
}

// recordedHostTools types the reserved host tools a checked receipt's
// effects were served by ("tool:<name>"), so verification can replay them
// without admitting the live service: the replay serves every answer.
func recordedHostTools(given map[string]manifest.Signature, records []effect.Record) map[string]manifest.Signature {
	var out map[string]manifest.Signature
	for _, rec := range records {
		name, ok := strings.CutPrefix(rec.Executor, "tool:")
		if !ok || name == localctx.Tool {
			continue
		}
		s, ok := manifest.ReservedTool(name)
		if !ok {
			continue
		}
		if _, ok := given[name]; ok {
			continue
		}
		if out == nil {
			out = make(map[string]manifest.Signature, len(given)+1)
			for k, v := range given {
				out[k] = v
			}
		}
		out[name] = s
	}
	if out == nil {
		return given
	}
	return out
}
