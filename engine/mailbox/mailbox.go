// Package mailbox is the host's local capability mailbox service and the
// two standard-library tools over it, mailbox.send.v1 and
// mailbox.receive.v1. A mailbox lives under a store directory; creating
// one mints two independent capability handles (send and receive), opaque
// local identifiers of the form cap:<class>:sha256:<hex> that name a
// capability record and grant nothing by themselves elsewhere.
//
// Layout under the store root:
//
//	capabilities/<hex>.json              algal.capability.v1 record (revocable)
//	mailboxes/<name>/config.json         algal.mailbox.v1 configuration
//	mailboxes/<name>/messages/<key>.json immutable message claim, one per idempotency key
//	mailboxes/<name>/pending/<seq>-<key>.json  delivery marker awaiting receive
//	mailboxes/<name>/consumed/<key>.json delivery marker after receive
//
// A send with an idempotency key that already claims a message is the same
// delivery (duplicate, delivered once). A receive on an empty mailbox is
// EFFECT_SUSPENDED with the receive handle as wake evidence, so the run
// suspends and a later resume re-issues the same request. Operations on
// one mailbox serialize on an advisory file lock.
package mailbox

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/internal/atomicfile"
)

// Contracts of the records the service keeps.
const (
	ConfigContract     = "algal.mailbox.v1"
	CapabilityContract = "algal.capability.v1"
	MessageContract    = "algal.mailbox-message.v1"
	DeliveryContract   = "algal.mailbox-delivery.v1"
)

// Capability classes.
const (
	Send    = "mailbox-send"
	Receive = "mailbox-receive"
)

// Bounds.
const (
	MaxMailboxes           = 1_024
	MaxPending             = 1_024
	DefaultPending         = 64
	MaxMessageBytes        = 250_000
	DefaultMessageBytes    = 65_536
	maxRecordBytes         = 67_108_864
	maxPendingScanEntries  = 2*MaxPending + 16
	maxMailboxScanEntries  = 2*MaxMailboxes + 16
	maxMessageScanMessages = 1 << 20
)

func errf(code, format string, a ...any) *fault.Error {
	return &fault.Error{Code: code, Message: fmt.Sprintf(format, a...)}
}

// Config is a mailbox configuration as `assay mailbox create` prints it.
type Config struct {
	Name            string
	MaxMessages     int
	MaxMessageBytes int
	SendHandle      string
	ReceiveHandle   string
}

// Value renders the configuration record.
func (c Config) Value() map[string]any {
	return map[string]any{"contract": ConfigContract, "name": c.Name, "maxMessages": float64(c.MaxMessages),
		"maxMessageBytes": float64(c.MaxMessageBytes), "send": c.SendHandle, "receive": c.ReceiveHandle}
}

// Service is the mailbox host over one store directory.
type Service struct {
	root string
}

// Open returns the service over root (created on first use).
func Open(root string) *Service { return &Service{root: root} }

// Root returns the store directory.
func (s *Service) Root() string { return s.root }

// ParseHandle checks a capability handle's shape and returns its class and
// the hex of its digest. want "" accepts either mailbox class.
func ParseHandle(handle, want string) (class, hexDigest string, err error) {
	parts := strings.Split(handle, ":")
	if len(parts) != 4 || parts[0] != "cap" || parts[2] != "sha256" || !canon.IsID(parts[1]) {
		return "", "", errf(fault.TypeMismatch, "invalid capability handle")
	}
	if _, ok := canon.DigestHex("sha256:" + parts[3]); !ok {
		return "", "", errf(fault.TypeMismatch, "invalid capability handle")
	}
	if want != "" && parts[1] != want {
		return "", "", errf(fault.TypeMismatch, "capability carries %s, expected %s", parts[1], want)
	}
	return parts[1], parts[3], nil
}

func descriptor(class, mailbox, nonce string) map[string]any {
	return map[string]any{"capability": class, "contract": CapabilityContract, "mailbox": mailbox, "nonce": nonce}
}

