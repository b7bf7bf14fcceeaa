package main

import (
	"fmt"
	"io"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/spf13/cobra"
)

func init() {
	register(func(c *cli) *cobra.Command {
		return &cobra.Command{
			Use:   "canon FILE|-",
			Short: "Print the canonical form of a JSON document",
			Args:  cobra.ExactArgs(1),
			RunE: func(_ *cobra.Command, args []string) error {
				v, err := c.readJSON(args[0])
				if err != nil {
					return err
				}
				b, err := canon.Encode(v)
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(c.stdout, "%s\n", b)
				return err
			},
		}
	})
	register(func(c *cli) *cobra.Command {
		return &cobra.Command{
			Use:   "digest FILE|-",
			Short: "Print the sha256 digest of a JSON document's canonical form",
			Args:  cobra.ExactArgs(1),
			RunE: func(_ *cobra.Command, args []string) error {
				v, err := c.readJSON(args[0])
				if err != nil {
					return err
				}
				d, err := canon.Digest(v)
				if err != nil {
					return err
				}
				_, err = fmt.Fprintln(c.stdout, d)
				return err
			},
		}
	})
}

// readJSON reads one strict JSON document from a bounded regular file, or
// from standard input when path is "-".
func (c *cli) readJSON(path string) (any, error) {
	if path == "-" {
		return canon.ParseReader(c.stdin, 0)
	}
	return canon.ReadFile(path, 0)
}

// readAll is readJSON's byte-level sibling for verbs that parse themselves.
func (c *cli) readAll(path string, maxBytes int) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(io.LimitReader(c.stdin, int64(maxBytes)+1))
	}
	return canon.ReadBounded(path, maxBytes)
}
