package openai_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/effect/live"
	"github.com/algal-assay/assay/engine/effect/openai"
	"github.com/algal-assay/assay/engine/effect/openai/openaitest"
	"github.com/algal-assay/assay/engine/fault"
)

// A failure names the status and the server's own message, with the key
// redacted wherever the server echoes it, also when the error body is a
// gateway's plain text.
func TestFailureQuotesTheServerWithTheKeyRedacted(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		reply openaitest.Reply
		want  []string
	}{
		{"401 echo", openaitest.Reply{Status: 401, Message: "Incorrect API key provided: " + testKey + "."}, []string{"HTTP 401", "Incorrect API key provided: [REDACTED]."}},
		{"429", openaitest.Reply{Status: 429, Headers: map[string]string{"Retry-After": "0"}}, []string{"HTTP 429", "Rate limit reached"}},
		{"503 upper-cased echo", openaitest.Reply{Status: 503, Headers: map[string]string{"Retry-After": "0"}, Message: "overloaded for " + strings.ToUpper(testKey)}, []string{"HTTP 503", "overloaded for [REDACTED]"}},
		{"502 plain text", openaitest.Reply{Status: 502, Headers: map[string]string{"Retry-After": "0", "Content-Type": "text/html"}, Raw: "<html>Bad gateway for Bearer " + testKey + "</html>"}, []string{"HTTP 502", "Bad gateway for Bearer [REDACTED]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := openaitest.New(func(int, openaitest.Request) openaitest.Reply { return tc.reply })
			defer s.Close()
			rec := record(t, backend(t, s, openai.Config{MaxRetries: -1}), classify("x"))
			if rec.Err == nil || rec.Err.Code != fault.EffectFailed {
				t.Fatalf("record = %+v", rec)
			}
			for _, w := range tc.want {
				if !strings.Contains(rec.Err.Message, w) {
					t.Errorf("message %q lacks %q", rec.Err.Message, w)
				}
			}
		})
	}
}

// An answer that echoes the key is redacted before it is returned, and
// the backend reports the redaction.
func TestAnswerEchoingTheKeyIsRedacted(t *testing.T) {
	t.Parallel()
	s := openaitest.New(func(int, openaitest.Request) openaitest.Reply {
		return openaitest.Reply{Value: "your key is " + testKey, Model: "m-" + testKey}
	})
	defer s.Close()
	b := backend(t, s, openai.Config{})
	req := classify("x")
	req["output"] = map[string]any{"kind": "text"}
	resp, rep, err := b.ExecuteReport(t.Context(), req)
	if err != nil || resp.Output != "your key is [REDACTED]" || rep.Redactions != 2 {
		t.Fatalf("resp %+v, report %+v, err %v", resp, rep, err)
	}
	enc, _ := canon.Encode(resp.Usage)
	if strings.Contains(string(enc), testKey) {
		t.Errorf("usage holds the key: %s", enc)
	}
}

// Usage the server reported is kept when the answer cannot be read.
func TestUnparseableAnswerKeepsItsUsage(t *testing.T) {
	t.Parallel()
	s := openaitest.New(func(int, openaitest.Request) openaitest.Reply {
		return openaitest.Reply{Content: ptr("billing, probably")}
	})
	defer s.Close()
	rec := record(t, backend(t, s, openai.Config{}), classify("x"))
	if rec.Err == nil || rec.Err.Code != fault.EffectUnparseable {
		t.Fatalf("record = %+v", rec)
	}
	if rec.Usage["tokensIn"] == nil || rec.Usage["tokensOut"] == nil {
		t.Errorf("usage = %v, want the tokens the server reported", rec.Usage)
	}
	v, _ := canon.Encode(rec.Value())
	back, err := effect.ParseRecord(mustParse(t, v))
	if err != nil || back.Usage["tokensIn"] != rec.Usage["tokensIn"] {
		t.Errorf("a failed record with usage does not read back: %v", err)
	}
}

func mustParse(t *testing.T, b []byte) any {
	t.Helper()
	v, err := canon.Parse(b, 0)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// An answer over the cell's output budget or max-answer-bytes is refused
// (a failure, never an answer), keeping its usage.
func TestOversizedAnswerIsRefused(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 10_000)
	s := openaitest.New(func(int, openaitest.Request) openaitest.Reply { return openaitest.Reply{Value: big} })
	defer s.Close()
	req := classify("x")
	req["output"] = map[string]any{"kind": "text"}
	req["budget"] = map[string]any{"maxContextBytes": float64(65536), "maxOutputBytes": float64(256)}
	rec := record(t, backend(t, s, openai.Config{}), req)
	if rec.Err == nil || rec.Err.Code != fault.BudgetExhausted || !strings.Contains(rec.Err.Message, "over the cell's maxOutputBytes (256)") || rec.Output != nil {
		t.Fatalf("record = %+v", rec)
	}
	if rec.Usage["tokensOut"] == nil {
		t.Errorf("usage dropped: %v", rec.Usage)
	}
	req["budget"] = map[string]any{"maxContextBytes": float64(65536), "maxOutputBytes": float64(1 << 20)}
	rec = record(t, backend(t, s, openai.Config{MaxAnswerBytes: 4096}), req)
	if rec.Err == nil || !strings.Contains(rec.Err.Message, "max-answer-bytes (4096)") {
		t.Fatalf("max-answer-bytes: %+v", rec)
	}
	if !live.IsFailureCode(rec.Err.Code) {
		t.Error("a refused answer is not classed as a failure")
	}
}

