package canon

import "testing"

func TestCloneIsDeep(t *testing.T) {
	t.Parallel()
	v, err := Parse([]byte(`{"a":[1,{"b":"x"}],"c":null}`), 0)
	if err != nil {
		t.Fatal(err)
	}
	c := Clone(v).(map[string]any)
	c["a"].([]any)[1].(map[string]any)["b"] = "y"
	c["c"] = true
	got, _ := Encode(v)
	if string(got) != `{"a":[1,{"b":"x"}],"c":null}` {
		t.Fatalf("editing the clone changed the original: %s", got)
	}
	if e, _ := Encode(c); string(e) != `{"a":[1,{"b":"y"}],"c":true}` {
		t.Fatalf("clone: %s", e)
	}
}
