package canon

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/fault/faulttest"
)

// sharedContracts locates ../shared/contracts from the module root; the
// vectors are project data (not upstream's corpus), present in every clone's
// workspace beside the repository.
func sharedContracts(t *testing.T) string {
	t.Helper()
	dir := filepath.Join("..", "..", "..", "shared", "contracts")
	if _, err := os.Stat(filepath.Join(dir, "canonical-vectors.json")); err != nil {
		t.Skipf("shared contracts not found at %s: %v", dir, err)
	}
	return dir
}

type vector struct {
	Input     string `json:"input"`
	Canonical string `json:"canonical"`
	Source    string `json:"source"`
}

func TestSharedCanonicalVectors(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join(sharedContracts(t), "canonical-vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vs []vector
	if err := json.Unmarshal(raw, &vs); err != nil {
		t.Fatal(err)
	}
	passed := 0
	for _, v := range vs {
		got, err := Canonicalize([]byte(v.Input), 0)
		if strings.HasPrefix(v.Source, "duplicate keys") {
			// Upstream lets the last duplicate win; Assay rejects them
			// (docs/divergences.md).
			faulttest.Want(t, err, fault.Parse)
			passed++
			continue
		}
		if err != nil {
			t.Errorf("%s: %q: %v", v.Source, v.Input, err)
			continue
		}
		if string(got) != v.Canonical {
			t.Errorf("%s: %q: got %q want %q", v.Source, v.Input, got, v.Canonical)
			continue
		}
		passed++
	}
	if passed < 90 {
		t.Errorf("only %d of %d vectors passed", passed, len(vs))
	}
}

func TestEncodeTable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{`1e21`, `1e+21`},
		{`1e-7`, `1e-7`},
		{`-0`, `0`},
		{`123456789012345680000`, `123456789012345680000`},
		{`9007199254740993`, `9007199254740992`},
		{`0.1`, `0.1`},
		{`-1.5e-10`, `-1.5e-10`},
		{`1.25e+25`, `1.25e+25`},
		{`100`, `100`},
		{`1e100`, `1e+100`},
		{`0.0000012`, `0.0000012`},
		{`123.456`, `123.456`},
		{`-9007199254740991`, `-9007199254740991`},
		{`"<&>"`, `"<&>"`},
		{`"\u2028\u2029"`, "\"\u2028\u2029\""},
		{`"\u007f\ufeff"`, "\"\x7f\ufeff\""},
		{`{"b":{"z":[],"y":{}},"a":true,"":false}`, `{"":false,"a":true,"b":{"y":{},"z":[]}}`},
		{`{"😀":1,"\ue000":2}`, "{\"😀\":1,\"\ue000\":2}"},
		{`{"\ud800\udc01":1,"\ud800\udc00":2}`, "{\"\U00010000\":2,\"\U00010001\":1}"},
		{`{"4294967295":1,"4294967294":2,"01":3,"1":4}`, `{"1":4,"4294967294":2,"01":3,"4294967295":1}`},
		{` [ 1 , 2 ] `, `[1,2]`},
	} {
		got, err := Canonicalize([]byte(tc.in), 0)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if string(got) != tc.want {
			t.Errorf("%s: got %s want %s", tc.in, got, tc.want)
		}
	}
}