// A redirect to another origin is refused by name; the key never leaves
// for the other host. One within the origin is followed.
func TestRedirectToAnotherOriginIsRefused(t *testing.T) {
	t.Parallel()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			t.Errorf("the key reached the other origin")
		}
		w.WriteHeader(500)
	}))
	defer other.Close()
	s := openaitest.New(func(n int, r openaitest.Request) openaitest.Reply {
		return openaitest.Reply{Status: http.StatusTemporaryRedirect, Redirect: other.URL + "/v1/chat/completions"}
	})
	defer s.Close()
	rec := record(t, backend(t, s, openai.Config{}), classify("x"))
	if rec.Err == nil || !strings.Contains(rec.Err.Message, "redirected to another origin: refused") || !rec.NotRetryable {
		t.Fatalf("record = %+v", rec)
	}
	if s.Count() != 1 {
		t.Errorf("%d requests: a refused redirect is not retried", s.Count())
	}
	// Within the origin: followed.
	s2 := openaitest.New(nil)
	defer s2.Close()
	s2.Answer = func(n int, r openaitest.Request) openaitest.Reply {
		if n == 1 {
			return openaitest.Reply{Status: http.StatusTemporaryRedirect, Redirect: s2.BaseURL() + "/chat/completions?moved=1"}
		}
		return openaitest.Reply{Value: "billing"}
	}
	if rec := record(t, backend(t, s2, openai.Config{}), classify("x")); rec.Err != nil || rec.Output != "billing" {
		t.Fatalf("same-origin redirect: %+v", rec)
	}
}

// Reasoning models get max_completion_tokens and no sampling settings;
// others keep max_tokens, temperature and the optional settings. The
// fake refuses what OpenAI refuses.
func TestReasoningModelsAreAskedAsTheyAccept(t *testing.T) {
	t.Parallel()
	s := openaitest.New(func(int, openaitest.Request) openaitest.Reply {
		return openaitest.Reply{Value: "billing", ReasoningTokens: 192}
	})
	defer s.Close()
	seed, topP := int64(7), 0.9
	yes := true
	for _, c := range []openai.Config{
		{Model: "o4-mini", ReasoningEffort: "low", Seed: &seed},
		{Model: "gpt-5-mini"},
		{Model: "o3"},
		{Model: "my-azure-deployment", Reasoning: &yes, ReasoningEffort: "high"},
		{Model: "gpt-4o-mini", Seed: &seed, TopP: &topP, Stop: []string{"\n\n"}},
	} {
		s.Reset()
		rec := record(t, backend(t, s, c), classify("x"))
		body := s.Requests()[0].Body
		if c.Model == "my-azure-deployment" {
			// The fake does not know the deployment; only the body shape is checked.
			rec.Err = nil
		}
		if rec.Err != nil {
			t.Fatalf("%s: %+v", c.Model, rec.Err)
		}
		_, hasMax := body["max_tokens"]
		_, hasTemp := body["temperature"]
		mct, hasMCT := body["max_completion_tokens"].(float64)
		if c.Reasons() {
			if hasMax || hasTemp || !hasMCT || mct < openai.ReasoningAllowance {
				t.Errorf("%s: body %v, want max_completion_tokens >= %d and no max_tokens/temperature", c.Model, body, openai.ReasoningAllowance)
			}
			if c.ReasoningEffort != "" && body["reasoning_effort"] != c.ReasoningEffort {
				t.Errorf("%s: reasoning_effort = %v", c.Model, body["reasoning_effort"])
			}
			if n, _ := rec.Usage["tokensOut"].(float64); n < 192 && c.Model != "my-azure-deployment" {
				t.Errorf("%s: tokensOut %v does not count the 192 reasoning tokens", c.Model, rec.Usage["tokensOut"])
			}
		} else if !hasMax || !hasTemp || hasMCT || body["top_p"] != 0.9 || body["seed"] != 7.0 || body["stop"] == nil {
			t.Errorf("%s: body %v", c.Model, body)
		}
	}
	// Settings a reasoning model refuses are refused where configured.
	zero := 0.0
	for _, c := range []openai.Config{{Model: "o3", Temperature: &zero}, {Model: "gpt-5", TopP: &topP}, {Model: "gpt-4o", ReasoningEffort: "low"}, {Model: "o3", ReasoningEffort: "max"}} {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v validated", c)
		}
	}
	// Digests of configurations without the new settings are unchanged.
	if d := (openai.Config{Model: "small-1"}).Value(); d["reasoning"] != nil || d["seed"] != nil {
		t.Errorf("old configuration value grew: %v", d)
	}
}
