package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

var queues = []string{"billing", "technical", "account", "other"}

// templates are ticket texts per queue; %d is the ticket's number, so no
// two tickets are the same text. None contains "Queue:" (promptfoo's
// assertion looks for the answer line) or a template brace.
var templates = map[string][]string{
	"billing": {
		"I was charged twice for invoice %d this month, please refund one of the charges.",
		"Order %d: is there a student discount on the yearly plan before I renew?",
		"The card ending in %d was declined when I tried to upgrade to the team plan.",
	},
	"technical": {
		"The desktop app crashes every time I click Export to CSV on report %d.",
		"Since the last update, dashboard %d shows a blank page and a 500 error.",
		"Webhook %d stopped firing after we rotated the signing secret yesterday.",
	},
	"account": {
		"How do I change the email address I log in with? My user id is %d.",
		"Under GDPR I want workspace %d and every file in it permanently deleted.",
		"I cannot reset my password for account %d, the reset link has expired.",
	},
	"other": {
		"Do you have an office in Lisbon where I could drop by? Reference %d.",
		"I would like to suggest a feature for your roadmap, idea number %d.",
		"Are you hiring interns this summer? I applied under number %d.",
	},
}

// Case is one case of the list both sides are written from.
type Case struct {
	ID     string // t00001 ...
	Ticket string // the ticket text
	Expect string // the queue it belongs to
	Answer string // the queue the model answers
}

// Cases returns n cases. The model answers the expected queue except for
// every seventh case (i mod 7 = 3), where it answers the next queue.
func Cases(n int) []Case {
	out := make([]Case, n)
	for i := range out {
		q := queues[i%len(queues)]
		ts := templates[q]
		answer := q
		if i%7 == 3 {
			answer = queues[(i+1)%len(queues)]
		}
		out[i] = Case{
			ID:     fmt.Sprintf("t%05d", i+1),
			Ticket: fmt.Sprintf(ts[(i/len(queues))%len(ts)], 10000+i*37),
			Expect: q,
			Answer: answer,
		}
	}
	return out
}

// Passed counts the cases whose answer is the expected queue: the tally
// both tools must report.
func Passed(cs []Case) int {
	n := 0
	for _, c := range cs {
		if c.Answer == c.Expect {
			n++
		}
	}
	return n
}

func main() {
	out := flag.String("out", "", "directory to write promptfoo/ and assay/ into")
	n := flag.Int("cases", 10000, "number of cases (1..20000, Assay's bench bound)")
	triage := flag.String("triage", "../fixtures/triage", "the repository's fixtures/triage directory")
	flag.Parse()
	if *out == "" || *n < 1 || *n > 20000 {
		fmt.Fprintln(os.Stderr, "usage: promptfoo -out DIR [-cases N (1..20000)] [-triage DIR]")
		os.Exit(2)
	}
	cs := Cases(*n)
	if err := WritePromptfoo(filepath.Join(*out, "promptfoo"), cs); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := WriteAssay(filepath.Join(*out, "assay"), *triage, cs); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("%d cases, %d passed and %d failed on both sides\n", len(cs), Passed(cs), len(cs)-Passed(cs))
}

// quote writes s as a double-quoted scalar: a JSON string, which YAML reads
// as the same string.
func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// WritePromptfoo writes dir/config.yaml: the echo provider, one prompt
// that renders the ticket and the answer, and one test per case asserting
// that the echoed answer line is the expected queue.
func WritePromptfoo(dir string, cs []Case) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var y bytes.Buffer
	fmt.Fprintf(&y, "# Written by benchmarks/promptfoo (go run ./promptfoo); %d cases.\n", len(cs))
	y.WriteString("description: ticket triage, echo provider (Assay benchmarks/promptfoo)\n")
	y.WriteString("prompts:\n  - " + quote("Ticket: {{ticket}}\nQueue: {{answer}}") + "\n")
	y.WriteString("providers:\n  - echo\n")
	y.WriteString("tests:\n")
	for _, c := range cs {
		fmt.Fprintf(&y, "  - description: %s\n    vars: { ticket: %s, answer: %s }\n    assert:\n      - { type: regex, value: %s }\n",
			c.ID, quote(c.Ticket), quote(c.Answer), quote(`\nQueue: `+c.Expect+`$`))
	}
	return os.WriteFile(filepath.Join(dir, "config.yaml"), y.Bytes(), 0o644)
}

// WriteAssay writes dir/promptfoo.bench.yaml, its case files (2,000 cases
// a file) and a copy of the one-classifier triage organism: one system
// whose per-case scripted executor answers each case, scored by exact match
// against the expected queue.
func WriteAssay(dir, triage string, cs []Case) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	const organism = "triage-single.algal.json"
	if err := copyFile(filepath.Join(triage, organism), filepath.Join(dir, organism)); err != nil {
		return err
	}
	var y strings.Builder
	fmt.Fprintf(&y, "# Written by benchmarks/promptfoo (go run ./promptfoo); %d cases.\n", len(cs))
	fmt.Fprintf(&y, "name: promptfoo\nrevision: 1\ndescription: ticket triage, %d cases, the cases and answers of the promptfoo echo comparison\n", len(cs))
	fmt.Fprintf(&y, "systems:\n  - { id: model, manifest: %s, executors: { model: cases } }\ncases:\n", organism)
	const perFile = 2000
	for f := 0; f*perFile < len(cs); f++ {
		name := fmt.Sprintf("cases-%03d.jsonl", f+1)
		if err := writeCases(filepath.Join(dir, name), cs[f*perFile:min((f+1)*perFile, len(cs))]); err != nil {
			return err
		}
		fmt.Fprintf(&y, "  - file: %s\n", name)
	}
	return os.WriteFile(filepath.Join(dir, "promptfoo.bench.yaml"), []byte(y.String()), 0o644)
}

// writeCases writes cs as JSONL cases of an Assay workload.
func writeCases(path string, cs []Case) error {
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, c := range cs {
		line := map[string]any{
			"id":        c.ID,
			"args":      map[string]any{"ticket": c.Ticket},
			"expect":    map[string]any{"queue": c.Expect},
			"responses": map[string]any{"model": map[string]any{"route": c.Answer}},
		}
		if err := enc.Encode(line); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}
