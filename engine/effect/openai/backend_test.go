package openai_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/effect/openai"
	"github.com/algal-assay/assay/engine/effect/openai/openaitest"
	"github.com/algal-assay/assay/engine/fault"
)

const testKey = "sk-test-Zq9Wk2bX7uTTSECRET"

func env(vars map[string]string) openai.Env {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

func classify(ticket string) effect.Request {
	return effect.Request{
		"contract": effect.EffectContract, "cellId": "route", "kind": "classifier", "prompt": "Route it.",
		"context": map[string]any{"inputs": map[string]any{"ticket": ticket}, "turn": float64(0)},
		"output":  map[string]any{"kind": "choice", "labels": []any{"billing", "bug"}},
		"budget":  map[string]any{"maxContextBytes": float64(65536), "maxOutputBytes": float64(400)},
	}
}

func backend(t *testing.T, s *openaitest.Server, c openai.Config) *openai.Backend {
	t.Helper()
	if c.Model == "" {
		c.Model = "small-1"
	}
	b, err := openai.New("cheap", c, env(map[string]string{"OPENAI_API_KEY": testKey, "OPENAI_BASE_URL": s.BaseURL()}))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// record runs one request through the router's executor path, so the test
// sees exactly the receipt entry.
func record(t *testing.T, b *openai.Backend, req effect.Request) effect.Record {
	t.Helper()
	rec, err := effect.Execute(context.Background(), b, req, 0)
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := canon.Encode(rec.Value())
	if strings.Contains(string(enc), testKey) {
		t.Fatalf("the key reached a record: %s", enc)
	}
	return rec
}

func TestAnswerUsageAndModel(t *testing.T) {
	t.Parallel()
	s := openaitest.New(func(int, openaitest.Request) openaitest.Reply {
		return openaitest.Reply{Value: "billing", Model: "small-1-2026-01-01", CachedTokens: 3}
	})
	defer s.Close()
	var cached int64
	b := backend(t, s, openai.Config{})
	b.OnAnswer = func(_ string, a openai.Answer) { cached = a.CachedTokensIn }
	rec := record(t, b, classify("charged twice"))
	if rec.Err != nil || rec.Output != "billing" {
		t.Fatalf("record = %+v", rec)
	}
	if rec.Usage["model"] != "small-1-2026-01-01" || rec.Usage["tokensIn"] == nil || rec.Usage["tokensOut"] == nil {
		t.Errorf("usage = %v, want the served model and both counts", rec.Usage)
	}
	if cached != 3 {
		t.Errorf("cached prompt tokens = %d, want 3", cached)
	}
	if rec.ConfigurationDigest != (openai.Config{Model: "small-1"}).Digest() || rec.NotRetryable {
		t.Errorf("record = %+v, want the configuration digest and retry allowed", rec)
	}
	got := s.Requests()[0]
	if got.Authorization != "Bearer "+testKey {
		t.Errorf("Authorization = %q", got.Authorization)
	}
	if rf, _ := got.Body["response_format"].(map[string]any); rf["type"] != "json_schema" {
		t.Errorf("response_format = %v, want json_schema", rf)
	}
}

func TestOmittedUsageStaysUnknown(t *testing.T) {
	t.Parallel()
	s := openaitest.New(func(int, openaitest.Request) openaitest.Reply {
		return openaitest.Reply{Value: "bug", OmitUsage: true}
	})
	defer s.Close()
	rec := record(t, backend(t, s, openai.Config{}), classify("crash"))
	if _, ok := rec.Usage["tokensIn"]; ok {
		t.Errorf("usage = %v: a server that reports no usage must not be recorded as zero tokens", rec.Usage)
	}
	if rec.Usage["model"] != "small-1" {
		t.Errorf("usage.model = %v, want the configured model", rec.Usage["model"])
	}
}

func TestRateLimitBacksOffWithRetryAfter(t *testing.T) {
	t.Parallel()
	s := openaitest.New(func(n int, _ openaitest.Request) openaitest.Reply {
		if n <= 2 {
			return openaitest.Reply{Status: http.StatusTooManyRequests, Headers: map[string]string{"Retry-After": "0.05"}}
		}
		return openaitest.Reply{Value: "billing"}
	})
	defer s.Close()
	start := time.Now()
	rec := record(t, backend(t, s, openai.Config{MaxRetries: 3}), classify("x"))
	if rec.Err != nil || rec.Output != "billing" || s.Count() != 3 {
		t.Fatalf("record = %+v after %d requests, want an answer on the third", rec, s.Count())
	}
	if time.Since(start) < 100*time.Millisecond {
		t.Errorf("two Retry-After: 0.05 waits took %v", time.Since(start))
	}
}

func TestFailuresAreRecordedWithoutBodiesOrKey(t *testing.T) {
	t.Parallel()
	echo := `{"error":{"message":"bad key ` + testKey + `"}}`
	cases := []struct {
		name      string
		reply     openaitest.Reply
		code      string
		retryable bool
		requests  int
	}{
		{"429 after retries", openaitest.Reply{Status: 429, Headers: map[string]string{"Retry-After": "0.01"}, Raw: echo}, fault.EffectFailed, true, 2},
		{"500 after retries", openaitest.Reply{Status: 500, Headers: map[string]string{"Retry-After": "0.01"}, Raw: echo}, fault.EffectFailed, true, 2},
		{"401", openaitest.Reply{Status: 401, Raw: echo}, fault.EffectFailed, false, 1},
		{"400", openaitest.Reply{Status: 400, Raw: echo}, fault.EffectFailed, false, 1},
		{"malformed body", openaitest.Reply{Raw: `{"choices": [` + testKey}, fault.EffectUnparseable, true, 1},
		{"two choices", openaitest.Reply{Raw: `{"choices":[{"message":{"content":"{\"value\":\"a\"}"}},{"message":{"content":"x"}}]}`}, fault.EffectUnparseable, true, 1},
		{"prose content", openaitest.Reply{Content: ptr("billing, because " + testKey)}, fault.EffectUnparseable, true, 1},
		{"extra keys", openaitest.Reply{Content: ptr(`{"value":"billing","why":"x"}`)}, fault.EffectUnparseable, true, 1},
		{"cut short", openaitest.Reply{Value: "billing", Finish: "length"}, fault.EffectUnparseable, true, 1},
		{"undeclared function", openaitest.Reply{Call: &openaitest.Call{Name: "rm_rf", Arguments: "{}"}}, fault.EffectUnparseable, true, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := openaitest.New(func(int, openaitest.Request) openaitest.Reply { return tc.reply })
			defer s.Close()
			rec := record(t, backend(t, s, openai.Config{MaxRetries: 1}), classify("x"))
			if rec.Err == nil || rec.Err.Code != tc.code {
				t.Fatalf("record = %+v, want %s", rec, tc.code)
			}
			if rec.NotRetryable == tc.retryable {
				t.Errorf("retryable = %v, want %v", !rec.NotRetryable, tc.retryable)
			}
			if s.Count() != tc.requests {
				t.Errorf("%d requests, want %d", s.Count(), tc.requests)
			}
		})
	}
}

func ptr(s string) *string { return &s }

func TestToolCallBecomesRawToolOutput(t *testing.T) {
	t.Parallel()
	s := openaitest.New(func(int, openaitest.Request) openaitest.Reply {
		return openaitest.Reply{Call: &openaitest.Call{Name: "pick_v1", Arguments: `{"max":9}`}}
	})
	defer s.Close()
	b := backend(t, s, openai.Config{})
	b.Tools = func(cell string) []openai.Tool {
		if cell == "agent" {
			return []openai.Tool{{Name: "pick.v1"}}
		}
		return nil
	}
	req := effect.Request{"contract": effect.EffectContract, "cellId": "agent", "kind": "agent", "prompt": "Pick.",
		"context": map[string]any{"inputs": map[string]any{}, "turn": float64(0)}, "output": map[string]any{"kind": "text"},
		"budget": map[string]any{"maxContextBytes": float64(1000), "maxOutputBytes": float64(1000)}}
	rec := record(t, b, req)
	want := map[string]any{"tool": "pick.v1", "inputs": map[string]any{"max": float64(9)}}
	a, _ := canon.Encode(rec.Output)
	w, _ := canon.Encode(want)
	if string(a) != string(w) {
		t.Fatalf("output = %s, want %s", a, w)
	}
	if tools, _ := s.Requests()[0].Body["tools"].([]any); len(tools) != 1 {
		t.Errorf("tools sent = %v", s.Requests()[0].Body["tools"])
	}
}

func TestNeverServesGateOrRecallAndNeedsAKey(t *testing.T) {
	t.Parallel()
	s := openaitest.New(nil)
	defer s.Close()
	b := backend(t, s, openai.Config{})
	for _, kind := range []string{effect.KindGate, effect.KindRecall} {
		req := classify("x")
		req["kind"] = kind
		rec := record(t, b, req)
		if rec.Err == nil || rec.Err.Code != fault.EffectUnbound {
			t.Errorf("%s: record = %+v, want EFFECT_UNBOUND", kind, rec)
		}
	}
	for _, k := range []string{effect.KindAgent, effect.KindClassifier, effect.KindDecide} {
		if !b.Describe().Serves(k) {
			t.Errorf("does not serve %s", k)
		}
	}
	if b.Describe().Serves(effect.KindGate) || b.Describe().Serves(effect.KindRecall) {
		t.Error("admits gate or recall")
	}
	remote, err := openai.New("x", openai.Config{Model: "m", BaseURL: "https://api.example.invalid/v1"}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	rec := record(t, remote, classify("x"))
	if rec.Err == nil || rec.Err.Code != fault.EffectUnbound || !strings.Contains(rec.Err.Message, "OPENAI_API_KEY") {
		t.Errorf("keyless remote call: %+v", rec)
	}
	if s.Count() != 0 {
		t.Errorf("%d requests reached the server", s.Count())
	}
}

func TestKeylessLoopbackServerIsCalledWithoutAuthorization(t *testing.T) {
	t.Parallel()
	s := openaitest.New(nil)
	defer s.Close()
	b, err := openai.New("local", openai.Config{Model: "llama", BaseURL: s.BaseURL()}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	req := classify("x")
	req["output"] = map[string]any{"kind": "text"}
	if rec := record(t, b, req); rec.Err != nil || rec.Output != "ok" {
		t.Fatalf("record = %+v", rec)
	}
}

func TestConcurrencyIsBounded(t *testing.T) {
	t.Parallel()
	s := openaitest.New(nil)
	s.Latency = 30 * time.Millisecond
	defer s.Close()
	b := backend(t, s, openai.Config{MaxConcurrency: 3})
	req := classify("x")
	req["output"] = map[string]any{"kind": "text"}
	var wg sync.WaitGroup
	for range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := b.Execute(context.Background(), req); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if p := s.PeakInFlight(); p > 3 || p < 2 {
		t.Errorf("peak in flight = %d, want 2..3 with max-concurrency 3", p)
	}
}

func TestCancelAbandonsInFlightRequest(t *testing.T) {
	t.Parallel()
	s := openaitest.New(nil)
	s.Latency = 5 * time.Second
	defer s.Close()
	b := backend(t, s, openai.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for s.Count() == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	start := time.Now()
	rec, err := effect.Execute(ctx, b, classify("x"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Err == nil || !rec.NotRetryable || time.Since(start) > 2*time.Second {
		t.Fatalf("cancelled call: %+v after %v, want an uncertain failure at once", rec, time.Since(start))
	}
}