func handleOf(class, mailbox, nonce string) (string, error) {
	d, err := canon.Digest(descriptor(class, mailbox, nonce))
	if err != nil {
		return "", err
	}
	return "cap:" + class + ":" + d, nil
}

func randomHex() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", errf(fault.IOFailed, "operating-system entropy unavailable")
	}
	return hex.EncodeToString(b[:]), nil
}

// NewKey mints a fresh idempotency key (a send without --idempotency-key
// is a new delivery every time).
func NewKey() (string, error) {
	h, err := randomHex()
	if err != nil {
		return "", err
	}
	return "sha256:" + h, nil
}

// paths

func (s *Service) mailboxDir(name string) string { return filepath.Join(s.root, "mailboxes", name) }
func (s *Service) capPath(hexDigest string) string {
	return filepath.Join(s.root, "capabilities", hexDigest+".json")
}

// noLink refuses a symlink at path (an absent path is fine), so the
// service can never be redirected outside its store.
func noLink(path string) error {
	st, err := os.Lstat(path)
	if err == nil && st.Mode()&fs.ModeSymlink != 0 {
		return errf(fault.IOFailed, "mailbox symlinks are not admitted: %s", path)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return errf(fault.IOFailed, "%s: %v", path, err)
	}
	return nil
}

func (s *Service) checkTree(paths ...string) error {
	for _, p := range append([]string{s.root, filepath.Join(s.root, "mailboxes"), filepath.Join(s.root, "capabilities")}, paths...) {
		if err := noLink(p); err != nil {
			return err
		}
	}
	return nil
}

// readRecord reads a JSON record: no final symlink, non-blocking open,
// regular files only, bounded. Absent is (nil, false, nil).
func readRecord(path string) (map[string]any, bool, error) {
	fd, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, openError(path, err)
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return nil, false, errf(fault.IOFailed, "%s: %v", path, err)
	}
	if !st.Mode().IsRegular() {
		return nil, false, errf(fault.IOFailed, "%s is not a regular file", path)
	}
	v, err := canon.ParseReader(fd, maxRecordBytes)
	if err != nil {
		return nil, false, errf(fault.IOFailed, "%s: %v", path, err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false, errf(fault.Parse, "%s is not a record object", path)
	}
	return m, true, nil
}

// openError is the failure to open a record: a symlink is refused as such.
func openError(path string, err error) error {
	if errors.Is(err, syscall.ELOOP) {
		return errf(fault.IOFailed, "mailbox symlinks are not admitted: %s", path)
	}
	return errf(fault.IOFailed, "%s: %v", path, err)
}

