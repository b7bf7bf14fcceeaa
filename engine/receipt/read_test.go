package receipt

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/fault"
)

func TestReadArgsWantsOneObject(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	obj := filepath.Join(dir, "args.json")
	list := filepath.Join(dir, "list.json")
	if err := os.WriteFile(obj, []byte(`{"in":{"q":"x"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(list, []byte(`[1]`), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadArgs(obj, nil)
	if err != nil || !reflect.DeepEqual(got, map[string]any{"in": map[string]any{"q": "x"}}) {
		t.Fatalf("file: %v, %v", got, err)
	}
	got, err = ReadArgs("-", strings.NewReader(`{"a":1}`))
	if err != nil || !reflect.DeepEqual(got, map[string]any{"a": 1.0}) {
		t.Fatalf("stdin: %v, %v", got, err)
	}
	_, err = ReadArgs(list, nil)
	if fault.CodeOf(err) != fault.Parse || !strings.Contains(err.Error(), list+": args must be an object") {
		t.Errorf("array: %v", err)
	}
	_, err = ReadFile(list)
	if fault.CodeOf(err) != fault.Parse || !strings.Contains(err.Error(), list+": receipt must be an object") {
		t.Errorf("receipt array: %v", err)
	}
}

// A check failure that names no file names the file it was read from.
func TestCheckFileNamesTheFile(t *testing.T) {
	t.Parallel()
	err := CheckFile(map[string]any{"contract": "algal.run.v1"}, "r.json")
	e, ok := fault.As(err)
	if !ok || e.File != "r.json" {
		t.Fatalf("err %v, want one naming r.json", err)
	}
}

func TestComparisonSaysWhetherTheReceiptsAreTheSame(t *testing.T) {
	t.Parallel()
	a := map[string]any{"digest": "sha256:a", "outcome": "complete"}
	v, same := Comparison(a, a)
	if !same || v["same"] != true || len(v["mismatches"].([]any)) != 0 || v["a"] != "sha256:a" {
		t.Errorf("same receipt: %v", v)
	}
	b := map[string]any{"digest": "sha256:b", "outcome": "failed"}
	v, same = Comparison(a, b)
	if same || v["same"] != false || len(v["mismatches"].([]any)) == 0 || v["b"] != "sha256:b" {
		t.Errorf("different receipts: %v", v)
	}
}
