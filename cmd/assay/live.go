package main

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/algal-assay/assay/harness/archive"
	"github.com/algal-assay/assay/harness/liverun"
	"github.com/algal-assay/assay/internal/workroot"
	"github.com/spf13/cobra"
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
		dir = filepath.Join(workroot.Git(), archive.DefaultDir)
	}
	return mode, dir, nil
}

// answerer is who answers the live backends of a run of this command:
// the --record mode, the archive and the command that records what is
// missing.
func (f liveFlags) answerer(c *cli, cmd *cobra.Command, args []string) (liverun.Archive, error) {
	mode, dir, err := f.resolve()
	if err != nil {
		return liverun.Archive{}, err
	}
	return liverun.Archive{Mode: mode, Dir: dir, Command: recordCommand(cmd, args), Stderr: c.stderr}, nil
}

// recordCommand is the command line that ran cmd, as a person types it
// again from the same directory, asking the server only what the archive
// lacks: the command, its arguments, every flag that was set, and
// --record missing.
func recordCommand(cmd *cobra.Command, args []string) string {
	parts := []string{cmd.CommandPath()}
	for _, a := range args {
		parts = append(parts, shellWord(a))
	}
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		switch {
		case fl.Name == "record":
		case fl.Value.Type() == "bool":
			if fl.Value.String() == "true" {
				parts = append(parts, "--"+fl.Name)
			} else {
				parts = append(parts, "--"+fl.Name+"=false")
			}
		default:
			vals := []string{fl.Value.String()}
			if sv, ok := fl.Value.(pflag.SliceValue); ok {
				vals = sv.GetSlice()
			}
			for _, v := range vals {
				parts = append(parts, "--"+fl.Name, shellWord(v))
			}
		}
	})
	return strings.Join(append(parts, "--record", "missing"), " ")
}

// shellWord quotes s for a POSIX shell when it holds anything beyond
// the characters paths and specs usually have.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
