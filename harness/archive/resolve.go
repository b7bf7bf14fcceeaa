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
	mode, err := ParseMode(record)
	if err != nil {
		return "", "", err
	}
	if mode != None && os.Getenv("CI") == "true" {
		return "", "", fmt.Errorf("--record %s: CI is set; CI replays the committed archive (--record none) and never calls a live model", mode)
	}
	if dir == "" {
		dir = filepath.Join(workroot.Git(), DefaultDir)
	}
	return mode, dir, nil
}
