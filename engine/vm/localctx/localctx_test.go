package localctx

import (
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
)

// The cases below are derived from upstream's shared reference fixture
// (scripts/fixtures/agent-local-context.json in hraness/algal, read with
// the search tool; the file itself is not copied here): one snapshot of a
// prompt, a filtered input map, one ancestor record and two tool-log
// entries, then queries with the exact results or errors both upstream
// runtimes must give.
func fixtureSnapshot(t *testing.T) (*Snapshot, int) {
	t.Helper()
	inputs := map[string]any{"visible": "😀 seen"}
	cells := map[string]any{"ancestor": map[string]any{"outputs": map[string]any{"value": "allowed"}, "status": "committed"}}
	calls := []any{
		map[string]any{"fn": "uppercase.v1", "inputs": map[string]any{"value": "retained"}, "output": map[string]any{"value": "RETAINED"}},
		map[string]any{"fn": "echo.v1", "inputs": map[string]any{"value": "large"}, "output": map[string]any{"value": strings.Repeat("x", 5000)}},
	}
	return Capture("Inspect Ω", inputs, cells, true, calls)
}

const fixtureInspect = `{"result":{"entries":[` +
	`{"bytes":10,"digest":"sha256:236bf366baccf746186325c4e7013cf26c2898cc739eace753783bac6a8afcdc","index":0,"kind":"instruction","label":"agent-instruction"},` +
	`{"bytes":23,"digest":"sha256:041359a942192e83106e7989930b4657664dd5010ccda043a8fc7a36be1a65a6","index":1,"kind":"input","label":"permitted-inputs"},` +
	`{"bytes":65,"digest":"sha256:7274efd8d2c8d76cedbcdc5fff20a2177b6eacd89bdbd314fee03a552f5e3feb","index":2,"kind":"observation","label":"permitted-ancestors"},` +
	`{"bytes":81,"digest":"sha256:64153d4d4085ee14d86d86b9807edadbb980a62d4a963314060a77faa5823c83","index":3,"kind":"observation","label":"tool-0"},` +
	`{"bytes":5065,"digest":"sha256:46c2f46bda55629d6c8b279c0008d52b9b86138149db3bd904a77cc89114d892","index":4,"kind":"observation","label":"tool-1"}],` +
	`"nextOffset":null,"offset":0,"snapshot":"sha256:5b56ebb53999d58a13ab8faf74de3b8ce4b352896448d0870c089e7724be7c21","totalEntries":5}}`

