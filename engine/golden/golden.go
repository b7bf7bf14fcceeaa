// Package golden is test support for golden files: a test compares its
// output with a file kept in the repository, and the same test run with
// -update rewrites that file from the current output instead.
//
// Importing the package registers the -update flag, once per test binary;
// before it, the tests of ci/diff, report, cmd/assay and
// engine/effect/openai each kept their own flag and copy of these lines.
package golden

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files from the current output instead of comparing with them")

// Check compares got with the golden file at path and fails t when the
// bytes differ or the file is missing. Under -update it writes got to
// path instead, creating the directory when needed.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := Write(path, got); err != nil {
			t.Fatal(err)
		}
		return
	}
	err := Compare(path, got)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		t.Fatalf("%v (rerun the test with -update to create it)", err)
	case err != nil:
		t.Error(err)
	}
}

// Write writes got to the golden file at path, creating its directory.
func Write(path string, got []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, got, 0o644)
}

// Compare returns nil when the golden file at path holds exactly got. Else
// it returns the read error, or an error naming the file and the first
// line where the two differ, with both versions of that line.
func Compare(path string, got []byte) error {
	want, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if bytes.Equal(got, want) {
		return nil
	}
	line, g, w := firstDifference(got, want)
	return fmt.Errorf("%s differs from the output at line %d (rerun the test with -update to rewrite it)\n got: %q\nwant: %q", path, line, g, w)
}

// firstDifference returns the 1-based number of the first line where got
// and want differ, and that line of each ("" past the end of one).
func firstDifference(got, want []byte) (int, string, string) {
	gl, wl := bytes.SplitAfter(got, []byte("\n")), bytes.SplitAfter(want, []byte("\n"))
	for i := 0; ; i++ {
		var g, w []byte
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if !bytes.Equal(g, w) {
			return i + 1, string(g), string(w)
		}
	}
}
