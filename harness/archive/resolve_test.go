package archive

import (
	"path/filepath"
	"strings"
	"testing"
)

// Recording is refused under CI; replaying is not; a mode that is none
// of the three is an argument problem.
func TestResolveRefusesRecordingInCI(t *testing.T) {
	t.Setenv("CI", "true")
	if _, _, err := Resolve("missing", "arch"); err == nil || !strings.Contains(err.Error(), "CI is set") {
		t.Errorf("--record missing under CI: %v", err)
	}
	mode, dir, err := Resolve("none", "arch")
	if err != nil || mode != None || dir != "arch" {
		t.Errorf("--record none under CI: %v %q %v", mode, dir, err)
	}
	if _, _, err := Resolve("some", ""); err == nil {
		t.Error("--record some accepted")
	}
	t.Setenv("CI", "")
	root := func() string { return filepath.FromSlash("/repo") }
	if mode, dir, err := resolve("all", "", root); err != nil || mode != All || dir != filepath.Join("/repo", DefaultDir) {
		t.Errorf("--record all: %v %q %v", mode, dir, err)
	}
	if _, dir, err := resolve("none", "arch", root); err != nil || dir != "arch" {
		t.Errorf("--record none with a directory: %q %v", dir, err)
	}
}
