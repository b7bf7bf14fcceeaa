package golden

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// Under -update, Check writes the output, directory and all; afterwards
// Compare passes on the same bytes and names the first line that differs
// in any other.
func TestCheckThenCompare(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "render", "page.golden")
	defer func(old bool) { *update = old }(*update)
	*update = true
	Check(t, path, []byte("one\ntwo\nthree\n"))
	*update = false
	Check(t, path, []byte("one\ntwo\nthree\n"))
	if err := Compare(path, []byte("one\ntwo\nthree\n")); err != nil {
		t.Fatalf("same bytes: %v", err)
	}
	cases := []struct {
		name, got, want string
	}{
		{"changed line", "one\nTWO\nthree\n", `page.golden differs from the output at line 2 (rerun the test with -update to rewrite it)` + "\n got: \"TWO\\n\"\nwant: \"two\\n\""},
		{"missing newline", "one\ntwo\nthree", "line 3 (rerun the test with -update to rewrite it)\n got: \"three\"\nwant: \"three\\n\""},
		{"longer output", "one\ntwo\nthree\nfour\n", "line 4 (rerun the test with -update to rewrite it)\n got: \"four\\n\"\nwant: \"\""},
		{"shorter output", "one\n", "line 2 (rerun the test with -update to rewrite it)\n got: \"\"\nwant: \"two\\n\""},
	}
	for _, tc := range cases {
		err := Compare(path, []byte(tc.got))
		if err == nil || !strings.HasSuffix(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error ending %q", tc.name, err, tc.want)
		}
	}
	if err := Compare(filepath.Join(filepath.Dir(path), "absent.golden"), nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing golden file: got %v", err)
	}
}
