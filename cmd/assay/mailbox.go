package main

import (
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/mailbox"
	"github.com/algal-assay/assay/engine/store"
	"github.com/spf13/cobra"
)

func init() {
	register(func(c *cli) *cobra.Command {
		cmd := &cobra.Command{
			Use:   "mailbox",
			Short: "Create capability mailboxes, send external wakeups, revoke handles",
			Long: "Mailboxes are host tools (mailbox.send.v1, mailbox.receive.v1) over the store directory.\n" +
				"A receive on an empty mailbox suspends the run; `assay mailbox send` then supplies the\n" +
				"message and `assay resume` re-issues the receive. Handles are opaque local identifiers.",
		}
		var dir string
		var pending, msgBytes int
		create := &cobra.Command{
			Use:   "create NAME",
			Short: "Admit a mailbox and print its send and receive handles",
			Long: "Prints {\"name\",\"send\",\"receive\",\"pending\",\"messageBytes\"}. --pending is 1..1024\n" +
				"(default 64), --message-bytes 1..250000 canonical bytes (default 65536). Creating an\n" +
				"existing mailbox with the same bounds prints it again; other bounds are refused.",
			Args: cobra.ExactArgs(1),
			RunE: func(_ *cobra.Command, args []string) error {
				if pending < 1 || pending > mailbox.MaxPending {
					return usagef("--pending must be 1..%d", mailbox.MaxPending)
				}
				if msgBytes < 1 || msgBytes > mailbox.MaxMessageBytes {
					return usagef("--message-bytes must be 1..%d", mailbox.MaxMessageBytes)
				}
				cfg, err := mailbox.Open(dir).Create(args[0], pending, msgBytes)
				if err != nil {
					return err
				}
				return c.printCanonical(map[string]any{"name": cfg.Name, "send": cfg.SendHandle, "receive": cfg.ReceiveHandle,
					"pending": float64(cfg.MaxMessages), "messageBytes": float64(cfg.MaxMessageBytes)})
			},
		}
		create.Flags().StringVar(&dir, "dir", store.DefaultDir, "store directory")
		create.Flags().IntVar(&pending, "pending", mailbox.DefaultPending, "maximum pending messages (1..1024)")
		create.Flags().IntVar(&msgBytes, "message-bytes", mailbox.DefaultMessageBytes, "maximum canonical message bytes (1..250000)")

		var sdir, key string
		send := &cobra.Command{
			Use:   "send HANDLE JSON",
			Short: "Deliver a JSON message through a send handle",
			Long: "Prints {\"id\",\"duplicate\"}. With --idempotency-key sha256:... a repeated send is the same\n" +
				"delivery (duplicate:true, delivered once); without it every invocation is a new delivery.",
			Args: cobra.ExactArgs(2),
			RunE: func(_ *cobra.Command, args []string) error {
				v, err := canon.Parse([]byte(args[1]), mailbox.MaxMessageBytes+1)
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
				id, dup, err := mailbox.Open(sdir).Send(args[0], v, k)
				if err != nil {
					return err
				}
				return c.printCanonical(map[string]any{"id": id, "duplicate": dup})
			},
		}
		send.Flags().StringVar(&sdir, "dir", store.DefaultDir, "store directory")
		send.Flags().StringVar(&key, "idempotency-key", "", "sha256:... key making retries the same delivery")

		var rdir string
		revoke := &cobra.Command{
			Use:   "revoke HANDLE",
			Short: "Disable one handle (the mailbox's other handle keeps working)",
			Args:  cobra.ExactArgs(1),
			RunE: func(_ *cobra.Command, args []string) error {
				if err := mailbox.Open(rdir).Revoke(args[0]); err != nil {
					return err
				}
				return c.printCanonical(map[string]any{"revoked": args[0]})
			},
		}
		revoke.Flags().StringVar(&rdir, "dir", store.DefaultDir, "store directory")
		cmd.AddCommand(create, send, revoke)
		return cmd
	})
}
