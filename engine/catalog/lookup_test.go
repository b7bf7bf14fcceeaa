package catalog

import (
	"reflect"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/store"
)

func TestLookupsSayWhatIsMissing(t *testing.T) {
	t.Parallel()
	st, err := store.OpenFileStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ref, err := st.Put(store.Values, map[string]any{"a": 1.0})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := Value(st, ref); err != nil || !reflect.DeepEqual(v, map[string]any{"a": 1.0}) {
		t.Errorf("stored value: %v, %v", v, err)
	}
	if err := st.SetSlot("prod", "v1"); err != nil {
		t.Fatal(err)
	}
	if v, err := Slot(st, "prod"); err != nil || v != "v1" {
		t.Errorf("slot: %v, %v", v, err)
	}
	missing := "sha256:" + strings.Repeat("0", 64)
	for name, err := range map[string]error{
		"a manifest (the digest is a value's)": second(Manifest(st, ref)),
		"a value":                              second(Value(st, missing)),
		"a slot":                               second(Slot(st, "staging")),
	} {
		if fault.CodeOf(err) != fault.StoreMiss {
			t.Errorf("missing %s: %v", name, err)
		}
	}
}

func second(_ any, err error) error { return err }
