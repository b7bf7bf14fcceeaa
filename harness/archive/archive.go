// Package archive keeps the answers live model backends gave, so that a
// workload recorded once against a real model replays in CI forever,
// offline and without a key.
//
// An archive is a directory of plain files a reviewer can read and diff
// (default receipts/ at the repository root, the same archive `assay ci
// pr` replays against head organisms):
//
//	index.jsonl          one line per recorded case: {"workload", "contender",
//	                     "case", "receipt", "models", "recordedAt"}, and
//	                     "repeat" (2..32) for the further recordings of a
//	                     repeated workload, sorted by workload, contender,
//	                     case and repeat
//	runs/<hex>.json      the case's run receipt, canonical JSON, named by the
//	                     digest of its bytes (verified on every read)
//	values/<hex>.json    each live request, canonical JSON, named by its
//	                     request digest, and each live backend's
//	                     configuration value, named by its configuration
//	                     digest (kept so a miss can say what changed)
//
// An index line may also carry "redacted" (how many secret values were
// redacted from the receipt's answers before it was written), "rejected"
// (the cells whose answer their output contract rejected) and "cache":
// the prompt-cache tokens each live request's server reported reading
// and writing, [{"executor", "request", "read", "write"}] sorted by
// executor and request. Receipts have no field for cache tokens
// (upstream's usage record is closed to model, tokensIn and tokensOut),
// so the archive keeps them beside the receipt, and a replay prices them
// exactly as the recording did.
// Only answers are archived: a run with a failed live request (an HTTP
// error, a timeout, a lost connection, a refused answer) is not.
// Files are 0644 and the writers' lock lives outside the directory.
//
// A workload run with repeats keeps one recording per repeat: repeat i
// replays only recording i, so k repeats stay k samples. An entry without
// "repeat" is repeat 1, so archives recorded before repeats existed read
// unchanged, as the first recording of every case.
//
// Receipts hold the answers: a live effect record (executor, output or
// error, usage, configurationDigest) is served again, byte for byte, to any
// later request with the same digest from the same executor under the same
// configuration digest. Content addressing keeps the archive small: an
// unchanged receipt or request is one file however often it is recorded.
// Every write goes through an atomic publish, and the index is replaced
// whole; an update is made durable by two barriers (the objects, then the
// index), not one per file.
package archive

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/store"
	"golang.org/x/sync/errgroup"
)

// DefaultDir is the archive at the repository root.
const DefaultDir = "receipts"

// IndexFile is the archive's index.
const IndexFile = "index.jsonl"

// MaxRepeat bounds an entry's repeat (workload.MaxRepeats).
const MaxRepeat = 32

// Code is the error code of a malformed or tampered archive.
const Code = "ARCHIVE_INVALID"

// invalid is an archive problem as the one coded error type.
func invalid(file string, line int, msg string) *fault.Error {
	return &fault.Error{Code: Code, File: file, Line: line, Message: msg}
}

// Entry is one recorded case.
type Entry struct {
	Workload  string
	Contender string // bench system id, or foundry candidate manifest key
	Case      string
	// Repeat is the recording's repeat, 1-based (0 reads as 1).
	Repeat  int
	Receipt string   // storage digest of the receipt under runs/
	Models  []string // models the server reported, sorted
	// RecordedAt is when this receipt was first recorded (RFC 3339, UTC).
	// Re-recording an identical receipt keeps it, so the index does not
	// churn when nothing changed.
	RecordedAt string
	// Redacted counts the secret values redacted from the receipt's live
	// answers before it was written: the receipt holds the redacted
	// answers, so it replays exactly as recorded, and this says so.
	Redacted int
	// Rejected lists the cells whose recorded answer their output
	// contract rejected (EFFECT_UNPARSEABLE): the model's answer, kept,
	// and marked here so a reviewer sees it.
	Rejected []string
	// Cache holds the prompt-cache tokens of the receipt's live requests
	// whose server reported any, sorted by executor and request.
	Cache []CacheTokens
}

// CacheTokens is what a server reported for one live request about its
// prompt cache: the prompt tokens read from it and written to it (both
// are part of the receipt's tokensIn).
type CacheTokens struct {
	Executor string
	// Request is the request digest.
	Request     string
	Read, Write int64
}

// maxCacheEntries bounds an index line's cache list.
const maxCacheEntries = 4096

func (c CacheTokens) value() map[string]any {
	return map[string]any{"executor": c.Executor, "request": c.Request, "read": float64(c.Read), "write": float64(c.Write)}
}

func cacheKey(executor, request string) string { return executor + "\x00" + request }