// writeNew publishes an immutable record; an existing one must hold the
// same bytes (DIGEST_MISMATCH otherwise). It reports whether it wrote.
func writeNew(path string, v any) (bool, error) {
	b, err := canon.Encode(v)
	if err != nil {
		return false, errf(fault.Parse, "record is not canonical JSON: %v", err)
	}
	if err := noLink(path); err != nil {
		return false, err
	}
	if old, ok, err := readRecord(path); err != nil || ok {
		return false, sameRecord(path, old, b, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, errf(fault.IOFailed, "%v", err)
	}
	if err := atomicfile.Write(path, b); err != nil {
		return false, errf(fault.IOFailed, "%v", err)
	}
	return true, nil
}

// sameRecord checks an existing immutable record (or the error reading
// it) against the bytes about to be published.
func sameRecord(path string, old map[string]any, b []byte, err error) error {
	if err != nil {
		return err
	}
	if ob, _ := canon.Encode(old); string(ob) != string(b) {
		return errf(fault.DigestMismatch, "immutable mailbox record %s conflicts", path)
	}
	return nil
}

func replace(path string, v any) error {
	b, err := canon.Encode(v)
	if err != nil {
		return errf(fault.Parse, "record is not canonical JSON: %v", err)
	}
	if err := noLink(path); err != nil {
		return err
	}
	if err := atomicfile.Write(path, b); err != nil {
		return errf(fault.IOFailed, "%v", err)
	}
	return nil
}

// lock takes an exclusive advisory lock on path (created if absent); the
// kernel drops it if the process dies, so no stale lock survives a crash.
func lock(path string) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, errf(fault.IOFailed, "%v", err)
	}
	if err := noLink(path); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, errf(fault.IOFailed, "mailbox lock %s: %v", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, errf(fault.IOFailed, "mailbox lock %s: %v", path, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

func intField(m map[string]any, k string) (int, bool) {
	f, ok := m[k].(float64)
	if !ok || f != float64(int(f)) {
		return 0, false
	}
	return int(f), true
}

func parseConfig(m map[string]any) (Config, error) {
	var c Config
	if len(m) != 6 || m["contract"] != ConfigContract {
		return c, errf(fault.Parse, "mailbox configuration is not an %s record", ConfigContract)
	}
	c.Name, _ = m["name"].(string)
	c.SendHandle, _ = m["send"].(string)
	c.ReceiveHandle, _ = m["receive"].(string)
	var ok1, ok2 bool
	c.MaxMessages, ok1 = boundedInt(m, "maxMessages", MaxPending)
	c.MaxMessageBytes, ok2 = boundedInt(m, "maxMessageBytes", MaxMessageBytes)
	if !canon.IsID(c.Name) || !ok1 || !ok2 {
		return c, errf(fault.Parse, "mailbox configuration fields are out of bounds")
	}
	if _, _, err := ParseHandle(c.SendHandle, Send); err != nil {
		return c, err
	}
	if _, _, err := ParseHandle(c.ReceiveHandle, Receive); err != nil {
		return c, err
	}
	return c, nil
}

// boundedInt reads an integer field of 1..max; ok is false otherwise.
func boundedInt(m map[string]any, k string, max int) (int, bool) {
	n, ok := intField(m, k)
	return n, ok && n >= 1 && n <= max
}

// inspect reads a mailbox configuration (false when absent).
func (s *Service) inspect(name string) (Config, bool, error) {
	dir := s.mailboxDir(name)
	if err := s.checkTree(dir); err != nil {
		return Config{}, false, err
	}
	m, ok, err := readRecord(filepath.Join(dir, "config.json"))
	if err != nil || !ok {
		return Config{}, false, err
	}
	c, err := parseConfig(m)
	if err != nil {
		return Config{}, false, err
	}
	if c.Name != name {
		return Config{}, false, errf(fault.DigestMismatch, "mailbox configuration %s is in the wrong directory", name)
	}
	return c, true, nil
}

// Create admits a mailbox, or returns the existing one when its bounds
// match exactly (different bounds are refused). maxMessages is 1..1024,
// maxMessageBytes 1..250000.
func (s *Service) Create(name string, maxMessages, maxMessageBytes int) (Config, error) {
	if err := checkCreate(name, maxMessages, maxMessageBytes); err != nil {
		return Config{}, err
	}
	if err := s.checkTree(); err != nil {
		return Config{}, err
	}
	unlock, err := lock(filepath.Join(s.root, ".mailbox-admission.lock"))
	if err != nil {
		return Config{}, err
	}
	defer unlock()
	if c, ok, err := s.inspect(name); err != nil || ok {
		return sameBounds(c, err, maxMessages, maxMessageBytes)
	}
	if err := s.checkRoom(); err != nil {
		return Config{}, err
	}
	c := Config{Name: name, MaxMessages: maxMessages, MaxMessageBytes: maxMessageBytes}
	if err := s.admitHandles(&c); err != nil {
		return Config{}, err
	}
	if err := s.makeMailbox(c); err != nil {
		return Config{}, err
	}
	return c, nil
}

// checkCreate checks a new mailbox's name and bounds.
func checkCreate(name string, maxMessages, maxMessageBytes int) error {
	if !canon.IsID(name) {
		return errf(fault.Parse, "mailbox name %q must be a lowercase id ([a-z][a-z0-9-]*, at most 64 bytes)", name)
	}
	if maxMessages < 1 || maxMessages > MaxPending || maxMessageBytes < 1 || maxMessageBytes > MaxMessageBytes {
		return errf(fault.BudgetExhausted, "mailbox bounds: pending must be 1..%d and message bytes 1..%d", MaxPending, MaxMessageBytes)
	}
	return nil
}

// sameBounds returns the existing mailbox c (or the error reading it)
// when its bounds are the ones asked for.
func sameBounds(c Config, err error, maxMessages, maxMessageBytes int) (Config, error) {
	if err != nil {
		return Config{}, err
	}
	if c.MaxMessages != maxMessages || c.MaxMessageBytes != maxMessageBytes {
		return Config{}, errf(fault.Parse, "mailbox %s already exists with different bounds", c.Name)
	}
	return c, nil
}

// checkRoom refuses a new mailbox once the store holds MaxMailboxes.
func (s *Service) checkRoom() error {
	n, err := s.count()
	if err != nil {
		return err
	}
	if n >= MaxMailboxes {
		return errf(fault.BudgetExhausted, "mailbox count exhausted (%d)", MaxMailboxes)
	}
	return nil
}

// admitHandles mints the mailbox's send and receive handles from one
// random seed and writes their capability records.
func (s *Service) admitHandles(c *Config) error {
	seed, err := randomHex()
	if err != nil {
		return err
	}
	for _, class := range []string{Send, Receive} {
		h, err := s.admitHandle(class, c.Name, seed+"-"+strings.TrimPrefix(class, "mailbox-"))
		if err != nil {
			return err
		}
		if class == Send {
			c.SendHandle = h
		} else {
			c.ReceiveHandle = h
		}
	}
	return nil
}

func (s *Service) admitHandle(class, name, nonce string) (string, error) {
	h, err := handleOf(class, name, nonce)
	if err != nil {
		return "", err
	}
	_, hx, _ := ParseHandle(h, class)
	rec := map[string]any{"contract": CapabilityContract, "handle": h, "capability": class,
		"mailbox": name, "nonce": nonce, "revoked": false}
	if _, err := writeNew(s.capPath(hx), rec); err != nil {
		return "", err
	}
	return h, nil
}

// makeMailbox makes the mailbox's directories, then publishes its
// configuration.
func (s *Service) makeMailbox(c Config) error {
	dir := s.mailboxDir(c.Name)
	for _, sub := range []string{"messages", "pending", "consumed"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return errf(fault.IOFailed, "%v", err)
		}
	}
	_, err := writeNew(filepath.Join(dir, "config.json"), c.Value())
	return err
}

func (s *Service) count() (int, error) {
	entries, err := os.ReadDir(filepath.Join(s.root, "mailboxes"))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, errf(fault.IOFailed, "%v", err)
	}
	if len(entries) > maxMailboxScanEntries {
		return 0, errf(fault.BudgetExhausted, "mailbox namespace holds more than %d entries", maxMailboxScanEntries)
	}
	n := 0
	for _, e := range entries {
		if e.IsDir() {
			if _, err := os.Lstat(filepath.Join(s.root, "mailboxes", e.Name(), "config.json")); err == nil {
				n++
			}
		}
	}
	return n, nil
}

