package anthropic_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/effect/anthropic"
	"github.com/algal-assay/assay/engine/effect/anthropic/anthropictest"
	"github.com/algal-assay/assay/engine/effect/live"
	"github.com/algal-assay/assay/engine/fault"
)

const testKey = "sk-ant-api03-Zq9Wk2bX7uTTSECRET"

func env(vars map[string]string) effect.Env {
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

func backend(t *testing.T, s *anthropictest.Server, c anthropic.Config) *anthropic.Backend {
	t.Helper()
	if c.Model == "" {
		c.Model = "claude-haiku-4-5"
	}
	s.Key = testKey
	b, err := anthropic.New("cheap", c, env(map[string]string{"ANTHROPIC_API_KEY": testKey, "ANTHROPIC_BASE_URL": s.URL}))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func record(t *testing.T, b effect.Executor, req effect.Request) effect.Record {
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

// The answer comes through the forced output tool; the request carries
// the system prompt, the key, anthropic-version, no stream;
// usage counts cache reads and writes as prompt tokens.
func TestStructuredOutputThroughAForcedTool(t *testing.T) {
	t.Parallel()
	s := anthropictest.New(func(int, anthropictest.Request) anthropictest.Reply {
		return anthropictest.Reply{Value: "billing", Model: "claude-haiku-4-5-20251001", CacheRead: 100, CacheWrite: 20}
	})
	defer s.Close()
	b := backend(t, s, anthropic.Config{})
	resp, rep, err := b.ExecuteReport(context.Background(), classify("charged twice"))
	if err != nil || resp.Output != "billing" {
		t.Fatalf("resp %+v err %v", resp, err)
	}
	if rep.CacheRead != 100 || rep.CacheWrite != 20 {
		t.Errorf("report %+v, want the cache token counts", rep)
	}
	got := s.Requests()[0]
	if got.Header.Get("X-Api-Key") != testKey && got.Header.Get("Authorization") != "Bearer "+testKey || got.Header.Get("Anthropic-Version") == "" {
		t.Errorf("headers %v", got.Header)
	}
	body := got.Body
	if sys, _ := body["system"].(string); !strings.Contains(sys, "ALGAL organism") {
		t.Errorf("system = %v", body["system"])
	}
	if tc, _ := body["tool_choice"].(map[string]any); tc["type"] != "tool" || tc["name"] != anthropic.OutputTool {
		t.Errorf("tool_choice = %v", body["tool_choice"])
	}
	if _, ok := body["stream"]; ok {
		t.Error("stream is set")
	}
	in := resp.Usage["tokensIn"].(float64)
	if resp.Usage["model"] != "claude-haiku-4-5-20251001" || in < 120 || resp.Usage["tokensOut"] == nil {
		t.Errorf("usage = %v, want the served model and cache tokens in tokensIn", resp.Usage)
	}
}

// An agent with tools is offered them beside the output tool and must
// call one; a call to a cell tool becomes the raw tool output; the tool
// log becomes tool_use / tool_result turns.
func TestAgentToolUse(t *testing.T) {
	t.Parallel()
	s := anthropictest.New(func(int, anthropictest.Request) anthropictest.Reply {
		return anthropictest.Reply{Tool: "pick_v1", ToolInput: map[string]any{"max": 9.0}}
	})
	defer s.Close()
	b := backend(t, s, anthropic.Config{})
	req := effect.Request{"contract": effect.EffectContract, "cellId": "agent", "kind": "agent", "prompt": "Pick.",
		"context": map[string]any{"inputs": map[string]any{}, "turn": float64(1),
			"toolLog": []any{map[string]any{"fn": "pick.v1", "inputs": map[string]any{"max": 3.0}, "output": 2.0}}},
		"output": map[string]any{"kind": "text"},
		"budget": map[string]any{"maxContextBytes": float64(1000), "maxOutputBytes": float64(1000)}}
	resp, _, err := b.ExecuteWith(context.Background(), req, []live.Tool{{Name: "pick.v1"}})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := canon.Encode(resp.Output)
	if string(a) != `{"inputs":{"max":9},"tool":"pick.v1"}` {
		t.Fatalf("output = %s", a)
	}
	body := s.Requests()[0].Body
	if tc, _ := body["tool_choice"].(map[string]any); tc["type"] != "any" {
		t.Errorf("tool_choice = %v", body["tool_choice"])
	}
	msgs, _ := body["messages"].([]any)
	if len(msgs) != 3 {
		t.Fatalf("messages = %v, want the task, the logged call and its result", msgs)
	}
	enc, _ := canon.Encode(msgs[1:])
	if !strings.Contains(string(enc), `"type":"tool_use"`) || !strings.Contains(string(enc), `"tool_use_id":"call_0"`) {
		t.Errorf("tool log turns = %s", enc)
	}
}

// 529 (overloaded) and 429 are retried honouring retry-after; failures
// quote the service's error message with the key redacted; a body that
// is not a message is unparseable with its usage kept.
func TestOverloadedIsRetriedAndFailuresQuoteTheService(t *testing.T) {
	t.Parallel()
	s := anthropictest.New(func(n int, _ anthropictest.Request) anthropictest.Reply {
		switch n {
		case 1:
			return anthropictest.Reply{Status: 529, Headers: map[string]string{"Retry-After": "0.05"}}
		case 2:
			return anthropictest.Reply{Status: 429, Headers: map[string]string{"Retry-After": "0.05"}}
		}
		return anthropictest.Reply{Value: "bug"}
	})
	defer s.Close()
	start := time.Now()
	rec := record(t, backend(t, s, anthropic.Config{MaxRetries: 3}), classify("crash"))
	if rec.Err != nil || rec.Output != "bug" || s.Count() != 3 {
		t.Fatalf("record %+v after %d requests, want an answer on the third", rec, s.Count())
	}
	if time.Since(start) < 100*time.Millisecond {
		t.Errorf("two retry-after waits took %v", time.Since(start))
	}

	cases := []struct {
		reply anthropictest.Reply
		want  string
	}{
		{anthropictest.Reply{Status: 529, Headers: map[string]string{"Retry-After": "0"}}, "anthropic returned HTTP 529 after the configured retries: Overloaded"},
		{anthropictest.Reply{Status: 401, Message: "invalid x-api-key " + testKey}, "anthropic refused the credentials (HTTP 401): invalid x-api-key [REDACTED]"},
		{anthropictest.Reply{Status: 400, Message: "max_tokens: must be at most 8192"}, "anthropic rejected the request (HTTP 400): max_tokens: must be at most 8192"},
	}
	for _, tc := range cases {
		s := anthropictest.New(func(int, anthropictest.Request) anthropictest.Reply { return tc.reply })
		rec := record(t, backend(t, s, anthropic.Config{MaxRetries: -1}), classify("x"))
		s.Close()
		if rec.Err == nil || !strings.Contains(rec.Err.Message, tc.want) {
			t.Errorf("record %+v, want %q", rec.Err, tc.want)
		}
	}
	text := "billing"
	s2 := anthropictest.New(func(int, anthropictest.Request) anthropictest.Reply { return anthropictest.Reply{Text: &text} })
	defer s2.Close()
	rec = record(t, backend(t, s2, anthropic.Config{}), classify("x"))
	if rec.Err == nil || rec.Err.Code != fault.EffectUnparseable || rec.Usage["tokensOut"] == nil {
		t.Errorf("a text answer: %+v, want EFFECT_UNPARSEABLE with its usage", rec)
	}
}

// An answer echoing the key is redacted; one over the cell's budget is
// refused.
func TestRedactedAndBounded(t *testing.T) {
	t.Parallel()
	s := anthropictest.New(func(n int, _ anthropictest.Request) anthropictest.Reply {
		if n == 1 {
			return anthropictest.Reply{Value: "key " + testKey}
		}
		return anthropictest.Reply{Value: strings.Repeat("x", 5000)}
	})
	defer s.Close()
	b := backend(t, s, anthropic.Config{})
	req := classify("x")
	req["output"] = map[string]any{"kind": "text"}
	resp, rep, err := b.ExecuteReport(context.Background(), req)
	if err != nil || resp.Output != "key [REDACTED]" || rep.Redactions != 1 {
		t.Fatalf("resp %+v rep %+v err %v", resp, rep, err)
	}
	rec := record(t, b, req)
	if rec.Err == nil || rec.Err.Code != fault.BudgetExhausted {
		t.Fatalf("oversized: %+v", rec)
	}
}

var _ = http.StatusOK
