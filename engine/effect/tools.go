package effect

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

// Tool registry bounds (--tools FILE).
const (
	MaxTools          = 64
	MaxToolsFileBytes = 1_048_576
	// MaxToolStdout bounds what a tool command may print; the declared
	// maxOutputBytes is enforced by the VM after the effect is recorded.
	MaxToolStdout = 4 * 1_048_576
)

// Tool is one host tool admitted from a registry file.
type Tool struct {
	Name string
	// Signature is the raw declaration {inputs, outputs, effect, cost,
	// maxOutputBytes}; Inputs and Outputs are its port maps, which the VM
	// parses with its own port rules.
	Signature      map[string]any
	Inputs         map[string]any
	Outputs        map[string]any
	Effect         string // read | write
	Cost           int64
	MaxOutputBytes int
	Exec           string // scripted:<path> | cmd:<command>
	// ConfigurationDigest binds signature, exec spec, working directory and
	// (for scripted tools) the table; the journal uses it, receipts do not.
	ConfigurationDigest string

	command *Command
	table   map[string]any
}

// Tools is a registry of host tools. Tool requests (algal.tool-effect.v1)
// name the tool; a cmd: tool receives canonical {"idempotencyKey",
// "inputs", "requestDigest"} on stdin and prints the outputs object.
type Tools struct {
	byName map[string]*Tool
	names  []string
}

// LoadTools reads a --tools registry. Relative scripted: paths and cmd:
// working directories resolve against the file's directory.
func LoadTools(path string) (*Tools, error) {
	v, err := canon.ReadFile(path, MaxToolsFileBytes)
	if err != nil {
		return nil, err
	}
	base, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, Errorf(fault.IOFailed, "%s: %v", path, err)
	}
	return ParseTools(v, base)
}

// ParseTools admits a registry value whose relative paths resolve in base.
func ParseTools(v any, base string) (*Tools, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, Errorf(fault.Parse, "tool registry must be an object")
	}
	if len(m) > MaxTools {
		return nil, Errorf(fault.BudgetExhausted, "tool registry has %d tools, over %d", len(m), MaxTools)
	}
	t := &Tools{byName: map[string]*Tool{}}
	for _, name := range canon.SortedKeys(m) {
		tool, err := parseTool(name, m[name], base)
		if err != nil {
			return nil, err
		}
		t.byName[name] = tool
		t.names = append(t.names, name)
	}
	return t, nil
}

func parseTool(name string, v any, base string) (*Tool, error) {
	tool, msg := readTool(name, v, base)
	if msg != "" {
		return nil, Errorf(fault.Parse, "tool %s: %s", name, msg)
	}
	return tool, nil
}

// readTool admits one registry entry; msg says what is wrong with it.
func readTool(name string, v any, base string) (*Tool, string) {
	if name == "" || len(name) > 64 {
		return nil, "name must be 1..64 bytes"
	}
	entry, ok := v.(map[string]any)
	if !ok || len(entry) != 2 || entry["signature"] == nil || entry["exec"] == nil {
		return nil, "entry must be exactly {signature, exec}"
	}
	tool, msg := readSignature(entry["signature"])
	if msg != "" {
		return nil, msg
	}
	tool.Name = name
	spec, _ := entry["exec"].(string)
	if spec == "" || len(spec) > 8192 {
		return nil, "exec must be scripted:<file> or cmd:<command>"
	}
	tool.Exec = spec
	descriptor := map[string]any{"contract": "algal.cli-tool-binding.v1", "signature": tool.Signature, "exec": spec, "cwd": base}
	if msg := tool.bindExec(spec, base, descriptor); msg != "" {
		return nil, msg
	}
	d, err := canon.Digest(descriptor)
	if err != nil {
		return nil, err.Error()
	}
	tool.ConfigurationDigest = d
	return tool, ""
}

// readSignature reads a tool's signature: port maps, effect, cost and
// output bound.
func readSignature(v any) (*Tool, string) {
	sig, ok := v.(map[string]any)
	if !ok {
		return nil, "signature must be an object"
	}
	if k, unknown := canon.UnknownKey(sig, "inputs", "outputs", "effect", "cost", "maxOutputBytes"); unknown {
		return nil, fmt.Sprintf("signature has unknown field %q", k)
	}
	inputs, ok1 := sig["inputs"].(map[string]any)
	outputs, ok2 := sig["outputs"].(map[string]any)
	if !ok1 || !ok2 {
		return nil, "signature inputs and outputs must be port maps"
	}
	effect, _ := sig["effect"].(string)
	if effect != "read" && effect != "write" {
		return nil, "signature effect must be read or write"
	}
	cost, ok := intIn(sig["cost"], 0, 100_000_000)
	if !ok {
		return nil, "signature cost must be an integer in 0..100000000"
	}
	maxOut, ok := intIn(sig["maxOutputBytes"], 1, 262_144)
	if !ok {
		return nil, "signature maxOutputBytes must be an integer in 1..262144"
	}
	return &Tool{Signature: sig, Inputs: inputs, Outputs: outputs, Effect: effect, Cost: cost, MaxOutputBytes: int(maxOut)}, ""
}

