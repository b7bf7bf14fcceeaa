package workload

import (
	"fmt"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/fault"
)

// One big string aliased a few times is a small file that stands for
// gigabytes once encoded; the byte bound stops it at load, naming the
// alias that tipped it, whether the aliases sit in args or responses.
func TestAliasBytesAreBounded(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 1<<20)
	aliases := func(indent string) string {
		var b strings.Builder
		for i := range 12 {
			fmt.Fprintf(&b, "%sk%d: *big\n", indent, i)
		}
		return b.String()
	}
	head := "name: tiny\nrevision: 2\nsystems:\n  - id: one\n    manifest: single.algal.json\n    executors: { cheap: cases }\n"
	tests := []struct {
		name, body, path string
	}{
		{"in args", head + "cases:\n  - id: a\n    args: { ticket: &big " + big + " }\n    expect:\n" + aliases("      ") + "    responses:\n      cheap: { route: billing }\n", "cases[0].expect.k6"},
		{"in responses", head + "cases:\n  - id: a\n    args: { ticket: &big " + big + " }\n    expect: { queue: billing }\n    responses:\n      cheap:\n        route: billing\n" + aliases("        "), "cases[0].responses.cheap.k6"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeWorkload(t, "bomb.bench.yaml", tt.body)
			_, err := Load(p)
			if err == nil {
				t.Fatal("a file whose aliases expand to 13 MiB loaded")
			}
			e, ok := err.(*fault.Error)
			if !ok || e.Code != CodeWorkload || !strings.Contains(e.Message, "aliases expand this file to more than") {
				t.Fatalf("error %v is not the byte bound", err)
			}
			// The bound is 8 MiB: the anchor and six aliases fit, the
			// seventh (k6) makes 8 MiB plus the rest of the file.
			lines := strings.Split(tt.body, "\n")
			if e.Line < 1 || e.Line > len(lines) || !strings.Contains(lines[e.Line-1], "k6: *big") || e.Column != strings.Index(lines[e.Line-1], "*big")+1 {
				t.Fatalf("error at %d:%d, want the k6 alias; %v", e.Line, e.Column, err)
			}
			if e.Path != tt.path {
				t.Errorf("path %q, want %q", e.Path, tt.path)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("bomb.bench.yaml:%d:%d", e.Line, e.Column)) {
				t.Fatalf("error %q does not name file:line:col", err)
			}
		})
	}
}
