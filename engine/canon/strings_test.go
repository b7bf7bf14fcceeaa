package canon

import "testing"

func TestStringsEncodesAnArray(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{nil, `[]`},
		{[]string{}, `[]`},
		{[]string{"b", "a", "é"}, `["b","a","é"]`},
	} {
		got, err := Encode(map[string]any{"list": Strings(tc.in)})
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != `{"list":`+tc.want+`}` {
			t.Errorf("Strings(%#v) encodes as %s, want %s", tc.in, got, tc.want)
		}
	}
}