// bindExec binds the tool to its executor: a scripted table (which then
// enters the configuration descriptor) or a command.
func (t *Tool) bindExec(spec, base string, descriptor map[string]any) string {
	if file, ok := strings.CutPrefix(spec, "scripted:"); ok && file != "" {
		tv, err := canon.ReadFile(filepath.Join(base, file), MaxScriptedBytes)
		if err != nil {
			return err.Error()
		}
		table, ok := tv.(map[string]any)
		if !ok {
			return "scripted tool table must be an object"
		}
		t.table = table
		descriptor["responses"] = table
		return ""
	}
	if line, ok := strings.CutPrefix(spec, "cmd:"); ok && line != "" {
		c, err := NewCommand("tool:"+t.Name, line, base, DefaultToolTimeout)
		if err != nil {
			return fault.MessageOf(err)
		}
		t.command = c
		return ""
	}
	return "exec must be scripted:<file> or cmd:<command>"
}

func intIn(v any, lo, hi int64) (int64, bool) {
	f, ok := v.(float64)
	if !ok || f != float64(int64(f)) || int64(f) < lo || int64(f) > hi {
		return 0, false
	}
	return int64(f), true
}

// Names lists the admitted tools in canonical order.
func (t *Tools) Names() []string {
	if t == nil {
		return nil
	}
	return t.names
}

// Lookup returns the named tool.
func (t *Tools) Lookup(name string) (*Tool, bool) {
	if t == nil {
		return nil, false
	}
	tool, ok := t.byName[name]
	return tool, ok
}

// Call runs a tool request and returns its record (executor "tool:<name>").
// idempotencyKey "" means the request digest. maxEffect (the cell's
// maxEffectMs; zero for none) shortens the 30 s tool bound. The error is
// non-nil only when the tool is not admitted here (a hard EFFECT_UNBOUND)
// or the request is malformed.
func (t *Tools) Call(ctx context.Context, req Request, idempotencyKey string, maxEffect time.Duration) (Record, error) {
	d, err := RequestDigest(req)
	if err != nil {
		return Record{}, err
	}
	return t.call(ctx, req, d, idempotencyKey, maxEffect)
}

func (t *Tools) call(ctx context.Context, req Request, d, key string, maxEffect time.Duration) (Record, error) {
	name, _ := req["tool"].(string)
	tool, ok := t.Lookup(name)
	if !ok {
		return Record{}, &fault.Error{Code: fault.EffectUnbound, Message: "tool \"" + name + "\" is not admitted by the host", Host: true, NotRetryable: true}
	}
	if key == "" {
		key = d
	}
	rec := Record{RequestDigest: d, Executor: "tool:" + name}
	out, ferr := tool.run(ctx, req, d, key, maxEffect)
	if ferr != nil {
		if ferr.Host {
			return Record{}, ferr
		}
		rec.Err = &Failure{Code: ferr.Code, Message: boundMessage(ferr.Message)}
		rec.NotRetryable = tool.command != nil || ferr.NotRetryable || ferr.Uncertain || ferr.Code == fault.EffectSuspended
		if ferr.Code == fault.EffectSuspended && len(ferr.Wake) > 0 {
			rec.Wake = ferr.Wake
		}
		return rec, nil
	}
	rec.Output = out
	rec.NotRetryable = tool.command != nil
	return rec, nil
}

func (tool *Tool) run(ctx context.Context, req Request, d, key string, maxEffect time.Duration) (any, *fault.Error) {
	inputs, ok := req["inputs"].(map[string]any)
	if !ok {
		return nil, &fault.Error{Code: fault.Internal, Message: "tool request has no inputs object", Host: true}
	}
	if tool.table != nil {
		text, err := canon.Encode(inputs)
		if err != nil {
			return nil, &fault.Error{Code: fault.Internal, Message: "tool inputs are not canonical JSON", Host: true}
		}
		out, ok := tool.table[string(text)]
		if !ok {
			return nil, Errorf(fault.ToolFailed, "scripted tool result missing")
		}
		return out, nil
	}
	payload, err := canon.Encode(map[string]any{"idempotencyKey": key, "inputs": inputs, "requestDigest": d})
	if err != nil {
		return nil, &fault.Error{Code: fault.Internal, Message: "tool inputs are not canonical JSON", Host: true}
	}
	timeout := tool.command.timeout
	if maxEffect > 0 && maxEffect < timeout {
		timeout = maxEffect
	}
	out, ferr := runCommand(ctx, tool.command.argv, tool.command.dir, payload, MaxToolStdout, timeout)
	if ferr != nil {
		return nil, ferr
	}
	v, perr := canon.Parse(out, 0)
	if perr != nil {
		return nil, Errorf(fault.EffectUnparseable, "command output is not JSON")
	}
	return v, nil
}

// Tool serves one algal.tool-effect.v1 request: recorded answers first
// (replay), then the host tool registry. A request neither can serve is a
// hard EFFECT_UNBOUND error (not a record) that explains the miss.
func (r *Router) Tool(ctx context.Context, req Request, idempotencyKey string, maxEffect time.Duration) (Record, error) {
	d, err := RequestDigest(req)
	if err != nil {
		return Record{}, err
	}
	for _, ex := range r.executors {
		if rs, ok := ex.(RecordSource); ok {
			if rec, ok := rs.Take(req, d); ok {
				return rec, nil
			}
		}
	}
	name, _ := req["tool"].(string)
	if _, ok := r.Tools.Lookup(name); !ok {
		msg := "tool \"" + name + "\" is not admitted by the host"
		for _, ex := range r.executors {
			if e, ok := ex.(Explainer); ok {
				msg += "; " + e.Explain(req)
			}
		}
		return Record{}, &fault.Error{Code: fault.EffectUnbound, Message: msg, Host: true, NotRetryable: true}
	}
	return r.Tools.call(ctx, req, d, idempotencyKey, maxEffect)
}
