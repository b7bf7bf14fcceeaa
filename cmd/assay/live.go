package main

import (
	"github.com/algal-assay/assay/harness/archive"
	"github.com/algal-assay/assay/harness/liverun"
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

// resolve checks the mode and finds the archive (archive.Resolve).
func (f liveFlags) resolve() (archive.Mode, string, error) {
	return archive.Resolve(f.record, f.archive)
}

// answerer is who answers the live backends of a run of this command:
// the --record mode, the archive and the command that records what is
// missing.
func (f liveFlags) answerer(c *cli, cmd *cobra.Command, args []string) (liverun.Archive, error) {
	mode, dir, err := f.resolve()
	if err != nil {
		return liverun.Archive{}, err
	}
	return liverun.Archive{Mode: mode, Dir: dir, Command: liverun.RecordCommand(cmd.CommandPath(), args, cmd.Flags()), Stderr: c.stderr}, nil
}