// resolve maps an active handle of class to its mailbox.
func (s *Service) resolve(handle, class string) (Config, map[string]any, error) {
	rec, mb, err := s.capability(handle, class)
	if err != nil {
		return Config{}, nil, err
	}
	c, ok, err := s.inspect(mb)
	if err != nil {
		return Config{}, nil, err
	}
	if !ok {
		return Config{}, nil, errf(fault.CapabilityDenied, "mailbox is not admitted")
	}
	if !c.admits(class, handle) {
		return Config{}, nil, errf(fault.CapabilityDenied, "capability admission does not match its mailbox")
	}
	return c, rec, nil
}

// capability reads and checks the capability record of an active handle
// of class, returning it and the mailbox it names.
func (s *Service) capability(handle, class string) (map[string]any, string, error) {
	_, hx, err := ParseHandle(handle, class)
	if err != nil {
		return nil, "", err
	}
	if err := s.checkTree(); err != nil {
		return nil, "", err
	}
	rec, ok, err := readRecord(s.capPath(hx))
	if err != nil {
		return nil, "", err
	}
	if !ok {
		return nil, "", errf(fault.CapabilityDenied, "capability is not admitted")
	}
	mb, err := capabilityMailbox(rec, handle, class)
	if err != nil {
		return nil, "", err
	}
	if rec["revoked"] != false {
		return nil, "", errf(fault.CapabilityDenied, "capability is revoked")
	}
	return rec, mb, nil
}

