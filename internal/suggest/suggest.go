// Package suggest finds the known name a mistyped one most likely meant, so
// that an error about an unknown op, key, system, case or executor can end
// with `(did you mean "eq"?)`.
//
// Closeness is the Levenshtein edit distance over characters (a swap of two
// neighbouring characters counts as one edit, as a typist makes it), with a bound
// that grows with the name's length, so short names only match one-letter
// slips while longer ones tolerate a dropped and a doubled letter. A match
// that differs only in letter case always wins. The answer does not depend
// on the order of the candidates.
package suggest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agnivade/levenshtein"
)

// MaxDistance is the largest edit distance Closest accepts for a name of
// the given length in characters: 1 up to four characters, then one more
// per three characters, at most 3.
func MaxDistance(chars int) int {
	return max(1, min(3, (chars+1)/3))
}

// Closest returns the candidate nearest to name, and false when no
// candidate is within MaxDistance of it. Ties go to the candidate that
// sorts first, so the answer is deterministic.
func Closest(name string, candidates []string) (string, bool) {
	if name == "" {
		return "", false
	}
	limit := MaxDistance(utf8.RuneCountInString(name))
	best, bestDist := "", limit+1
	for _, c := range candidates {
		if c == "" {
			continue
		}
		d := distance(name, c)
		if d < bestDist || d == bestDist && c < best {
			best, bestDist = c, d
		}
	}
	return best, bestDist <= limit
}

// distance is the edit distance from name to c, where a case slip counts
// 0 and one exchange of neighbouring characters counts 1.
func distance(name, c string) int {
	d := levenshtein.ComputeDistance(name, c)
	switch {
	case d > 0 && strings.EqualFold(name, c):
		return 0 // a case slip is the likeliest mistake of all
	case d == 2 && swapped(name, c):
		return 1
	}
	return d
}

// DidYouMean returns ` (did you mean "x"?)` naming the closest candidate,
// or "" when none is close; it is meant to be appended to an error message.
func DidYouMean(name string, candidates []string) string {
	c, ok := Closest(name, candidates)
	if !ok || c == name {
		return ""
	}
	return " (did you mean " + strconv.Quote(c) + "?)"
}

// swapped reports whether a and b differ by exactly one exchange of two
// neighbouring characters.
func swapped(a, b string) bool {
	ra, rb := []rune(a), []rune(b)
	if len(ra) != len(rb) {
		return false
	}
	i := 0
	for i < len(ra) && ra[i] == rb[i] {
		i++
	}
	return i+1 < len(ra) && ra[i] == rb[i+1] && ra[i+1] == rb[i] && string(ra[i+2:]) == string(rb[i+2:])
}

// File returns ` (did you mean "x"?)` for a file named as written (relative
// to dir unless absolute) that does not exist, naming the closest entry of
// the directory it would be in, spelled as the name was written; "" when
// nothing there is close or the directory does not read. Only the last
// element is corrected: a mistyped directory gets no suggestion.
func File(dir, written string) string {
	if written == "" {
		return ""
	}
	p := written
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, filepath.FromSlash(written))
	}
	entries, err := os.ReadDir(filepath.Dir(p))
	if err != nil {
		return ""
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	base := filepath.Base(p)
	c, ok := Closest(base, names)
	if !ok || c == base {
		return ""
	}
	// Keep what was written before the last element, in its own slashes.
	i := strings.LastIndexAny(written, `/`+string(filepath.Separator))
	return " (did you mean " + strconv.Quote(written[:i+1]+c) + "?)"
}
