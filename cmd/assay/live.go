package main

import (
	"os"
	"path/filepath"

	"github.com/algal-assay/assay/harness/archive"
	"github.com/spf13/pflag"
)

// liveFlags choose who answers live model backends (openai:<model>).
type liveFlags struct {
	record  string
	archive string
}

func addLiveFlags(fs *pflag.FlagSet, f *liveFlags) {
	fs.StringVar(&f.record, "record", "none", "live backends: none (only the archive answers), missing (ask the server what the archive lacks) or all (ask the server everything)")
	fs.StringVar(&f.archive, "archive", "", "receipt archive `DIR` live answers are replayed from and recorded to (default receipts/ at the repository root)")
}

// resolve checks the mode and finds the archive. Recording is refused in
// CI: CI replays what a person recorded and committed, and never holds a
// key.
func (f liveFlags) resolve() (archive.Mode, string, error) {
	mode, err := archive.ParseMode(f.record)
	if err != nil {
		return "", "", usagef("%v", err)
	}
	if mode != archive.None && os.Getenv("CI") == "true" {
		return "", "", usagef("--record %s: CI is set; CI replays the committed archive (--record none) and never calls a live model", mode)
	}
	dir := f.archive
	if dir == "" {
		dir = filepath.Join(repoRoot(), archive.DefaultDir)
	}
	return mode, dir, nil
}

// repoRoot is the nearest directory at or above the working directory
// holding .git, else the working directory.
func repoRoot() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return wd
		}
	}
}