// capabilityMailbox checks that a capability record is the one its
// handle was minted for and returns the mailbox it names.
func capabilityMailbox(rec map[string]any, handle, class string) (string, error) {
	mb, _ := rec["mailbox"].(string)
	nonce, _ := rec["nonce"].(string)
	if rec["contract"] != CapabilityContract || rec["capability"] != class || rec["handle"] != handle || !canon.IsID(mb) {
		return "", errf(fault.DigestMismatch, "capability record does not match its handle")
	}
	if h, err := handleOf(class, mb, nonce); err != nil || h != handle {
		return "", errf(fault.DigestMismatch, "capability handle does not match its admission")
	}
	return mb, nil
}

// admits reports whether the mailbox's configuration names handle as its
// handle of class.
func (c Config) admits(class, handle string) bool {
	switch class {
	case Send:
		return c.SendHandle == handle
	case Receive:
		return c.ReceiveHandle == handle
	}
	return true
}

// Revoke disables one handle; the mailbox's other handle keeps working.
func (s *Service) Revoke(handle string) error {
	class, hx, err := ParseHandle(handle, "")
	if err != nil {
		return err
	}
	if class != Send && class != Receive {
		return errf(fault.CapabilityDenied, "capability is not a mailbox right")
	}
	c, _, err := s.resolve(handle, class)
	if err != nil {
		return err
	}
	unlock, err := lock(filepath.Join(s.mailboxDir(c.Name), ".lock"))
	if err != nil {
		return err
	}
	defer unlock()
	_, rec, err := s.resolve(handle, class)
	if err != nil {
		return err
	}
	rec["revoked"] = true
	return replace(s.capPath(hx), rec)
}

func envelopeID(mailbox, key string, v any) (string, error) {
	return canon.Digest(map[string]any{"contract": MessageContract, "idempotencyKey": key, "mailbox": mailbox, "value": v})
}

// Send delivers value under idempotency key (a sha256 digest token). The
// first send with a key claims it; a later send with the same key and the
// same value is a duplicate of that delivery (delivered once; a retry of a
// send interrupted after its claim completes the delivery), and the same
// key with another value is DIGEST_MISMATCH. A full mailbox is
// MAILBOX_FULL; a value over the mailbox's byte bound is BUDGET_EXHAUSTED.
func (s *Service) Send(handle string, value any, key string) (id string, duplicate bool, err error) {
	keyHex, ok := canon.DigestHex(key)
	if !ok {
		return "", false, errf(fault.Parse, "idempotency key must be a sha256 digest token")
	}
	c, dir, unlock, err := s.lockMailbox(handle, Send)
	if err != nil {
		return "", false, err
	}
	defer unlock()
	d := &delivery{c: c, dir: dir, key: key, keyHex: keyHex, value: value}
	if d.id, err = messageID(c, key, value); err != nil {
		return "", false, err
	}
	claimed, err := d.checkClaim()
	if err != nil {
		return "", false, err
	}
	pending, err := s.pending(c)
	if err != nil {
		return "", false, err
	}
	delivered, err := s.deliveryEvidence(c, pending, keyHex, d.id)
	if err != nil {
		return "", false, err
	}
	if delivered && !claimed {
		return "", false, errf(fault.DigestMismatch, "mailbox delivery has no message claim")
	}
	if delivered {
		return d.id, true, nil
	}
	// A new delivery, or a retry of one interrupted after its claim was
	// published: either way the delivery marker is still to be written.
	if err := s.deliver(d, pending, claimed); err != nil {
		return "", false, err
	}
	return d.id, claimed, nil
}

