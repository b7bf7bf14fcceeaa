package diff

import (
	"cmp"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/receipt"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness/archive"
	"github.com/algal-assay/assay/report"
)

// ReplayInput says where the archived receipts and the two source trees
// are.
type ReplayInput struct {
	// Archive is the directory of archived receipts (*.json, walked
	// recursively, hidden directories skipped).
	Archive string
	// BaseTree and HeadTree are scanned for *.algal.json manifests
	// (hidden directories and testdata skipped).
	BaseTree, HeadTree string
}

// Replay verdicts besides the engine's identical, diverged and
// could-not-replay.
const (
	VerdictRemoved = report.VerdictRemoved
	VerdictError   = report.VerdictError
)

// organism is a manifest file found in a tree.
type organism struct {
	path   string // relative to the tree, slash-separated
	key    string
	digest string // "" when the file does not admit
	value  any    // canonical JSON value as read
}

// maxTreeManifests bounds a tree scan.
const maxTreeManifests = 10000

func scanTree(root string) ([]organism, error) {
	var out []organism
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return skipSourceDir(p != root, d.Name())
		}
		if !strings.HasSuffix(d.Name(), ".algal.json") || !d.Type().IsRegular() {
			return nil
		}
		if len(out) >= maxTreeManifests {
			return &fault.Error{Code: CodeArchive, Message: "more than 10000 *.algal.json files under " + root}
		}
		if o := readOrganism(root, p); o.key != "" {
			out = append(out, o)
		}
		return nil
	})
	if err != nil {
		var e *fault.Error
		if errors.As(err, &e) {
			return nil, err
		}
		return nil, &fault.Error{Code: CodeArchive, Message: "scan " + root, Err: err}
	}
	slices.SortFunc(out, func(a, b organism) int { return strings.Compare(a.path, b.path) })
	return out, nil
}

// skipSourceDir skips a directory below the root of a tree scan that
// holds no sources: hidden ones, testdata and node_modules.
func skipSourceDir(below bool, name string) error {
	if below && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
		return filepath.SkipDir
	}
	return nil
}

// readOrganism reads the manifest file p of the tree at root. A head
// file that no longer admits still names its key, so the receipts of
// that organism are compared (and reported as could-not-replay) rather
// than silently dropped; a file that names no key is no organism.
func readOrganism(root, p string) organism {
	rel, _ := filepath.Rel(root, p)
	o := organism{path: filepath.ToSlash(rel)}
	if m, err := manifest.ReadFile(p); err == nil {
		o.key, o.digest, o.value = m.Key, m.Digest, m.Value
		return o
	}
	v, err := canon.ReadFile(p, manifest.MaxManifestBytes)
	if err != nil {
		return o
	}
	if obj, ok := v.(map[string]any); ok {
		o.key, _ = obj["key"].(string)
		o.value = v
	}
	return o
}

// archived is one receipt of the archive: its canonical value (what the
// comparison replays and the stored digest hashes) and its typed fields.
type archived struct {
	file  string
	rec   map[string]any
	typed *receipt.Receipt
}

func readArchive(dir string) (recs []archived, requests int, skipped []string, err error) {
	arc, _ := archive.Open(dir) // nil when dir is no store root: then nothing is a request body
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return skipHidden(err, p != dir, d)
		}
		if !strings.HasSuffix(d.Name(), ".json") {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if isRequestBody(arc, rel) {
			requests++
			return nil
		}
		if a, ok := readArchived(p, rel); ok {
			recs = append(recs, a)
		} else {
			skipped = append(skipped, rel)
		}
		return nil
	})
	if err != nil {
		return nil, 0, nil, &fault.Error{Code: CodeArchive, Message: "receipt archive " + dir, Err: err}
	}
	return recs, requests, skipped, nil
}

// skipHidden is the walk's answer for an error or a directory: the error,
// else SkipDir for a hidden directory below the root.
func skipHidden(err error, below bool, d fs.DirEntry) error {
	if err != nil {
		return err
	}
	if below && strings.HasPrefix(d.Name(), ".") {
		return filepath.SkipDir
	}
	return nil
}

// readArchived reads the receipt file p (rel in the archive); false when
// it is no receipt. An effect record the effect contract refuses still
// names its manifest: the comparison reports it (as an error) instead of
// the archive dropping it.
func readArchived(p, rel string) (archived, bool) {
	data, err := canon.ReadBounded(p, receipt.MaxBytes)
	if err != nil {
		return archived{}, false
	}
	rec, err := receipt.Parse(data)
	if err != nil {
		return archived{}, false
	}
	typed, _ := receipt.FromValue(rec)
	return archived{file: rel, rec: rec, typed: typed}, true
}

// isRequestBody reports whether rel is one of a recording archive's live
// request bodies: values/<hex>.json directly under the archive, holding
// the object whose request digest names it (the archive verifies that on
// read). A file there that does not verify is a stranger like any other.
func isRequestBody(arc *archive.Archive, rel string) bool {
	hex, ok := strings.CutPrefix(rel, "values/")
	if arc == nil || !ok || strings.Contains(hex, "/") {
		return false
	}
	hex, ok = strings.CutSuffix(hex, ".json")
	if !ok {
		return false
	}
	_, isObj, err := arc.Request("sha256:" + hex)
	return err == nil && isObj
}