func TestParseRejects(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", MaxDepth+2) + strings.Repeat("]", MaxDepth+2)
	for _, tc := range []struct {
		name, in, code string
		offset         int
	}{
		{"bom", "\ufeff{}", fault.Parse, 0},
		{"bad utf8", "\"a\xffb\"", fault.Parse, 2},
		{"overlong utf8", "\"\xc0\xaf\"", fault.Parse, 1},
		{"duplicate key", `{"a":1,"b":2,"a":3}`, fault.Parse, 13},
		{"trailing data", `{} {}`, fault.Parse, 3},
		{"nan", `NaN`, fault.Parse, 0},
		{"infinity", `1e400`, fault.Parse, 0},
		{"neg infinity", `-1e400`, fault.Parse, 0},
		{"lone high", `"\ud800"`, fault.Parse, 1},
		{"lone low", `"\udc00"`, fault.Parse, 1},
		{"high then non-low", `"\ud800\u0041"`, fault.Parse, 1},
		{"raw control", "\"a\nb\"", fault.Parse, 2},
		{"leading zero", `01`, fault.Parse, 1},
		{"plus", `+1`, fault.Parse, 0},
		{"dot", `1.`, fault.Parse, 0},
		{"exp", `1e`, fault.Parse, 0},
		{"single quote", `'a'`, fault.Parse, 0},
		{"trailing comma", `[1,]`, fault.Parse, 3},
		{"object trailing comma", `{"a":1,}`, fault.Parse, 7},
		{"unterminated", `{"a":1`, fault.Parse, 0},
		{"empty", ``, fault.Parse, 0},
		{"bad escape", `"\x"`, fault.Parse, 1},
		{"too deep", deep, fault.BudgetExhausted, MaxDepth + 1},
		{"bad literal", `tru`, fault.Parse, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.in), 0)
			faulttest.Want(t, err, tc.code)
			if ce := err.(*fault.Error); ce.Offset != tc.offset {
				t.Errorf("offset %d, want %d (%v)", ce.Offset, tc.offset, err)
			}
		})
	}
}

func TestDepthBoundary(t *testing.T) {
	t.Parallel()
	ok := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	if _, err := Parse([]byte(ok), 0); err != nil {
		t.Fatalf("depth %d must parse: %v", MaxDepth, err)
	}
	v, _ := Parse([]byte(ok), 0)
	if _, err := Encode(v); err != nil {
		t.Fatalf("depth %d must encode: %v", MaxDepth, err)
	}
	var deep any = []any{}
	for i := 0; i < MaxDepth+1; i++ {
		deep = []any{deep}
	}
	_, err := Encode(deep)
	faulttest.Want(t, err, fault.BudgetExhausted)
}

func TestSizeBound(t *testing.T) {
	t.Parallel()
	if _, err := Parse([]byte(`"abc"`), 5); err != nil {
		t.Fatalf("5 bytes at bound 5: %v", err)
	}
	_, err := Parse([]byte(`"abcd"`), 5)
	faulttest.Want(t, err, fault.BudgetExhausted)
	_, err = ParseReader(strings.NewReader(`"abcd"`), 5)
	faulttest.Want(t, err, fault.BudgetExhausted)
	v, err := ParseReader(strings.NewReader(`"abc"`), 5)
	if err != nil || v != "abc" {
		t.Fatalf("got %v, %v", v, err)
	}
}

func TestEncodeRejectsNonJSON(t *testing.T) {
	t.Parallel()
	_, err := Encode(math.NaN())
	faulttest.Want(t, err, fault.Parse)
	_, err = Encode(math.Inf(-1))
	faulttest.Want(t, err, fault.Parse)
	_, err = Encode(map[string]any{"a": 3})
	faulttest.Want(t, err, fault.Internal)
}

func TestDigest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{`null`, "sha256:74234e98afe7498fb5daf1f36ac2d78acc339464f950703b8c019892f982b90b"},
		{`{"b":2,"a":1}`, "sha256:43258cff783fe7036d8a43033f830adfc60ec037382473548ac742b888292777"},
		{`{"a":1.0,"b":2e0}`, "sha256:43258cff783fe7036d8a43033f830adfc60ec037382473548ac742b888292777"},
	} {
		v, err := Parse([]byte(tc.in), 0)
		if err != nil {
			t.Fatal(err)
		}
		d, err := Digest(v)
		if err != nil || d != tc.want {
			t.Errorf("%s: got %s %v want %s", tc.in, d, err, tc.want)
		}
		if !IsDigest(d) {
			t.Errorf("%s is not a digest token", d)
		}
	}
}

func TestIsDigest(t *testing.T) {
	t.Parallel()
	good := "sha256:" + strings.Repeat("0a", 32)
	if !IsDigest(good) {
		t.Fatal("valid token rejected")
	}
	for _, bad := range []string{
		"", "sha256:", good[:70], good + "0", "SHA256:" + good[7:], "sha256:" + strings.Repeat("0A", 32),
		"sha256:" + strings.Repeat("../", 21) + "a", "sha512:" + good[7:], "sha256:" + strings.Repeat("g", 64),
	} {
		if IsDigest(bad) {
			t.Errorf("IsDigest(%q) = true", bad)
		}
	}
	if h, ok := DigestHex(good); !ok || len(h) != 64 {
		t.Errorf("DigestHex: %q %v", h, ok)
	}
}

