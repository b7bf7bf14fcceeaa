package expr

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/algal-assay/assay/engine/fault"
)

// evalMachine evaluates p as Program.eval does but hands back the machine,
// so a test can read what the evaluation measured.
func evalMachine(p *Program, env map[string]any, fuel int) (*machine, *fault.Error) {
	m := &machine{left: fuel, env: env, vars: make([]any, p.slots), names: make([]string, p.slots)}
	_, err := m.eval(p.root)
	return m, err
}

// TestLongStringsScannedOnce pins the fix for issue 15: a fold comparing
// the same two 64 KiB env strings ~100,000 times scans their bytes once,
// not once per comparison (the burn, 9 to 11 fuel per comparison, does not
// depend on string length, so a scan per use was ~1,000x slower per fuel
// unit than any other op).
func TestLongStringsScannedOnce(t *testing.T) {
	t.Parallel()
	s := strings.Repeat("abcdefgh", MaxStringBytes/8)
	u := s[:len(s)-1] + "i"
	env := map[string]any{"s": s, "t": u, "l": []any{u, "x", s}, "xs": listOf(MaxListLen, func(int) any { return 0.0 })}
	get := func(n string) any { return []any{"get", n} }
	for name, body := range map[string]any{
		"eq":       []any{"eq", get("s"), get("t")},
		"neq":      []any{"neq", get("t"), get("s")},
		"lt":       []any{"lt", get("s"), get("t")},
		"gte":      []any{"gte", get("t"), get("s")},
		"contains": []any{"contains", get("l"), get("s")},
		"sort":     []any{"sort", get("l")},
		"list":     []any{"list", get("s"), get("t")},
		"slen":     []any{"slen", get("s")},
	} {
		inner := []any{"fold", get("xs"), 0.0, "a", "x", body}
		p, err := Compile([]any{"fold", get("xs"), 0.0, "b", "y", inner}, []string{"s", "t", "l", "xs"})
		if err != nil {
			t.Fatal(err)
		}
		m, e := evalMachine(p, env, MaxFuel)
		if e == nil || e.Code != CodeFuel {
			t.Fatalf("%s: want EXPR_FUEL after the whole budget, got %v", name, e)
		}
		// Each string's size once, and each ordered pair once.
		if limit := 4 * len(s); m.measured > limit {
			t.Errorf("%s: scanned %d bytes of long text for one evaluation, want at most %d", name, m.measured, limit)
		}
	}
}

// TestLongTextResultsUnchanged checks that the remembered sizes and
// orders give exactly the results and burns of a fresh evaluation, on
// pairs that differ at the start, the middle, the end, only in length,
// and across the supplementary / U+E000..U+FFFF split.
func TestLongTextResultsUnchanged(t *testing.T) {
	t.Parallel()
	base := strings.Repeat("ab\"\\\x01éq", 400) // escapes make size != length
	variants := []string{
		base, base + "x", "z" + base[1:], base[:1200] + "😀" + base[1200:], base[:1200] + "\uffff" + base[1200:],
		base[:len(base)-1] + "\ue000", base[:len(base)-1] + "😀",
	}
	for i, a := range variants {
		for j, b := range variants {
			env := map[string]any{"a": a, "b": b}
			for _, op := range []string{"eq", "neq", "lt", "lte", "gt", "gte"} {
				prog := []any{"list", []any{op, []any{"get", "a"}, []any{"get", "b"}}, []any{op, []any{"get", "a"}, []any{"get", "b"}}}
				v, burn, err := Run(prog, env, DefaultFuel)
				if err != nil {
					t.Fatalf("%s %d %d: %v", op, i, j, err)
				}
				want := referenceCompare(a, b)
				var got bool
				switch op {
				case "eq":
					got = want == 0
				case "neq":
					got = want != 0
				case "lt":
					got = want < 0
				case "lte":
					got = want <= 0
				case "gt":
					got = want > 0
				default:
					got = want >= 0
				}
				l := v.([]any)
				if l[0] != got || l[1] != got {
					t.Errorf("%s(%d, %d) = %v, want %v twice", op, i, j, l, got)
				}
				if wantBurn := 1 + 2*(2+4+4) + map[bool]int{true: 4, false: 0}[op == "eq" || op == "neq"]; burn != wantBurn {
					t.Errorf("%s(%d, %d) burned %d, want %d", op, i, j, burn, wantBurn)
				}
			}
		}
	}
}

// referenceCompare orders by UTF-16 code units the slow, obvious way.
func referenceCompare(a, b string) int {
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
}

// TestStrLenMatchesReference checks the word-at-a-time canonical size
// against a byte-by-byte count, for every byte value at every offset of a
// word and for random text.
func TestStrLenMatchesReference(t *testing.T) {
	t.Parallel()
	ref := func(s string) int {
		n := 2
		for i := 0; i < len(s); i++ {
			switch c := s[i]; {
			case c == '"' || c == '\\' || c == '\b' || c == '\t' || c == '\n' || c == '\f' || c == '\r':
				n += 2
			case c < 0x20:
				n += 6
			default:
				n++
			}
		}
		return n
	}
	for c := 0; c < 256; c++ {
		for off := 0; off < 17; off++ {
			s := strings.Repeat("a", off) + string([]byte{byte(c)}) + strings.Repeat("b", 16-off)
			if got, want := strLen(s), ref(s); got != want {
				t.Fatalf("strLen(byte %#x at %d) = %d, want %d", c, off, got, want)
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("ab\"\\\x00\x1f\x20\x21\x5b\x5c\x5d\x7f\x80\xff\n")
	for range 2000 {
		b := make([]byte, r.IntN(100))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		if got, want := strLen(string(b)), ref(string(b)); got != want {
			t.Fatalf("strLen(%q) = %d, want %d", b, got, want)
		}
	}
}

// TestLongCompareAllocatesNothing: a comparison of two long strings costs
// no allocation once the machine is warm.
func TestLongCompareAllocatesNothing(t *testing.T) {
	s := strings.Repeat("é😀\uffff", 7000)
	env, err := Admit(map[string]any{"s": s, "t": s[:len(s)-3] + "x"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile([]any{"and", []any{"lt", []any{"get", "t"}, []any{"get", "s"}}, []any{"neq", []any{"get", "s"}, []any{"get", "t"}}}, []string{"s", "t"})
	if err != nil {
		t.Fatal(err)
	}
	if allocs := testing.AllocsPerRun(50, func() {
		if v, _, err := p.EvalEnv(env, DefaultFuel); err != nil || v != true {
			t.Fatalf("got %v, %v", v, err)
		}
	}); allocs != 0 {
		t.Errorf("long string comparison allocated %.1f times per evaluation", allocs)
	}
}
