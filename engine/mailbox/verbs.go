package mailbox

import (
	"fmt"

	"github.com/algal-assay/assay/engine/canon"
)

// What the mailbox verbs (`assay mailbox create|send|receive|list`) print
// and the choices they make before calling the service.

// Created is what `assay mailbox create` prints: the name, both handles
// and the bounds, under upstream's names and under Assay's older
// "pending" and "messageBytes".
func (c Config) Created() map[string]any {
	return map[string]any{"name": c.Name, "send": c.SendHandle, "receive": c.ReceiveHandle,
		"maxMessages": float64(c.MaxMessages), "maxMessageBytes": float64(c.MaxMessageBytes),
		"pending": float64(c.MaxMessages), "messageBytes": float64(c.MaxMessageBytes)}
}

// Listing is what `assay mailbox list` prints: {"mailboxes":[{name, send,
// receive, maxMessages, maxMessageBytes, pending}]}.
func Listing(boxes []Listed) map[string]any {
	out := make([]any, 0, len(boxes))
	for _, b := range boxes {
		out = append(out, map[string]any{"name": b.Name, "send": b.SendHandle, "receive": b.ReceiveHandle,
			"maxMessages": float64(b.MaxMessages), "maxMessageBytes": float64(b.MaxMessageBytes), "pending": float64(b.Pending)})
	}
	return map[string]any{"mailboxes": out}
}

// SendKey is a send's idempotency key: the one given (a sha256: digest:
// a repeated send is the same delivery), else a new one, so that every
// invocation is a new delivery. A key of another shape is an argument
// problem (a plain error).
func SendKey(given string) (string, error) {
	if given == "" {
		return NewKey()
	}
	if !canon.IsDigest(given) {
		return "", fmt.Errorf("--idempotency-key must be sha256:<64 hex>")
	}
	return given, nil
}

// ReceiveNext takes the next message through a receive handle; empty is
// true, and nothing is taken, when none is pending.
func (s *Service) ReceiveNext(handle string) (id string, message any, empty bool, err error) {
	n, err := s.Pending(handle)
	if err != nil {
		return "", nil, false, err
	}
	if n == 0 {
		return "", nil, true, nil
	}
	id, message, err = s.Receive(handle)
	return id, message, false, err
}
