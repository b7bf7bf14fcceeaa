package liverun

import (
	"testing"

	"github.com/spf13/pflag"
)

// The command that records what is missing repeats every flag that was
// set, quoted for a shell, except --record.
func TestRecordCommandRepeatsTheSetFlags(t *testing.T) {
	t.Parallel()
	fs := pflag.NewFlagSet("bench", pflag.ContinueOnError)
	fs.String("record", "none", "")
	fs.String("dir", ".algal", "")
	fs.Bool("strict-splits", false, "")
	fs.Bool("cache-effects", true, "")
	fs.StringArray("executor", nil, "")
	fs.String("out", "", "")
	if err := fs.Parse([]string{"--record=all", "--dir", "my store", "--strict-splits", "--cache-effects=false",
		"--executor", "a=openai:gpt-5", "--executor", "b=cmd:it's"}); err != nil {
		t.Fatal(err)
	}
	got := RecordCommand("assay bench", []string{"bench.config.json"}, fs)
	want := `assay bench bench.config.json --cache-effects=false --dir 'my store' --executor a=openai:gpt-5 --executor 'b=cmd:it'\''s' --strict-splits --record missing`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
