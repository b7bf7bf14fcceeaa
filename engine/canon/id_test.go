package canon

import (
	"strings"
	"testing"
)

func TestIsID(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		s  string
		ok bool
	}{
		{"a", true},
		{"inbox-2", true},
		{strings.Repeat("a", MaxIDLen), true},
		{strings.Repeat("a", MaxIDLen+1), false},
		{"", false},
		{"2inbox", false},
		{"-inbox", false},
		{"Inbox", false},
		{"in_box", false},
		{"in.box", false},
		{"in/box", false},
		{"inbøx", false},
	} {
		if got := IsID(c.s); got != c.ok {
			t.Errorf("IsID(%q) = %v, want %v", c.s, got, c.ok)
		}
	}
}
