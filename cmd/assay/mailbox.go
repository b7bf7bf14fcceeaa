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
		Long: "Mailboxes are host tools (mailbox.send.v1, mailbox.receive.v1) over the store directory.\n" +
			"A receive on an empty mailbox suspends the run; `assay mailbox send` then supplies the\n" +
			"message and `assay resume --write` re-issues the receive. Handles are opaque local identifiers.",
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
		Long: "Prints {\"name\",\"send\",\"receive\",\"maxMessages\",\"maxMessageBytes\"} (and Assay's older\n" +
			"\"pending\"/\"messageBytes\" spellings of the bounds). --max-messages is 1..1024 (default 64),\n" +
			"--max-message-bytes 1..250000 canonical bytes (default 65536); --pending and --message-bytes\n" +
			"are accepted as aliases. Creating an existing mailbox with the same bounds prints it again;\n" +
			"other bounds are refused.",
		Args: cobra.ExactArgs(1),
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
			return c.emit(map[string]any{"name": cfg.Name, "send": cfg.SendHandle, "receive": cfg.ReceiveHandle,
				"maxMessages": float64(cfg.MaxMessages), "maxMessageBytes": float64(cfg.MaxMessageBytes),
				"pending": float64(cfg.MaxMessages), "messageBytes": float64(cfg.MaxMessageBytes)}, "")
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
		Long: "Reads the message from FILE as upstream does (or stdin with -; or literal JSON with --value)\n" +
			"and prints {\"id\",\"duplicate\"}. With --idempotency-key sha256:... a repeated send is the same\n" +
			"delivery (duplicate:true, delivered once); without it every invocation is a new delivery.",
		Args: cobra.RangeArgs(1, 2),
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
			k := key
			if k == "" {
				if k, err = mailbox.NewKey(); err != nil {
					return err
				}
			} else if !canon.IsDigest(k) {
				return usagef("--idempotency-key must be sha256:<64 hex>")
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
		Long: "Prints {\"id\",\"message\"} and removes the message from the mailbox. An empty mailbox prints\n" +
			"{\"empty\":true,\"pending\":0} and exits 1.",
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			svc := mailbox.Open(*dir)
			n, err := svc.Pending(args[0])
			if err != nil {
				return err
			}
			if n == 0 {
				if err := c.emit(map[string]any{"empty": true, "pending": float64(0)}, ""); err != nil {
					return err
				}
				return reported(fmt.Errorf("mailbox is empty"))
			}
			id, msg, err := svc.Receive(args[0])
			if err != nil {
				return err
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
			out := make([]any, 0, len(boxes))
			for _, b := range boxes {
				out = append(out, map[string]any{"name": b.Name, "send": b.SendHandle, "receive": b.ReceiveHandle,
					"maxMessages": float64(b.MaxMessages), "maxMessageBytes": float64(b.MaxMessageBytes), "pending": float64(b.Pending)})
			}
			return c.emit(map[string]any{"mailboxes": out}, "")
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
