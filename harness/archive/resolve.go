package archive

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/algal-assay/assay/internal/workroot"
)

// Resolve checks the --record mode a command was given and finds its
// archive: dir, else receipts/ at the git root. Recording is refused in
// CI: CI replays what a person recorded and committed, and never holds a
// key. Its errors are argument problems (plain errors).
func Resolve(record, dir string) (Mode, string, error) {
	return resolve(record, dir, workroot.Git)
}

// resolve is Resolve with the git root's finder handed in, so a test
// never reads the checkout it runs in (whose .git changes under it, and
// with it the test cache's inputs).
func resolve(record, dir string, gitRoot func() string) (Mode, string, error) {
	mode, err := ParseMode(record)
	if err != nil {
		return "", "", err
	}
	if mode != None && os.Getenv("CI") == "true" {
		return "", "", fmt.Errorf("--record %s: CI is set; CI replays the committed archive (--record none) and never calls a live model", mode)
	}
	if dir == "" {
		dir = filepath.Join(gitRoot(), DefaultDir)
	}
	return mode, dir, nil
}
