package mailbox

import (
	"reflect"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
)

func TestSendKeyAndReceiveNext(t *testing.T) {
	t.Parallel()
	if k, err := SendKey(""); err != nil || !canon.IsDigest(k) {
		t.Errorf("a new key: %q, %v", k, err)
	}
	if _, err := SendKey("retry-1"); err == nil {
		t.Error("a key that is no digest was accepted")
	}
	svc := Open(t.TempDir())
	cfg, err := svc.Create("inbox", 4, 1024)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, empty, err := svc.ReceiveNext(cfg.ReceiveHandle); err != nil || !empty {
		t.Fatalf("an empty mailbox: empty %v, %v", empty, err)
	}
	key, _ := SendKey("")
	if _, _, err := svc.Send(cfg.SendHandle, map[string]any{"n": 1.0}, key); err != nil {
		t.Fatal(err)
	}
	_, msg, empty, err := svc.ReceiveNext(cfg.ReceiveHandle)
	if err != nil || empty || !reflect.DeepEqual(msg, map[string]any{"n": 1.0}) {
		t.Fatalf("one message: %v, %v, %v", msg, empty, err)
	}
	boxes, err := svc.List()
	if err != nil {
		t.Fatal(err)
	}
	got := Listing(boxes)["mailboxes"].([]any)
	if len(got) != 1 || got[0].(map[string]any)["pending"] != 0.0 || got[0].(map[string]any)["name"] != "inbox" {
		t.Errorf("listing %v", got)
	}
	if c := cfg.Created(); c["pending"] != 4.0 || c["maxMessages"] != 4.0 || c["messageBytes"] != 1024.0 {
		t.Errorf("created %v", c)
	}
}
