package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/algal-assay/assay/harness/workload"
)

// pfConfig is the part of a promptfoo config the comparison relies on.
type pfConfig struct {
	Prompts   []string `yaml:"prompts"`
	Providers []string `yaml:"providers"`
	Tests     []struct {
		Description string            `yaml:"description"`
		Vars        map[string]string `yaml:"vars"`
		Assert      []struct {
			Type  string `yaml:"type"`
			Value string `yaml:"value"`
		} `yaml:"assert"`
	} `yaml:"tests"`
}

// echo renders the config's prompt for a test's vars, as promptfoo's echo
// provider returns it (the prompt holds only {{ticket}} and {{answer}}).
func echo(prompt string, vars map[string]string) string {
	return strings.NewReplacer("{{ticket}}", vars["ticket"], "{{answer}}", vars["answer"]).Replace(prompt)
}

// TestBothSidesHoldTheSameCasesAndAnswers writes both sides from one list
// and reads them back as each tool would: the Assay workload through
// Assay's own loader, the promptfoo config as YAML with the echo and the
// regex assertion applied by hand. Every case must carry the same ticket,
// answer and expected queue on both sides, and each side must pass
// exactly the cases whose answer is the expected queue.
func TestBothSidesHoldTheSameCasesAndAnswers(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 7, 2001} {
		cs := Cases(n)
		dir := t.TempDir()
		if err := WritePromptfoo(filepath.Join(dir, "promptfoo"), cs); err != nil {
			t.Fatal(err)
		}
		if err := WriteAssay(filepath.Join(dir, "assay"), filepath.Join("..", "..", "fixtures", "triage"), cs); err != nil {
			t.Fatal(err)
		}

		w, err := workload.Load(filepath.Join(dir, "assay", "promptfoo.bench.yaml"))
		if err != nil {
			t.Fatalf("n=%d: the Assay workload does not load: %v", n, err)
		}
		if len(w.Systems) != 1 || len(w.Cases) != n {
			t.Fatalf("n=%d: Assay workload has %d systems and %d cases, want 1 and %d", n, len(w.Systems), len(w.Cases), n)
		}

		b, err := os.ReadFile(filepath.Join(dir, "promptfoo", "config.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var pf pfConfig
		if err := yaml.Unmarshal(b, &pf); err != nil {
			t.Fatalf("n=%d: config.yaml: %v", n, err)
		}
		if len(pf.Prompts) != 1 || len(pf.Providers) != 1 || pf.Providers[0] != "echo" || len(pf.Tests) != n {
			t.Fatalf("n=%d: config has %d prompts, providers %v, %d tests", n, len(pf.Prompts), pf.Providers, len(pf.Tests))
		}

		assayPassed, pfPassed := 0, 0
		for i, c := range cs {
			wc, pt := w.Cases[i], pf.Tests[i]
			answer := wc.Responses()["model"]["route"]
			if wc.ID != c.ID || wc.Args()["ticket"] != c.Ticket || wc.Expect()["queue"] != c.Expect || len(answer) != 1 || answer[0] != c.Answer {
				t.Fatalf("case %d: Assay has %s %v %v %v, want %+v", i, wc.ID, wc.Args(), wc.Expect(), answer, c)
			}
			if pt.Description != c.ID || pt.Vars["ticket"] != c.Ticket || pt.Vars["answer"] != c.Answer || len(pt.Assert) != 1 || pt.Assert[0].Type != "regex" {
				t.Fatalf("case %d: promptfoo has %+v, want %+v", i, pt, c)
			}
			if answer[0] == wc.Expect()["queue"] {
				assayPassed++
			}
			if regexp.MustCompile(pt.Assert[0].Value).MatchString(echo(pf.Prompts[0], pt.Vars)) {
				pfPassed++
			}
		}
		if want := Passed(cs); assayPassed != want || pfPassed != want {
			t.Errorf("n=%d: passed: Assay %d, promptfoo %d, want both %d", n, assayPassed, pfPassed, want)
		}
	}
}

// TestTenThousandCasesTally pins the tally README.md tells a reader to
// check in both tools' output.
func TestTenThousandCasesTally(t *testing.T) {
	t.Parallel()
	if got := Passed(Cases(10000)); got != 8571 {
		t.Errorf("Passed(Cases(10000)) = %d, want 8571", got)
	}
}