func (e Entry) value() map[string]any {
	models := make([]any, len(e.Models))
	for i, m := range e.Models {
		models[i] = m
	}
	v := map[string]any{"workload": e.Workload, "contender": e.Contender, "case": e.Case,
		"receipt": e.Receipt, "models": models, "recordedAt": e.RecordedAt}
	if e.repeat() > 1 {
		v["repeat"] = float64(e.repeat())
	}
	if e.Redacted > 0 {
		v["redacted"] = float64(e.Redacted)
	}
	if len(e.Rejected) > 0 {
		r := make([]any, len(e.Rejected))
		for i, c := range e.Rejected {
			r[i] = c
		}
		v["rejected"] = r
	}
	if len(e.Cache) > 0 {
		c := make([]any, len(e.Cache))
		for i, x := range e.Cache {
			c[i] = x.value()
		}
		v["cache"] = c
	}
	return v
}

func (e Entry) repeat() int { return max(1, e.Repeat) }

// key sorts entries by workload, contender, case and repeat.
func (e Entry) key() string {
	return fmt.Sprintf("%s\x00%s\x00%s\x00%02d", e.Workload, e.Contender, e.Case, e.repeat())
}

// Archive is an opened archive directory (which need not exist yet).
type Archive struct {
	dir string
	st  *store.FileStore
}

// Open opens the archive at dir. Its files are published 0644 (people
// read and commit them) and its writers' lock lives outside it
// (LockFile), so nothing but the archive is ever in the directory.
func Open(dir string) (*Archive, error) {
	if dir == "" {
		dir = DefaultDir
	}
	st, err := store.OpenFileStoreWith(dir, store.FileOptions{Mode: 0o644, LockFile: LockFile(dir)})
	if err != nil {
		return nil, err
	}
	return &Archive{dir: dir, st: st}, nil
}

// LockFile is the writers' lock of the archive at dir: a file in the
// system's temporary directory named by the digest of dir's absolute
// path, so two processes recording into one archive take turns without
// a lock file being committed with it.
func LockFile(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	hex, _ := canon.DigestHex(canon.DigestBytes([]byte(abs)))
	return filepath.Join(os.TempDir(), "assay-archive-locks", hex[:32]+".lock")
}

// Dir is the archive directory.
func (a *Archive) Dir() string { return a.dir }

// Entries reads the index; a missing index is an empty archive.
func (a *Archive) Entries() ([]Entry, error) {
	path := filepath.Join(a.dir, IndexFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, invalid(path, 0, err.Error())
	}
	var out []Entry
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		e, err := parseEntry(line)
		if err != nil {
			return nil, invalid(path, n, err.Error())
		}
		if seen[e.key()] {
			return nil, invalid(path, n, fmt.Sprintf("workload %q contender %q case %q repeat %d is indexed twice", e.Workload, e.Contender, e.Case, e.repeat()))
		}
		seen[e.key()] = true
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, invalid(path, 0, err.Error())
	}
	return out, nil
}