// delivery is one Send under way: the mailbox, its directory, and the
// message's idempotency key, id and value.
type delivery struct {
	c               Config
	dir             string
	key, keyHex, id string
	value           any
}

// messageID bounds the message and returns its envelope id.
func messageID(c Config, key string, value any) (string, error) {
	b, err := canon.Encode(value)
	if err != nil {
		return "", errf(fault.Parse, "message is not canonical JSON: %v", err)
	}
	if len(b) > c.MaxMessageBytes {
		return "", errf(fault.BudgetExhausted, "mailbox message %dB exceeds %dB", len(b), c.MaxMessageBytes)
	}
	return envelopeID(c.Name, key, value)
}

func (d *delivery) claimPath() string { return filepath.Join(d.dir, "messages", d.keyHex+".json") }

// checkClaim reports whether the key is claimed, by this very message.
func (d *delivery) checkClaim() (bool, error) {
	claim, claimed, err := readRecord(d.claimPath())
	if err != nil {
		return false, err
	}
	if claimed && (claim["id"] != d.id || claim["idempotencyKey"] != d.key || claim["mailbox"] != d.c.Name) {
		return false, errf(fault.DigestMismatch, "idempotency key already claims a different mailbox message")
	}
	return claimed, nil
}

// deliver claims the key (unless claimed already) and writes the
// delivery marker next in order, room permitting.
func (s *Service) deliver(d *delivery, pending []string, claimed bool) error {
	if len(pending) >= d.c.MaxMessages {
		return errf(fault.MailboxFull, "mailbox %q is full", d.c.Name)
	}
	seq, err := s.nextSeq(d.c, pending)
	if err != nil {
		return err
	}
	if !claimed {
		msg := map[string]any{"contract": MessageContract, "id": d.id, "mailbox": d.c.Name, "idempotencyKey": d.key, "value": d.value}
		if _, err := writeNew(d.claimPath(), msg); err != nil {
			return err
		}
	}
	marker := map[string]any{"contract": DeliveryContract, "id": d.id}
	name := fmt.Sprintf("%012d-%s.json", seq, d.keyHex)
	_, err = writeNew(filepath.Join(d.dir, "pending", name), marker)
	return err
}

// deliveryEvidence reports whether a delivery marker (pending or
// consumed) exists for the idempotency key. Markers that name another
// message are DIGEST_MISMATCH; both at once mean an interrupted receive,
// which needs reconciliation before anything moves (IO_FAILED).
func (s *Service) deliveryEvidence(c Config, pending []string, keyHex, id string) (bool, error) {
	found, err := s.deliveryMarkers(c, pending, keyHex)
	if err != nil {
		return false, err
	}
	for _, path := range found {
		marker, ok, err := readRecord(path)
		if err != nil {
			return false, err
		}
		if ok && (marker["contract"] != DeliveryContract || marker["id"] != id) {
			return false, errf(fault.DigestMismatch, "mailbox delivery claims another message")
		}
	}
	if len(found) > 1 {
		return false, errf(fault.IOFailed, "mailbox delivery is uncertain; pending and consumed evidence require reconciliation")
	}
	return len(found) == 1, nil
}

// deliveryMarkers lists the paths of the pending and consumed markers of
// the idempotency key.
func (s *Service) deliveryMarkers(c Config, pending []string, keyHex string) ([]string, error) {
	dir := s.mailboxDir(c.Name)
	var found []string
	for _, name := range pending {
		if strings.HasSuffix(name, "-"+keyHex+".json") {
			found = append(found, filepath.Join(dir, "pending", name))
		}
	}
	consumed := filepath.Join(dir, "consumed", keyHex+".json")
	_, ok, err := readRecord(consumed)
	if err != nil {
		return nil, err
	}
	if ok {
		found = append(found, consumed)
	}
	return found, nil
}