func TestLocalContextMatchesUpstreamFixture(t *testing.T) {
	t.Parallel()
	snap, work := fixtureSnapshot(t)
	if work != 5302 {
		t.Errorf("capture work %d, upstream charges 5302", work)
	}
	for _, tc := range []struct {
		query string
		out   string // canonical output, or
		code  string // the error code and
		msg   string // message
	}{
		{query: `{"op":"inspect"}`, out: fixtureInspect},
		{query: `{"op":"inspect","offset":null,"limit":null}`, out: fixtureInspect},
		{query: `{"op":"read","index":1}`, out: `{"result":{"kind":"input","label":"permitted-inputs","text":"{\"visible\":\"😀 seen\"}"}}`},
		{query: `{"op":"slice","index":1,"startByte":12,"endByte":16}`, out: `{"result":"😀"}`},
		{query: `{"op":"search","query":"RETAINED"}`, out: `{"result":{"complete":true,"matches":[{"endByte":78,"index":3,"startByte":70}],"scannedBytes":5244}}`},
		{query: `{"op":"read","index":5}`, code: "CAPABILITY_DENIED", msg: "agent context scope does not authorize this operation"},
		{query: `{"op":"read","index":4}`, code: "BUDGET_EXHAUSTED", msg: "context read exceeds byte limit; use slice"},
		{query: `{"op":"slice","index":1,"startByte":13,"endByte":16}`, code: "PARSE_FAILED", msg: "context slice must use UTF-8 boundaries"},
		{query: `{"op":"slice","index":1,"startByte":0,"endByte":1000}`, code: "PARSE_FAILED", msg: "slice end must be an integer in [0, 23]"},
		{query: `{"op":"search","query":"x","maxResults":17}`, code: "PARSE_FAILED", msg: "result limit must be an integer in [1, 16]"},
		{query: `{"op":"read","index":0,"snapshot":"other-cell"}`, code: "PARSE_FAILED", msg: `context read has unknown key "snapshot"`},
		// Beyond the fixture, from the same reader's rules.
		{query: `{"op":"inspect","offset":3,"limit":1}`, out: `{"result":{"entries":[{"bytes":81,"digest":"sha256:64153d4d4085ee14d86d86b9807edadbb980a62d4a963314060a77faa5823c83","index":3,"kind":"observation","label":"tool-0"}],"nextOffset":4,"offset":3,"snapshot":"sha256:5b56ebb53999d58a13ab8faf74de3b8ce4b352896448d0870c089e7724be7c21","totalEntries":5}}`},
		{query: `{"op":"search","query":"x","maxResults":2}`, out: `{"result":{"complete":false,"matches":[{"endByte":63,"index":4,"startByte":62},{"endByte":64,"index":4,"startByte":63}],"scannedBytes":5244}}`},
		{query: `{"op":"search","query":"seen","maxScanBytes":40}`, out: `{"result":{"complete":false,"matches":[{"endByte":21,"index":1,"startByte":17}],"scannedBytes":33}}`},
		{query: `{"op":"search","query":"absent text"}`, out: `{"result":{"complete":true,"matches":[],"scannedBytes":5244}}`},
		{query: `{"op":"inspect","offset":9,"limit":null}`, out: `{"result":{"entries":[],"nextOffset":null,"offset":9,"snapshot":"sha256:5b56ebb53999d58a13ab8faf74de3b8ce4b352896448d0870c089e7724be7c21","totalEntries":5}}`},
		{query: `{"op":"search","query":"x","maxScanBytes":null}`, code: "PARSE_FAILED", msg: "context maxScanBytes must be an integer in [1, 8388608]"},
		{query: `{"op":"slice","index":4,"startByte":0,"endByte":4097}`, code: "BUDGET_EXHAUSTED", msg: "context slice exceeds byte limit"},
		{query: `{"op":"slice","index":9,"startByte":0,"endByte":1}`, code: "CAPABILITY_DENIED", msg: "agent context scope does not authorize this operation"},
		{query: `{"op":"search","query":""}`, code: "PARSE_FAILED", msg: "context search query must not be empty"},
		{query: `{"op":"list"}`, code: "PARSE_FAILED", msg: "context operation must be inspect, read, slice, or search"},
		{query: `{"op":"read","index":1.5}`, code: "PARSE_FAILED", msg: "context index must be an integer in [0, 1023]"},
		{query: `{"op":"inspect","limit":65}`, code: "PARSE_FAILED", msg: "context limit must be an integer in [1, 64]"},
		{query: `"read"`, code: "PARSE_FAILED", msg: "agent context query must be an object"},
		{query: `{"op":"read","index":{"a":{"b":1}}}`, code: "BUDGET_EXHAUSTED", msg: "agent context query: exceeds nesting depth 2"},
		{query: `{"op":"read","a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8}`, code: "BUDGET_EXHAUSTED", msg: "agent context query: object exceeds 8 entries"},
	} {
		q, err := canon.Parse([]byte(tc.query), 0)
		if err != nil {
			t.Fatal(err)
		}
		out, f := snap.Query(map[string]any{"query": q})
		if tc.code != "" {
			if f == nil || f.Code != tc.code || f.Message != tc.msg {
				t.Errorf("%s: got %v, want %s %q", tc.query, f, tc.code, tc.msg)
			}
			continue
		}
		if f != nil {
			t.Errorf("%s: %v", tc.query, f)
			continue
		}
		if b, _ := canon.Encode(out); string(b) != tc.out {
			t.Errorf("%s:\n got %s\nwant %s", tc.query, b, tc.out)
		}
	}
	// Inputs other than the query are refused.
	if _, f := snap.Query(map[string]any{"query": map[string]any{"op": "inspect"}, "extra": true}); f == nil || f.Message != `context tool inputs has unknown key "extra"` {
		t.Errorf("extra input: %v", f)
	}
}

// The prompt an agent declaring the tool sends is upstream's: the cell's
// prompt, a newline, and the tool's instructions.
func TestLocalContextPromptIsUpstreams(t *testing.T) {
	t.Parallel()
	p := Prompt("Inspect Ω")
	if !strings.HasPrefix(p, "Inspect Ω\nRead exact permitted inputs") || !strings.HasSuffix(p, "Every query uses the existing turn, model-call, and work budgets.") {
		t.Fatalf("prompt %q", p)
	}
	if d, _ := canon.Digest(p); d != "sha256:"+promptDigestHex {
		t.Errorf("prompt digest %s", d)
	}
}

// promptDigestHex is the sha256 of the canonical JSON string of the
// fixture's expected prompt for "Inspect Ω".
const promptDigestHex = "67ca7de1162ed8c17b4c737101be21af3e82c6b6f69cc9691d01c22f7e08cac8"