func parseEntry(line []byte) (Entry, error) {
	v, err := canon.Parse(line, 1<<20)
	if err != nil {
		return Entry{}, fmt.Errorf("not a JSON object: %v", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return Entry{}, errors.New("not a JSON object")
	}
	if k, bad := canon.UnknownKey(m, "workload", "contender", "case", "repeat", "receipt", "models", "recordedAt", "redacted", "rejected", "cache"); bad {
		return Entry{}, fmt.Errorf("unknown field %q", k)
	}
	var e Entry
	// The members are read in this order, so an entry with several faults
	// is always refused for the same one.
	for _, read := range []func(map[string]any, *Entry) error{readNames, readRepeat, readRedacted, readRejected, readCache, readModels} {
		if err := read(m, &e); err != nil {
			return Entry{}, err
		}
	}
	return e, nil
}

// readNames reads the entry's required strings and checks its receipt is a
// digest.
func readNames(m map[string]any, e *Entry) error {
	for _, f := range []struct {
		k string
		p *string
	}{{"workload", &e.Workload}, {"contender", &e.Contender}, {"case", &e.Case}, {"receipt", &e.Receipt}, {"recordedAt", &e.RecordedAt}} {
		s, ok := m[f.k].(string)
		if !ok || s == "" || len(s) > 256 {
			return fmt.Errorf("%s must be a non-empty string of at most 256 bytes", f.k)
		}
		*f.p = s
	}
	if !canon.IsDigest(e.Receipt) {
		return errors.New("receipt must be a sha256 digest")
	}
	return nil
}

// wholeIn reports whether x is a JSON number holding a whole value from lo
// to hi.
func wholeIn(x any, lo, hi float64) bool {
	f, isNum := x.(float64)
	return isNum && f == float64(int(f)) && f >= lo && f <= hi
}

// readRepeat reads the optional repeat index (repeat 1 is written without it).
func readRepeat(m map[string]any, e *Entry) error {
	x, ok := m["repeat"]
	if !ok {
		return nil
	}
	if !wholeIn(x, 2, MaxRepeat) {
		return fmt.Errorf("repeat must be an integer from 2 to %d (repeat 1 is written without it)", MaxRepeat)
	}
	e.Repeat = int(x.(float64))
	return nil
}

// readRedacted reads the optional count of redactions made in the receipt.
func readRedacted(m map[string]any, e *Entry) error {
	x, ok := m["redacted"]
	if !ok {
		return nil
	}
	if !wholeIn(x, 1, 1<<31) {
		return errors.New("redacted must be a positive integer (a receipt with no redaction is written without it)")
	}
	e.Redacted = int(x.(float64))
	return nil
}

// readRejected reads the optional list of cells whose answers the contract
// rejected.
func readRejected(m map[string]any, e *Entry) error {
	x, ok := m["rejected"]
	if !ok {
		return nil
	}
	cells, isList := x.([]any)
	if !isList || len(cells) == 0 {
		return errors.New("rejected must be a non-empty list of cell ids")
	}
	for _, c := range cells {
		s, isStr := c.(string)
		if !isStr || s == "" {
			return errors.New("rejected must be a non-empty list of cell ids")
		}
		e.Rejected = append(e.Rejected, s)
	}
	return nil
}

// readCache reads the optional cache-token list.
func readCache(m map[string]any, e *Entry) error {
	x, ok := m["cache"]
	if !ok {
		return nil
	}
	var err error
	e.Cache, err = parseCache(x)
	return err
}

// readModels reads the required list of models that answered.
func readModels(m map[string]any, e *Entry) error {
	models, ok := m["models"].([]any)
	if !ok {
		return errors.New("models must be a list of strings")
	}
	for _, x := range models {
		s, ok := x.(string)
		if !ok {
			return errors.New("models must be a list of strings")
		}
		e.Models = append(e.Models, s)
	}
	return nil
}

// parseCache reads an entry's cache list strictly: each item names its
// executor and request digest once, with whole non-negative counts, at
// least one of them positive (a request with no cache tokens is not
// listed), in executor and request order.
func parseCache(x any) ([]CacheTokens, error) {
	const want = `cache must be a non-empty list of {"executor", "request", "read", "write"}`
	items, ok := x.([]any)
	if !ok || len(items) == 0 || len(items) > maxCacheEntries {
		return nil, fmt.Errorf("%s (at most %d)", want, maxCacheEntries)
	}
	out := make([]CacheTokens, 0, len(items))
	for i, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("cache[%d]: %s", i, want)
		}
		if k, bad := canon.UnknownKey(m, "executor", "request", "read", "write"); bad {
			return nil, fmt.Errorf("cache[%d]: unknown field %q", i, k)
		}
		var c CacheTokens
		c.Executor, _ = m["executor"].(string)
		c.Request, _ = m["request"].(string)
		if c.Executor == "" || len(c.Executor) > 256 {
			return nil, fmt.Errorf("cache[%d]: executor must be a non-empty string of at most 256 bytes", i)
		}
		if !canon.IsDigest(c.Request) {
			return nil, fmt.Errorf("cache[%d]: request must be a sha256 digest", i)
		}
		for _, f := range []struct {
			k string
			p *int64
		}{{"read", &c.Read}, {"write", &c.Write}} {
			n, isNum := m[f.k].(float64)
			if !isNum || n != float64(int64(n)) || n < 0 || n > 1<<53 {
				return nil, fmt.Errorf("cache[%d]: %s must be a whole number of tokens, at least 0", i, f.k)
			}
			*f.p = int64(n)
		}
		if c.Read == 0 && c.Write == 0 {
			return nil, fmt.Errorf("cache[%d]: a request with no cache tokens is not listed", i)
		}
		if i > 0 && cacheKey(out[i-1].Executor, out[i-1].Request) >= cacheKey(c.Executor, c.Request) {
			return nil, fmt.Errorf("cache[%d]: items must be sorted by executor and request, each once", i)
		}
		out = append(out, c)
	}
	return out, nil
}

// SortCache sorts a cache list as an index line holds it.
func SortCache(c []CacheTokens) {
	slices.SortFunc(c, func(a, b CacheTokens) int {
		return strings.Compare(cacheKey(a.Executor, a.Request), cacheKey(b.Executor, b.Request))
	})
}

// Receipt reads and verifies one archived receipt.
func (a *Archive) Receipt(digest string) (map[string]any, error) {
	v, err := store.Load(a.st, store.Runs, digest)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, invalid(filepath.Join(a.dir, "runs"), 0, "receipt "+digest+" is not an object")
	}
	return m, nil
}

