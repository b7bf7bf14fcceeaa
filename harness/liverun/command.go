package liverun

import (
	"strings"

	"github.com/spf13/pflag"
)

// RecordCommand is the command line that ran the command at path (`assay
// bench`) with args and flags, as a person types it again from the same
// directory asking the server only what the archive lacks: the command,
// its arguments, every flag that was set, and --record missing.
func RecordCommand(path string, args []string, flags *pflag.FlagSet) string {
	parts := []string{path}
	for _, a := range args {
		parts = append(parts, shellWord(a))
	}
	flags.Visit(func(fl *pflag.Flag) {
		parts = append(parts, flagWords(fl)...)
	})
	return strings.Join(append(parts, "--record", "missing"), " ")
}

// flagWords spells one set flag again; --record is left out (the command
// asks for missing).
func flagWords(fl *pflag.Flag) []string {
	switch {
	case fl.Name == "record":
		return nil
	case fl.Value.Type() == "bool":
		if fl.Value.String() == "true" {
			return []string{"--" + fl.Name}
		}
		return []string{"--" + fl.Name + "=false"}
	}
	vals := []string{fl.Value.String()}
	if sv, ok := fl.Value.(pflag.SliceValue); ok {
		vals = sv.GetSlice()
	}
	var words []string
	for _, v := range vals {
		words = append(words, "--"+fl.Name, shellWord(v))
	}
	return words
}

// shellWord quotes s for a POSIX shell when it holds anything beyond
// the characters paths and specs usually have.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