// nextSeq orders deliveries first in, first out: the next sequence
// number is past every pending marker and past the count of retained
// claims, so neither collecting old claims nor a stray file can place a
// new delivery ahead of an older one.
func (s *Service) nextSeq(c Config, pending []string) (int, error) {
	entries, err := os.ReadDir(filepath.Join(s.mailboxDir(c.Name), "messages"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0, errf(fault.IOFailed, "%v", err)
	}
	if len(entries) > maxMessageScanMessages {
		return 0, errf(fault.BudgetExhausted, "mailbox %s retains too many message claims", c.Name)
	}
	seq := len(entries)
	for _, name := range pending {
		prefix, _, _ := strings.Cut(name, "-")
		if n, err := strconv.Atoi(prefix); err == nil && n >= seq {
			seq = n + 1
		}
	}
	return seq, nil
}

// pending lists the delivery markers in delivery order, bounded.
func (s *Service) pending(c Config) ([]string, error) {
	dir := filepath.Join(s.mailboxDir(c.Name), "pending")
	if err := noLink(dir); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, errf(fault.IOFailed, "%v", err)
	}
	if len(entries) > maxPendingScanEntries {
		return nil, errf(fault.BudgetExhausted, "mailbox pending physical entry count")
	}
	out, err := markerNames(entries)
	if err != nil {
		return nil, err
	}
	if len(out) > c.MaxMessages {
		return nil, errf(fault.BudgetExhausted, "mailbox pending entry count")
	}
	return out, nil
}