// Request reads a stored request body, if the archive has it.
func (a *Archive) Request(digest string) (map[string]any, bool, error) {
	v, ok, err := a.st.Get(store.Values, digest)
	if err != nil || !ok {
		return nil, false, err
	}
	m, isObj := v.(map[string]any)
	return m, isObj, nil
}

// Update is what one recording run adds for one workload.
type Update struct {
	Workload string
	// Entries are the cases recorded now; Receipts holds each entry's
	// receipt by its storage digest.
	Entries  []Entry
	Receipts map[string]map[string]any
	// Requests are the live request bodies to keep for miss explanations.
	Requests []map[string]any
	// Configs are the configuration values of the live backends, kept
	// under their digests so a miss after a configuration change can name
	// the field that changed.
	Configs []map[string]any
	// Replace drops the workload's entries this update does not name
	// (--record all rewrites the workload); otherwise they are kept.
	Replace bool
	// Now stamps new entries (RFC 3339).
	Now string
}

// Apply writes an update: receipts, requests and configurations first
// (content-addressed, so a crash leaves at worst unreferenced files), made
// durable by one barrier; then the index, replaced atomically and made
// durable by a second; then files no entry references any more are
// removed. Two barriers per update, however many files it writes.
func (a *Archive) Apply(u Update) error {
	old, err := a.Entries()
	if err != nil {
		return err
	}
	batch := a.st.Batch()
	// Writes go out in parallel (the batch defers their syncs to Commit);
	// each is atomic on its own and only the index makes them reachable.
	var g errgroup.Group
	g.SetLimit(putParallelism)
	for _, e := range u.Entries {
		r, ok := u.Receipts[e.Receipt]
		if !ok {
			return fmt.Errorf("archive: entry %s/%s (repeat %d) has no receipt", e.Contender, e.Case, e.repeat())
		}
		g.Go(func() error {
			d, err := batch.Put(store.Runs, r)
			if err != nil {
				return err
			}
			if d != e.Receipt {
				return fmt.Errorf("archive: receipt for %s/%s stores as %s, not %s", e.Contender, e.Case, d, e.Receipt)
			}
			return nil
		})
	}
	for _, v := range slices.Concat(u.Requests, u.Configs) {
		g.Go(func() error {
			_, err := batch.Put(store.Values, v)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if err := batch.Commit(); err != nil {
		return err
	}
	prev := map[string]Entry{}
	for _, e := range old {
		prev[e.key()] = e
	}
	next := map[string]Entry{}
	for _, e := range old {
		if !(u.Replace && e.Workload == u.Workload) {
			next[e.key()] = e
		}
	}
	for _, e := range u.Entries {
		e.Workload = u.Workload
		if e.Repeat <= 1 {
			e.Repeat = 0 // repeat 1 keys and reads like an entry without one
		}
		if p, ok := prev[e.key()]; ok && p.Receipt == e.Receipt {
			e.RecordedAt = p.RecordedAt
		} else {
			e.RecordedAt = u.Now
		}
		next[e.key()] = e
	}
	entries := make([]Entry, 0, len(next))
	for _, e := range next {
		entries = append(entries, e)
	}
	slices.SortFunc(entries, func(x, y Entry) int { return strings.Compare(x.key(), y.key()) })
	var b bytes.Buffer
	for _, e := range entries {
		line, err := canon.Encode(e.value())
		if err != nil {
			return err
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := batch.WriteFile(IndexFile, b.Bytes()); err != nil {
		return err
	}
	if err := batch.Commit(); err != nil {
		return err
	}
	return a.prune(entries, u.Receipts)
}

// putParallelism bounds the files published at once.
const putParallelism = 64

// prune removes receipts no entry names and requests no kept receipt
// issued; fresh holds receipts just written (not read back).
func (a *Archive) prune(entries []Entry, fresh map[string]map[string]any) error {
	keepRuns := map[string]bool{}
	keepValues := map[string]bool{}
	for _, e := range entries {
		keepRuns[e.Receipt] = true
		r, ok := fresh[e.Receipt]
		if !ok {
			var err error
			if r, err = a.Receipt(e.Receipt); err != nil {
				return err
			}
		}
		effects, _ := r["effects"].([]any)
		for _, x := range effects {
			if m, ok := x.(map[string]any); ok {
				if d, ok := m["requestDigest"].(string); ok {
					keepValues[d] = true
				}
				if d, ok := m["configurationDigest"].(string); ok {
					keepValues[d] = true
				}
			}
		}
	}
	for ns, keep := range map[store.Namespace]map[string]bool{store.Runs: keepRuns, store.Values: keepValues} {
		refs, err := a.st.List(ns)
		if err != nil {
			return err
		}
		for _, d := range refs {
			if keep[d] {
				continue
			}
			hex, _ := canon.DigestHex(d)
			if err := os.Remove(filepath.Join(a.dir, string(ns), hex+".json")); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}
