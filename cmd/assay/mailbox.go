package main

import (
	"fmt"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/mailbox"
	"github.com/algal-assay/assay/engine/store"
	"github.com/spf13/cobra"
)

func newMailboxCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mailbox",
		Short: "Create capability mailboxes, send external wakeups, receive, list, revoke handles",
	}
	var dir string
	cmd.PersistentFlags().StringVar(&dir, "dir", store.DefaultDir, "store `DIR` holding the mailboxes")
	cmd.AddCommand(newMailboxCreateCmd(c, &dir), newMailboxSendCmd(c, &dir), newMailboxReceiveCmd(c, &dir),
		newMailboxListCmd(c, &dir), newMailboxRevokeCmd(c, &dir))
	return cmd
}

// newMailboxCreateCmd is `assay mailbox create NAME`.
func newMailboxCreateCmd(c *cli, dir *string) *cobra.Command {
	var maxMessages, maxBytes int
	create := &cobra.Command{
		Use:   "create NAME",
		Short: "Admit a mailbox and print its send and receive handles",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if maxMessages < 1 || maxMessages > mailbox.MaxPending {
				return usagef("--max-messages must be 1..%d", mailbox.MaxPending)
			}
			if maxBytes < 1 || maxBytes > mailbox.MaxMessageBytes {
				return usagef("--max-message-bytes must be 1..%d", mailbox.MaxMessageBytes)
			}
			cfg, err := mailbox.Open(*dir).Create(args[0], maxMessages, maxBytes)
			if err != nil {
				return err
			}
			return c.emit(cfg.Created(), "")
		},
	}
	fl := create.Flags()
	fl.IntVar(&maxMessages, "max-messages", mailbox.DefaultPending, "maximum pending messages (1..1024)")
	fl.IntVar(&maxBytes, "max-message-bytes", mailbox.DefaultMessageBytes, "maximum canonical message bytes (1..250000)")
	fl.IntVar(&maxMessages, "pending", mailbox.DefaultPending, "alias of --max-messages")
	fl.IntVar(&maxBytes, "message-bytes", mailbox.DefaultMessageBytes, "alias of --max-message-bytes")
	_ = fl.MarkHidden("pending")
	_ = fl.MarkHidden("message-bytes")
	return create
}

// newMailboxSendCmd is `assay mailbox send CAP [FILE|-]`.
func newMailboxSendCmd(c *cli, dir *string) *cobra.Command {
	var key, literal string
	send := &cobra.Command{
		Use:   "send CAP [FILE|-]",
		Short: "Deliver a JSON message (read from FILE, - for stdin) through a send handle",
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(_ *cobra.Command, args []string) error {
			var v any
			var err error
			switch {
			case len(args) == 2 && literal != "":
				return usagef("mailbox send: give FILE or --value, not both")
			case len(args) == 2:
				v, err = c.readJSON(args[1], mailbox.MaxMessageBytes+1)
			case literal != "":
				v, err = canon.Parse([]byte(literal), mailbox.MaxMessageBytes+1)
			default:
				return usagef("mailbox send: give the message FILE (- for stdin) or --value JSON")
			}
			if err != nil {
				return err
			}
			k, err := mailbox.SendKey(key)
			if err != nil {
				return err
			}
			id, dup, err := mailbox.Open(*dir).Send(args[0], v, k)
			if err != nil {
				return err
			}
			return c.emit(map[string]any{"id": id, "duplicate": dup}, "")
		},
	}
	send.Flags().StringVar(&key, "idempotency-key", "", "sha256:... key making retries the same delivery")
	send.Flags().StringVar(&literal, "value", "", "the message as literal `JSON` instead of a file")
	return send
}

// newMailboxReceiveCmd is `assay mailbox receive CAP`.
func newMailboxReceiveCmd(c *cli, dir *string) *cobra.Command {
	receive := &cobra.Command{
		Use:   "receive CAP",
		Short: "Take the next message through a receive handle",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			id, msg, empty, err := mailbox.Open(*dir).ReceiveNext(args[0])
			if err != nil {
				return err
			}
			if empty {
				if err := c.emit(map[string]any{"empty": true, "pending": float64(0)}, ""); err != nil {
					return err
				}
				return reported(fmt.Errorf("mailbox is empty"))
			}
			return c.emit(map[string]any{"id": id, "message": msg}, "")
		},
	}
	return receive
}

// newMailboxListCmd is `assay mailbox list`.
func newMailboxListCmd(c *cli, dir *string) *cobra.Command {
	list := &cobra.Command{
		Use:   "list",
		Short: "List the store's mailboxes with their bounds and pending counts",
		Args:  cobra.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			boxes, err := mailbox.Open(*dir).List()
			if err != nil {
				return err
			}
			return c.emit(mailbox.Listing(boxes), "")
		},
	}
	return list
}

// newMailboxRevokeCmd is `assay mailbox revoke HANDLE`.
func newMailboxRevokeCmd(c *cli, dir *string) *cobra.Command {
	revoke := &cobra.Command{
		Use:   "revoke HANDLE",
		Short: "Disable one handle (the mailbox's other handle keeps working)",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if err := mailbox.Open(*dir).Revoke(args[0]); err != nil {
				return err
			}
			return c.emit(map[string]any{"revoked": args[0]}, "")
		},
	}
	return revoke
}
