package mailbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/fault/faulttest"
)

func key(t testing.TB) string {
	k, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestCreateSendReceive(t *testing.T) {
	t.Parallel()
	svc := Open(t.TempDir())
	c, err := svc.Create("inbox", 4, 100)
	if err != nil {
		t.Fatal(err)
	}
	if c.SendHandle == c.ReceiveHandle || !strings.HasPrefix(c.SendHandle, "cap:mailbox-send:sha256:") ||
		!strings.HasPrefix(c.ReceiveHandle, "cap:mailbox-receive:sha256:") {
		t.Fatalf("handles: %+v", c)
	}
	// Creating again with the same bounds returns the same mailbox;
	// different bounds are refused.
	again, err := svc.Create("inbox", 4, 100)
	if err != nil || again != c {
		t.Fatalf("re-create: %v %+v", err, again)
	}
	_, err = svc.Create("inbox", 5, 100)
	faulttest.Want(t, err, fault.Parse)
	// Receive on empty: suspended, with the handle as wake evidence.
	_, _, err = svc.Receive(c.ReceiveHandle)
	faulttest.Want(t, err, fault.EffectSuspended)
	if w := err.(*fault.Error).Wake; len(w) != 1 || w[0] != c.ReceiveHandle {
		t.Fatalf("wake: %v", w)
	}
	// Deliveries are first in, first out, whatever their keys.
	var ids []string
	for _, v := range []any{"first", map[string]any{"n": 2.0}, nil} {
		id, dup, err := svc.Send(c.SendHandle, v, key(t))
		if err != nil || dup {
			t.Fatalf("send: %v %v", err, dup)
		}
		ids = append(ids, id)
	}
	n, _ := svc.Pending(c.ReceiveHandle)
	if n != 3 {
		t.Fatalf("pending %d", n)
	}
	for i, want := range []string{`"first"`, `{"n":2}`, `null`} {
		id, msg, err := svc.Receive(c.ReceiveHandle)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := canon.Encode(msg)
		if id != ids[i] || string(b) != want {
			t.Fatalf("receive %d: %s %s", i, id, b)
		}
	}
	_, _, err = svc.Receive(c.ReceiveHandle)
	faulttest.Want(t, err, fault.EffectSuspended)
	// Handles are class-checked.
	_, _, err = svc.Send(c.ReceiveHandle, 1.0, key(t))
	faulttest.Want(t, err, fault.TypeMismatch)
	_, _, err = svc.Receive("cap:mailbox-receive:sha256:" + strings.Repeat("0", 64))
	faulttest.Want(t, err, fault.CapabilityDenied)
	_, _, err = svc.Receive("not-a-handle")
	faulttest.Want(t, err, fault.TypeMismatch)
}

func TestIdempotentSendDeliveredOnce(t *testing.T) {
	t.Parallel()
	svc := Open(t.TempDir())
	c, _ := svc.Create("once", 8, 1000)
	k := key(t)
	id1, dup1, err := svc.Send(c.SendHandle, "hello", k)
	if err != nil || dup1 {
		t.Fatal(err, dup1)
	}
	id2, dup2, err := svc.Send(c.SendHandle, "hello", k)
	if err != nil || !dup2 || id2 != id1 {
		t.Fatalf("repeat send: %v dup=%v %s vs %s", err, dup2, id2, id1)
	}
	// The same key with another message is a conflict, not a delivery.
	_, _, err = svc.Send(c.SendHandle, "other", k)
	faulttest.Want(t, err, fault.DigestMismatch)
	if n, _ := svc.Pending(c.ReceiveHandle); n != 1 {
		t.Fatalf("pending %d, want 1", n)
	}
	if _, _, err := svc.Receive(c.ReceiveHandle); err != nil {
		t.Fatal(err)
	}
	// Even after consumption the key stays claimed: a retry is not a
	// second delivery.
	_, dup3, err := svc.Send(c.SendHandle, "hello", k)
	if err != nil || !dup3 {
		t.Fatalf("retry after receive: %v %v", err, dup3)
	}
	_, _, err = svc.Receive(c.ReceiveHandle)
	faulttest.Want(t, err, fault.EffectSuspended)
	_, _, err = svc.Send(c.SendHandle, "x", "sha256:nope")
	faulttest.Want(t, err, fault.Parse)
}

func TestBounds(t *testing.T) {
	t.Parallel()
	svc := Open(t.TempDir())
	for _, b := range [][2]int{{0, 10}, {1025, 10}, {1, 0}, {1, 250_001}} {
		_, err := svc.Create("box", b[0], b[1])
		faulttest.Want(t, err, fault.BudgetExhausted)
	}
	_, err := svc.Create("Bad Name", 1, 1)
	faulttest.Want(t, err, fault.Parse)
	if _, err := svc.Create("edge", 1024, 250_000); err != nil {
		t.Fatalf("upper bounds are admitted: %v", err)
	}
	c, _ := svc.Create("small", 2, 10)
	// Message bytes: the canonical size, exact limit accepted.
	if _, _, err := svc.Send(c.SendHandle, "12345678", key(t)); err != nil {
		t.Fatalf("10 canonical bytes fit: %v", err)
	}
	_, _, err = svc.Send(c.SendHandle, "123456789", key(t))
	faulttest.Want(t, err, fault.BudgetExhausted)
	if _, _, err := svc.Send(c.SendHandle, 1.0, key(t)); err != nil {
		t.Fatal(err)
	}
	_, _, err = svc.Send(c.SendHandle, 2.0, key(t))
	faulttest.Want(t, err, fault.MailboxFull)
	// Receiving frees a slot.
	if _, _, err := svc.Receive(c.ReceiveHandle); err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.Send(c.SendHandle, 2.0, key(t)); err != nil {
		t.Fatal(err)
	}
}

func TestRevoke(t *testing.T) {
	t.Parallel()
	svc := Open(t.TempDir())
	c, _ := svc.Create("rv", 4, 100)
	if _, _, err := svc.Send(c.SendHandle, "m", key(t)); err != nil {
		t.Fatal(err)
	}
	if err := svc.Revoke(c.SendHandle); err != nil {
		t.Fatal(err)
	}
	_, _, err := svc.Send(c.SendHandle, "m2", key(t))
	faulttest.Want(t, err, fault.CapabilityDenied)
	// The other handle keeps working.
	if _, _, err := svc.Receive(c.ReceiveHandle); err != nil {
		t.Fatalf("receive after send revoke: %v", err)
	}
	faulttest.Want(t, svc.Revoke(c.SendHandle), fault.CapabilityDenied)
	// Re-creating never mints fresh authority over a revoked handle.
	again, err := svc.Create("rv", 4, 100)
	if err != nil || again.SendHandle != c.SendHandle {
		t.Fatalf("re-create: %v", err)
	}
	_, _, err = svc.Send(again.SendHandle, "m3", key(t))
	faulttest.Want(t, err, fault.CapabilityDenied)
}

func TestTamperedStateIsRefused(t *testing.T) {
	t.Parallel()
	svc, c, k, _ := sentOne(t, "tb", "orig")
	root := svc.root
	hex, _ := canon.DigestHex(k)
	claim := filepath.Join(root, "mailboxes", "tb", "messages", hex+".json")
	data, _ := os.ReadFile(claim)
	if err := os.WriteFile(claim, []byte(strings.Replace(string(data), "orig", "evil", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := svc.Receive(c.ReceiveHandle)
	faulttest.Want(t, err, fault.DigestMismatch)
	// A FIFO planted as the capability record is refused, not waited on.
	_, hx, _ := ParseHandle(c.SendHandle, Send)
	capPath := filepath.Join(root, "capabilities", hx+".json")
	os.Remove(capPath)
	if err := syscall.Mkfifo(capPath, 0o644); err != nil {
		t.Skip(err)
	}
	_, _, err = svc.Send(c.SendHandle, "x", key(t))
	faulttest.Want(t, err, fault.IOFailed)
}

func TestConcurrentSendsWithOneKey(t *testing.T) {
	t.Parallel()
	svc := Open(t.TempDir())
	c, _ := svc.Create("race", 64, 100)
	k := key(t)
	var wg sync.WaitGroup
	dups := make([]bool, 8)
	for i := range dups {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, d, err := svc.Send(c.SendHandle, "same", k)
			if err != nil {
				t.Error(err)
			}
			dups[i] = d
		}(i)
	}
	wg.Wait()
	fresh := 0
	for _, d := range dups {
		if !d {
			fresh++
		}
	}
	if n, _ := svc.Pending(c.ReceiveHandle); fresh != 1 || n != 1 {
		t.Fatalf("%d fresh deliveries, %d pending; want 1 and 1", fresh, n)
	}
}

func TestToolsExecutor(t *testing.T) {
	t.Parallel()
	svc := Open(t.TempDir())
	c, _ := svc.Create("tools", 4, 1000)
	tools := NewTools(svc)
	req := func(name string, in map[string]any) (effect.Request, string) {
		r := effect.Request{"contract": effect.ToolContract, "path": "wait", "tool": name, "effect": "write", "inputs": in}
		d, _ := effect.RequestDigest(r)
		return r, d
	}
	recv, rd := req(ReceiveTool, map[string]any{"mailbox": c.ReceiveHandle})
	rec, ok := tools.Take(recv, rd)
	if !ok || rec.Err == nil || rec.Err.Code != fault.EffectSuspended || !rec.NotRetryable || len(rec.Wake) != 1 {
		t.Fatalf("empty receive: %+v", rec)
	}
	send, sd := req(SendTool, map[string]any{"mailbox": c.SendHandle, "message": map[string]any{"ok": true}})
	rec, _ = tools.Take(send, sd)
	if rec.Err != nil || rec.Executor != "tool:mailbox.send.v1" {
		t.Fatalf("send: %+v", rec.Err)
	}
	// The same tool request again is the same delivery (its digest is the
	// idempotency key).
	again, _ := tools.Take(send, sd)
	if again.Err != nil || again.Output.(map[string]any)["id"] != rec.Output.(map[string]any)["id"] {
		t.Fatal("repeated tool send must be the same delivery")
	}
	out, _ := tools.Take(recv, rd)
	if out.Err != nil || out.Output.(map[string]any)["id"] != rec.Output.(map[string]any)["id"] {
		t.Fatalf("receive: %+v", out)
	}
	if n, _ := svc.Pending(c.ReceiveHandle); n != 0 {
		t.Fatalf("delivered once, %d left", n)
	}
	// Effect requests and other tools are not served; no service denies.
	if _, ok := tools.Take(effect.Request{"contract": effect.EffectContract, "kind": "agent"}, rd); ok {
		t.Fatal("effect request served")
	}
	if _, ok := tools.Take(effect.Request{"contract": effect.ToolContract, "tool": "pick.v1"}, rd); ok {
		t.Fatal("foreign tool served")
	}
	denied, _ := NewTools(nil).Take(recv, rd)
	if denied.Err == nil || denied.Err.Code != fault.CapabilityDenied {
		t.Fatalf("no host: %+v", denied)
	}
	if tools.Describe().Serves(effect.KindGate) || tools.Describe().Serves(effect.KindAgent) {
		t.Fatal("the mailbox host must never be routed effects")
	}
	if _, err := tools.Execute(context.Background(), recv); err == nil {
		t.Fatal("Execute must refuse")
	}
}