func TestCompareUTF16(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"a", "b", -1}, {"b", "a", 1}, {"a", "a", 0}, {"", "a", -1}, {"ab", "a", 1},
		{"\U0001F600", "\uE000", -1}, // surrogate D83D sorts before E000
		{"\uE000", "\U0001F600", 1},
		{"\U00010000", "\U00010001", -1},
		{"é", "z", 1}, {"Z", "a", -1}, {"e\u0301", "é", -1},
		{"x\U0001F600", "x\uFFFF", -1},
	} {
		if got := CompareUTF16(tc.a, tc.b); got != tc.want {
			t.Errorf("CompareUTF16(%q,%q) = %d want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestRoundTripProperty: canon(parse(canon(x))) == canon(x), and the digest
// does not depend on the key order of the input spelling.
func TestRoundTripProperty(t *testing.T) {
	t.Parallel()
	docs := []string{
		`{"z":[1,2.5,{"q":null}],"a":"x\u0000y","10":true,"2":-3e-9}`,
		`[{"b":1,"a":2},{"a":2,"b":1},"\ud83d\ude00"]`,
		`{"nested":{"deeper":{"deepest":[1e300,-1e-300,0.1,12345678901234567890]}}}`,
	}
	for _, d := range docs {
		c1, err := Canonicalize([]byte(d), 0)
		if err != nil {
			t.Fatal(err)
		}
		c2, err := Canonicalize(c1, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(c1, c2) {
			t.Errorf("not idempotent: %s vs %s", c1, c2)
		}
	}
	a, _ := Parse([]byte(`{"x":{"p":1,"q":[2,{"m":3,"n":4}]},"y":"s"}`), 0)
	b, _ := Parse([]byte(`{"y":"s","x":{"q":[2,{"n":4,"m":3}],"p":1}}`), 0)
	da, _ := Digest(a)
	db, _ := Digest(b)
	if da != db {
		t.Errorf("key order changed the digest: %s vs %s", da, db)
	}
}

func TestReadFileAdmission(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	reg := filepath.Join(dir, "doc.json")
	if err := os.WriteFile(reg, []byte(`{"ok":true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(reg, 0); err != nil {
		t.Fatalf("regular file: %v", err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(reg, link); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(link, 0); err != nil {
		t.Fatalf("symlink to regular file: %v", err)
	}
	_, err := ReadFile(dir, 0)
	faulttest.Want(t, err, fault.IOFailed)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	_, err = ReadFile(fifo, 0) // must not block
	faulttest.Want(t, err, fault.IOFailed)
	if !strings.Contains(err.Error(), fifo) {
		t.Errorf("error does not name the file: %v", err)
	}
	_, err = ReadFile("/dev/null", 0)
	faulttest.Want(t, err, fault.IOFailed)
	_, err = ReadFile(reg, 5)
	faulttest.Want(t, err, fault.BudgetExhausted)
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("\ufeff{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ReadFile(bad, 0)
	faulttest.Want(t, err, fault.Parse)
	if !strings.Contains(err.Error(), "bad.json") {
		t.Errorf("error does not name the file: %v", err)
	}
}

// TestUpstreamBundleDigests proves our digests equal upstream's: every
// manifest in every upstream bundle is named by its digest.
func TestUpstreamBundleDigests(t *testing.T) {
	t.Parallel()
	root := os.Getenv("ASSAY_UPSTREAM_DIR")
	if root == "" {
		t.Skip("ASSAY_UPSTREAM_DIR unset: upstream conformance corpus not available")
	}
	files, err := filepath.Glob(filepath.Join(root, "examples", "bundles", "*.bundle.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no bundles under %s: %v", root, err)
	}
	checked := 0
	for _, f := range files {
		v, err := ReadFile(f, 0)
		if err != nil {
			t.Fatal(err)
		}
		b := v.(map[string]any)
		for _, section := range []string{"manifests", "values"} {
			entries, _ := b[section].(map[string]any)
			for key, m := range entries {
				d, err := Digest(m)
				if err != nil {
					t.Fatal(err)
				}
				if d != key {
					t.Errorf("%s: %s entry hashes to %s, bundle names it %s", filepath.Base(f), section, d, key)
				}
				checked++
			}
		}
		if want := "sha256:" + strings.TrimSuffix(filepath.Base(f), ".bundle.json"); b["root"] != want {
			t.Errorf("%s: root %v, file name says %s", f, b["root"], want)
		}
	}
	if checked == 0 {
		t.Fatal("bundles held no manifests")
	}
	t.Logf("%d bundle entries re-hashed to their keys", checked)
}

func TestUnknownKey(t *testing.T) {
	t.Parallel()
	m := map[string]any{"id": 1.0, "zeta": 2.0, "beta": 3.0, "args": 4.0}
	if k, bad := UnknownKey(m, "id", "args"); !bad || k != "beta" {
		t.Errorf("got %q %v, want the first unknown key in byte order, beta", k, bad)
	}
	if k, bad := UnknownKey(m, "id", "args", "beta", "zeta"); bad {
		t.Errorf("all keys allowed, got %q", k)
	}
	if _, bad := UnknownKey(map[string]any{}); bad {
		t.Error("an empty object has no unknown key")
	}
}

// TestReadFileSyntaxErrorsCarryLineColumn: a syntax error in a file is
// located the way an editor counts (line and column, 1-based, columns in
// characters), not as a byte offset a person has to count to.
func TestReadFileSyntaxErrorsCarryLineColumn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		doc, want string
	}{
		{"{\n  \"a\": 1,\n  \"b\": {,\n}\n", "bad.json:3:9: expected a string key"},
		{"{\"ü\": tru}", "bad.json:1:7: "},
		{"{\"a\":1}\n\n  x", "bad.json:3:3: "},
	} {
		bad := filepath.Join(dir, "bad.json")
		if err := os.WriteFile(bad, []byte(tc.doc), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadFile(bad, 0)
		faulttest.Want(t, err, fault.Parse)
		if got := err.Error(); !strings.Contains(got, tc.want) || strings.Contains(got, "byte ") {
			t.Errorf("%q: error %q, want it to contain %q and no byte offset", tc.doc, got, tc.want)
		}
	}
}

// Locate finds keys and indices, stops at the deepest member a path
// reaches, and points a key's position at its opening quote.
func TestLocate(t *testing.T) {
	t.Parallel()
	doc := []byte("{\"a\": [1, {\"b\":\n  \"x\"}], \"c\": true}")
	cases := []struct {
		path                []string
		key, value, matched int
	}{
		{nil, 0, 0, 0},
		{[]string{"a"}, 1, 6, 1},
		{[]string{"a", "1"}, 10, 10, 2},
		{[]string{"a", "1", "b"}, 11, 18, 3},
		{[]string{"c"}, 25, 30, 1},
		{[]string{"a", "7"}, 1, 6, 1},
		{[]string{"a", "1", "b", "deeper"}, 11, 18, 3},
		{[]string{"missing"}, 0, 0, 0},
	}
	for _, c := range cases {
		got := Locate(doc, c.path...)
		if got != (Location{Key: c.key, Value: c.value, Matched: c.matched}) {
			t.Errorf("Locate(%q) = %+v, want key %d value %d matched %d", c.path, got, c.key, c.value, c.matched)
		}
	}
	if l, c := LineColumn(doc, 18); l != 2 || c != 3 {
		t.Errorf("LineColumn(18) = %d:%d, want 2:3", l, c)
	}
}

// A file that does not exist is IO_FAILED naming it, with a did-you-mean
// over its directory kept in the hint (Error() is unchanged).
func TestReadMissingFileHints(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "echo.algal.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "echo.algal.jsn")
	_, err := ReadFile(missing, 0)
	e, ok := fault.As(err)
	if !ok || e.Code != fault.IOFailed || e.Error() != missing+": no such file or directory" {
		t.Fatalf("got %v", err)
	}
	if want := ` (did you mean "` + filepath.Join(dir, "echo.algal.json") + `"?)`; e.Hint != want || fault.Advised(err) != e.Error()+want {
		t.Errorf("hint %q, advised %q", e.Hint, fault.Advised(err))
	}
}
