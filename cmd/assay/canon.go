package main

import (
	"fmt"
	"io"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/spf13/cobra"
)

func newCanonCmd(c *cli) *cobra.Command {
	var digest bool
	cmd := &cobra.Command{
		Use:   "canon FILE|-",
		Short: "Print the canonical form of a JSON document (or, with --digest, its sha256 digest)",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			v, err := c.readJSON(args[0], 0)
			if err != nil {
				return err
			}
			if digest {
				d, err := canon.Digest(v)
				if err != nil {
					return err
				}
				_, err = fmt.Fprintln(c.stdout, d)
				return err
			}
			// Streamed: a large document's encoding is never held whole.
			if err := canon.Write(c.stdout, v); err != nil {
				return err
			}
			_, err = fmt.Fprintln(c.stdout)
			return err
		},
	}
	cmd.Flags().BoolVar(&digest, "digest", false, "print the sha256 digest of the canonical form instead")
	return cmd
}

func newDigestCmd(c *cli) *cobra.Command {
	return &cobra.Command{
		Use:   "digest MANIFEST|-",
		Short: "Print a manifest's normalized digest as upstream does: {\"digest\":\"sha256:...\"}",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			data, err := c.readAll(args[0], manifest.MaxManifestBytes)
			if err != nil {
				return err
			}
			m, err := manifest.Parse(data)
			if err != nil {
				return err
			}
			return c.emit(map[string]any{"digest": m.Digest}, "")
		},
	}
}

// readJSON reads one strict JSON document of at most maxBytes (0: the
// canon default) from a regular file, or from standard input when path is
// "-".
func (c *cli) readJSON(path string, maxBytes int) (any, error) {
	if path == "-" {
		return canon.ParseReader(c.stdin, maxBytes)
	}
	return canon.ReadFile(path, maxBytes)
}

// readAll is readJSON's byte-level sibling for verbs that parse themselves.
func (c *cli) readAll(path string, maxBytes int) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(io.LimitReader(c.stdin, int64(maxBytes)+1))
	}
	return canon.ReadBounded(path, maxBytes)
}