// markerNames lists the delivery markers among a pending directory's
// entries, sorted (so in delivery order); temporary files are skipped.
func markerNames(entries []os.DirEntry) ([]string, error) {
	var out []string
	for _, e := range entries {
		if atomicfile.IsTemp(e.Name()) || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		if !e.Type().IsRegular() {
			return nil, errf(fault.IOFailed, "mailbox pending entry %s is not a regular file", e.Name())
		}
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out, nil
}

// lockMailbox resolves handle, takes its mailbox's lock and resolves the
// handle again under it (a revoke may have landed in between): it returns
// the mailbox as the lock holder sees it, its directory and the unlock.
func (s *Service) lockMailbox(handle, class string) (Config, string, func(), error) {
	c, _, err := s.resolve(handle, class)
	if err != nil {
		return Config{}, "", nil, err
	}
	dir := s.mailboxDir(c.Name)
	unlock, err := lock(filepath.Join(dir, ".lock"))
	if err != nil {
		return Config{}, "", nil, err
	}
	if c, _, err = s.resolve(handle, class); err != nil {
		unlock()
		return Config{}, "", nil, err
	}
	return c, dir, unlock, nil
}

// Receive takes the oldest pending message: it checks the claim against
// its delivery marker, writes the consumed marker and removes the pending
// one. An empty mailbox is EFFECT_SUSPENDED with the handle as wake.
func (s *Service) Receive(handle string) (id string, message any, err error) {
	c, dir, unlock, err := s.lockMailbox(handle, Receive)
	if err != nil {
		return "", nil, err
	}
	defer unlock()
	pending, err := s.pending(c)
	if err != nil {
		return "", nil, err
	}
	if len(pending) == 0 {
		return "", nil, &fault.Error{Code: fault.EffectSuspended, Message: fmt.Sprintf("mailbox %q is empty", c.Name), Wake: []any{handle}}
	}
	name := pending[0]
	_, keyHex, ok := strings.Cut(strings.TrimSuffix(name, ".json"), "-")
	if _, valid := canon.DigestHex("sha256:" + keyHex); !ok || !valid {
		return "", nil, errf(fault.DigestMismatch, "mailbox delivery marker %s is malformed", name)
	}
	id, value, err := checkedDelivery(c, dir, name, keyHex)
	if err != nil {
		return "", nil, err
	}
	if err := consume(dir, name, keyHex, id); err != nil {
		return "", nil, err
	}
	return id, value, nil
}

// checkedDelivery reads the delivery marker name and its message claim
// and checks them against each other and the mailbox; it returns the
// message's id and value.
func checkedDelivery(c Config, dir, name, keyHex string) (string, any, error) {
	marker, ok, err := readRecord(filepath.Join(dir, "pending", name))
	if err != nil || !ok {
		return "", nil, errf(fault.IOFailed, "mailbox delivery %s disappeared", name)
	}
	claim, ok, err := readRecord(filepath.Join(dir, "messages", keyHex+".json"))
	if err != nil {
		return "", nil, err
	}
	if !ok {
		return "", nil, errf(fault.DigestMismatch, "mailbox delivery has no message claim")
	}
	id, sound := soundDelivery(c, claim, marker, keyHex)
	if !sound {
		return "", nil, errf(fault.DigestMismatch, "mailbox delivery is corrupt")
	}
	if b, _ := canon.Encode(claim["value"]); len(b) > c.MaxMessageBytes {
		return "", nil, errf(fault.BudgetExhausted, "mailbox message %dB exceeds %dB", len(b), c.MaxMessageBytes)
	}
	return id, claim["value"], nil
}

// soundDelivery reports whether a claim is the message its key and the
// mailbox say, and the marker delivers it; it returns the message id.
func soundDelivery(c Config, claim, marker map[string]any, keyHex string) (string, bool) {
	key, _ := claim["idempotencyKey"].(string)
	id, _ := claim["id"].(string)
	want, err := envelopeID(c.Name, key, claim["value"])
	return id, err == nil && claim["contract"] == MessageContract && want == id && key == "sha256:"+keyHex &&
		claim["mailbox"] == c.Name && marker["contract"] == DeliveryContract && marker["id"] == id
}

// consume moves a delivery from pending to consumed: the consumed marker
// first, then the pending one goes.
func consume(dir, name, keyHex, id string) error {
	consumed := filepath.Join(dir, "consumed", keyHex+".json")
	// A consumed marker next to the pending one is an interrupted receive:
	// the message may already have been handed out, so it is not handed
	// out again until the host reconciles.
	_, done, err := readRecord(consumed)
	if err != nil {
		return err
	}
	if done {
		return errf(fault.IOFailed, "mailbox delivery is uncertain; pending and consumed evidence require reconciliation")
	}
	if _, err := writeNew(consumed, map[string]any{"contract": DeliveryContract, "id": id}); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(dir, "pending", name)); err != nil {
		return errf(fault.IOFailed, "%v", err)
	}
	return nil
}

// Pending reports how many deliveries await a receive (host readiness; it
// never dequeues).
func (s *Service) Pending(handle string) (int, error) {
	c, _, err := s.resolve(handle, Receive)
	if err != nil {
		return 0, err
	}
	p, err := s.pending(c)
	return len(p), err
}

// List returns every mailbox of the store with its pending count, sorted
// by name. Revoked handles are still listed: revocation is per handle.
func (s *Service) List() ([]Listed, error) {
	entries, err := os.ReadDir(filepath.Join(s.root, "mailboxes"))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, errf(fault.IOFailed, "%v", err)
	}
	var out []Listed
	for _, e := range entries {
		if !e.IsDir() || !canon.IsID(e.Name()) {
			continue
		}
		l, ok, err := s.listed(e.Name())
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, l)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// listed reads one mailbox and counts its pending deliveries (false when
// the directory holds no admitted mailbox).
func (s *Service) listed(name string) (Listed, bool, error) {
	c, ok, err := s.inspect(name)
	if err != nil || !ok {
		return Listed{}, false, err
	}
	p, err := s.pending(c)
	if err != nil {
		return Listed{}, false, err
	}
	return Listed{Config: c, Pending: len(p)}, true, nil
}

// Listed is one mailbox of List.
type Listed struct {
	Config
	Pending int
}
