package vm

import (
	"strings"
	"testing"
)

// runtime.rs writes the activation error into the cell record and the run
// failure as is; receipt.rs bounds cell and run failure messages only by
// the receipt size (2048 is the effect error bound).
func TestLongFailureMessageIsKept(t *testing.T) {
	t.Parallel()
	m := mustManifest(t, organism("long-msg",
		`{"id":"in","kind":"input","outputs":{"q":"text"}},
		 {"id":"e","kind":"expr","inputs":{"x":"text"},
		  "expr":{"contract":"algal.expr.v1","program":["get","x"]},"output":{"kind":"choice","labels":["a"]}}`,
		edge("in", "q", "e", "x")))
	rec := runAndVerify(t, m, `{"in":{"q":"`+strings.Repeat("z", 3000)+`"}}`, &Host{})
	msg := cell(t, rec, "e")["failure"].(map[string]any)["message"].(string)
	if len(msg) <= 3000 || rec["failure"].(map[string]any)["message"] != msg {
		t.Fatalf("failure message was cut to %d bytes", len(msg))
	}
}
