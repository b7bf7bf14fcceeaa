package mailbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/fault/faulttest"
)

// sentOne opens a service in a fresh directory, creates mailbox box (4
// messages of at most 100 bytes) and sends value into it under a new key.
func sentOne(t *testing.T, box string, value any) (svc *Service, c Config, k, id string) {
	t.Helper()
	svc = Open(t.TempDir())
	c, err := svc.Create(box, 4, 100)
	if err != nil {
		t.Fatal(err)
	}
	k = key(t)
	if id, _, err = svc.Send(c.SendHandle, value, k); err != nil {
		t.Fatal(err)
	}
	return svc, c, k, id
}

// pendingMarker returns the pending marker path for key, or "".
func pendingMarker(t *testing.T, root, box, key string) string {
	t.Helper()
	hex, _ := canon.DigestHex(key)
	entries, _ := os.ReadDir(filepath.Join(root, "mailboxes", box, "pending"))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), hex+".json") {
			return filepath.Join(root, "mailboxes", box, "pending", e.Name())
		}
	}
	return ""
}

// A send interrupted after its message claim but before its delivery
// marker is completed by a retry with the same idempotency key: the retry
// is the same delivery, and it must actually arrive.
func TestRetryCompletesInterruptedSend(t *testing.T) {
	t.Parallel()
	svc, c, k, id := sentOne(t, "crash", "hello")
	root := svc.root
	marker := pendingMarker(t, root, "crash", k)
	if marker == "" {
		t.Fatal("no pending marker after send")
	}
	os.Remove(marker) // the crash: claim retained, marker never written
	id2, dup, err := svc.Send(c.SendHandle, "hello", k)
	if err != nil || id2 != id || !dup {
		t.Fatalf("retry: %v %v %s", err, dup, id2)
	}
	got, msg, err := svc.Receive(c.ReceiveHandle)
	if err != nil || got != id || msg != "hello" {
		t.Fatalf("the retried delivery never arrived: %v %v", err, msg)
	}
	// Once consumed, a retry stays a duplicate and delivers nothing new.
	if _, dup, err := svc.Send(c.SendHandle, "hello", k); err != nil || !dup {
		t.Fatalf("retry after receive: %v %v", err, dup)
	}
	_, _, err = svc.Receive(c.ReceiveHandle)
	faulttest.Want(t, err, fault.EffectSuspended)
}

// Pending and consumed evidence for one delivery (a receive interrupted
// between its two steps) is uncertain: receive fails closed instead of
// delivering the message a second time.
func TestReceiveRefusesUncertainDelivery(t *testing.T) {
	t.Parallel()
	svc, c, k, _ := sentOne(t, "half", "once")
	root := svc.root
	marker := pendingMarker(t, root, "half", k)
	saved, _ := os.ReadFile(marker)
	if _, _, err := svc.Receive(c.ReceiveHandle); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(marker, saved, 0o644); err != nil { // the pending marker survived the crash
		t.Fatal(err)
	}
	_, _, err := svc.Receive(c.ReceiveHandle)
	faulttest.Want(t, err, fault.IOFailed)
	if _, err := os.Stat(marker); err != nil {
		t.Fatal("refusal must leave the recovery evidence in place")
	}
}

// A delivery marker without its message claim is foreign state: a send
// with that key refuses rather than claiming over it.
func TestSendRefusesMarkerWithoutClaim(t *testing.T) {
	t.Parallel()
	svc, c, k, _ := sentOne(t, "orphan", "x")
	root := svc.root
	hex, _ := canon.DigestHex(k)
	os.Remove(filepath.Join(root, "mailboxes", "orphan", "messages", hex+".json"))
	_, _, err := svc.Send(c.SendHandle, "x", k)
	faulttest.Want(t, err, fault.DigestMismatch)
}

// Delivery order stays first in, first out even when retained message
// claims are garbage collected by the host (a lifecycle responsibility).
func TestFIFOSurvivesClaimCollection(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	svc := Open(root)
	c, _ := svc.Create("gc", 8, 100)
	// Keys chosen so that name order among equal sequence numbers would
	// put the newest delivery first.
	keys := map[string]string{"a": "1", "b": "2", "c": "f", "d": "0"}
	send := func(v string) {
		if _, _, err := svc.Send(c.SendHandle, v, "sha256:"+strings.Repeat(keys[v], 64)); err != nil {
			t.Fatal(err)
		}
	}
	send("a")
	send("b")
	send("c")
	if _, msg, _ := svc.Receive(c.ReceiveHandle); msg != "a" {
		t.Fatalf("first receive %v", msg)
	}
	// The host collects the consumed delivery's claim and marker.
	for _, sub := range []string{"messages", "consumed"} {
		dir := filepath.Join(root, "mailboxes", "gc", sub)
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if _, err := os.Stat(filepath.Join(root, "mailboxes", "gc", "consumed", e.Name())); err == nil {
				os.Remove(filepath.Join(dir, e.Name()))
			}
		}
	}
	send("d")
	for _, want := range []string{"b", "c", "d"} {
		if _, msg, err := svc.Receive(c.ReceiveHandle); err != nil || msg != want {
			t.Fatalf("want %s, got %v (%v)", want, msg, err)
		}
	}
}
