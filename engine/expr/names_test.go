package expr

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestReadNamesInEveryForm(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	list := filepath.Join(dir, "names.json")
	obj := filepath.Join(dir, "obj.json")
	if err := os.WriteFile(list, []byte(`["a",1,"b"]`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(obj, []byte(`{"a":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		arg, stdin string
		want       []string
	}{
		{"", "", nil},
		{"a,b", "", []string{"a", "b"}},
		{"@" + list, "", []string{"a", "b"}},
		{"@-", `["x"]`, []string{"x"}},
	} {
		got, err := ReadNames(c.arg, strings.NewReader(c.stdin))
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ReadNames(%q) = %v, %v; want %v", c.arg, got, err, c.want)
		}
	}
	var notList *NamesNotAList
	if _, err := ReadNames("@"+obj, nil); !errors.As(err, &notList) || notList.File != obj {
		t.Errorf("an object: %v", err)
	}
	if _, err := ReadNames("@-", strings.NewReader("[")); ErrorCode(err) != CodeParse {
		t.Errorf("bad JSON: %v", err)
	}
}