func replayArchive(in ReplayInput, trim func(string) string) (*Replays, error) {
	out := &Replays{Archive: trim(in.Archive), Skipped: []string{}, Results: []Replay{}}
	recs, requests, skipped, err := readArchive(in.Archive)
	if err != nil {
		return nil, err
	}
	out.Receipts, out.Requests, out.Skipped = len(recs), requests, append(out.Skipped, skipped...)
	if len(recs) == 0 {
		return out, nil
	}
	t, err := scanTrees(in.BaseTree, in.HeadTree)
	if err != nil {
		return nil, err
	}
	for _, a := range recs {
		out.Results = append(out.Results, t.replay(a, out)...)
	}
	slices.SortFunc(out.Results, func(a, b Replay) int {
		return cmp.Or(strings.Compare(a.Key, b.Key), strings.Compare(a.File, b.File), strings.Compare(a.HeadPath, b.HeadPath))
	})
	return out, nil
}

// trees are the organisms of both trees: the base's by digest, the
// head's by key, and a store every admitted one is in, so children named
// by digest resolve from either tree.
type trees struct {
	baseByDigest map[string]organism
	headByKey    map[string][]organism
	store        store.Store
}

func scanTrees(baseTree, headTree string) (*trees, error) {
	baseOrgs, err := scanTree(baseTree)
	if err != nil {
		return nil, err
	}
	headOrgs, err := scanTree(headTree)
	if err != nil {
		return nil, err
	}
	t := &trees{baseByDigest: map[string]organism{}, headByKey: map[string][]organism{}, store: store.NewMemStore()}
	for _, o := range baseOrgs {
		if _, dup := t.baseByDigest[o.digest]; o.digest != "" && !dup {
			t.baseByDigest[o.digest] = o
		}
	}
	for _, o := range headOrgs {
		t.headByKey[o.key] = append(t.headByKey[o.key], o)
	}
	if err := t.admit(append(slices.Clone(baseOrgs), headOrgs...)); err != nil {
		return nil, err
	}
	return t, nil
}

// admit puts every organism that admits into the trees' store.
func (t *trees) admit(orgs []organism) error {
	for _, o := range orgs {
		if o.digest == "" {
			continue
		}
		if _, err := t.store.Put(store.Manifests, o.value); err != nil {
			return &fault.Error{Code: CodeArchive, Message: "admit " + o.path, Err: err}
		}
	}
	return nil
}

// replay replays one archived receipt of a base organism against every
// distinct revision of it at head (none when the organism is not the
// base's or is unchanged at head), counting it in out.Touched.
func (t *trees) replay(a archived, out *Replays) []Replay {
	md, digest := a.typed.ManifestDigest, a.typed.Digest
	bo, ok := t.baseByDigest[md]
	if !ok {
		return nil
	}
	heads := t.headByKey[bo.key]
	if slices.ContainsFunc(heads, func(o organism) bool { return o.digest == md }) {
		return nil // the organism is unchanged at head
	}
	out.Touched++
	stored, _ := canon.Digest(a.rec)
	r := Replay{File: a.file, Receipt: digest, Stored: stored, Key: bo.key, BaseManifest: md, BasePath: bo.path}
	if len(heads) == 0 {
		r.Verdict, r.Detail = VerdictRemoved, "no *.algal.json at head has key "+bo.key
		return []Replay{r}
	}
	var results []Replay
	seen := map[string]bool{}
	for _, ho := range heads {
		id := ho.digest
		if id == "" {
			id = "invalid:" + ho.path
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		results = append(results, t.against(r, a.rec, ho))
	}
	return results
}

// against replays a receipt against one head revision ho.
func (t *trees) against(r Replay, rec map[string]any, ho organism) Replay {
	r.HeadManifest, r.HeadPath = ho.digest, ho.path
	c, err := vm.CompareValue(rec, ho.value, vm.ReplayOptions{Store: t.store})
	if err != nil {
		r.Verdict, r.Detail = VerdictError, vm.CodedMessage(err)
		return r
	}
	r.Verdict, r.Detail = c.Verdict, comparisonDetail(c)
	if c.Divergence != nil && c.Verdict == vm.VerdictDiverged {
		r.Divergence = c.Divergence.Kind
	}
	return r
}

// comparisonDetail says in one line where the revision departed from the
// record, or why it could not be replayed.
func comparisonDetail(c *vm.Comparison) string {
	switch {
	case c.Reason != nil:
		return report.ClipLine(reasonDetail(c.Reason.Code, c.Reason.Path, c.Reason.Detail), 200)
	case c.Divergence != nil:
		return report.ClipLine(divergenceDetail(c), 200)
	}
	return "reproduces the recorded trace"
}

// divergenceDetail says where the revision first departed from the
// record, and how the outcome changed.
func divergenceDetail(c *vm.Comparison) string {
	s := "first divergence: " + c.Divergence.Kind
	if c.Divergence.Path != "" {
		s += " " + c.Divergence.Path
	}
	if d := c.Divergence.Detail; d != nil && *d != "" {
		s += " (" + *d + ")"
	}
	if c.OriginalOutcome != c.RevisedOutcome && c.RevisedOutcome != "" {
		s += "; outcome " + c.OriginalOutcome + " -> " + c.RevisedOutcome
	}
	return s
}

// reasonDetail says why a receipt could not be replayed: the code, where,
// and the detail.
func reasonDetail(code, path string, detail *string) string {
	s := code
	if path != "" {
		s += " at " + path
	}
	if detail != nil && *detail != "" {
		s += ": " + *detail
	}
	return s
}

// DefaultArchive returns dir/receipts when it is a directory, else "".
func DefaultArchive(dir string) string {
	p := filepath.Join(dir, "receipts")
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		return p
	}
	return ""
}
