package live

import (
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/redact"
)

const secret = "sk-live-Qw3rTy8SECRET"

func TestReasoningFamilies(t *testing.T) {
	t.Parallel()
	for model, want := range map[string]bool{
		"o1": true, "o1-mini": true, "o3": true, "o3-mini-2025-01-31": true, "o4-mini": true,
		"gpt-5": true, "gpt-5-mini": true, "gpt-5.1": true, "openai/o3-mini": true, "GPT-5-NANO": true,
		"gpt-4o": false, "gpt-4o-mini": false, "o10": false, "llama3.1:8b": false, "claude-sonnet-4-5": false, "gpt-50": false,
	} {
		if Reasoning(model) != want {
			t.Errorf("Reasoning(%q) = %v, want %v", model, !want, want)
		}
	}
}

func TestFailureQuotesTheServerRedacted(t *testing.T) {
	t.Parallel()
	red := redact.New(secret)
	e := Failure{Kind: HTTPStatus, Status: 401, ServerMessage: "Incorrect API key provided: " + secret + ".\nSee docs."}.Error(red)
	if strings.Contains(e.Message, secret) || !strings.Contains(e.Message, "HTTP 401") ||
		!strings.Contains(e.Message, "Incorrect API key provided: [REDACTED]. See docs.") || !e.NotRetryable {
		t.Errorf("401 failure = %+v", e)
	}
	e = Failure{Kind: HTTPStatus, Status: 500, Retryable: true, ServerMessage: strings.Repeat("x", 1000)}.Error(red)
	if len(e.Message) > MaxServerMessage+100 || e.NotRetryable {
		t.Errorf("500 failure = %d bytes, retryable %v", len(e.Message), !e.NotRetryable)
	}
	if e := (Failure{Kind: Redirect}).Error(red); !strings.Contains(e.Message, "redirected to another origin: refused") {
		t.Errorf("redirect failure = %q", e.Message)
	}
	if !IsFailure(e) || IsFailure(&fault.Error{Code: fault.EffectUnparseable}) || IsFailure(nil) {
		t.Error("IsFailure classifies wrongly")
	}
}

func TestFinishRedactsAndBounds(t *testing.T) {
	t.Parallel()
	red := redact.New(secret)
	req := effect.Request{"budget": map[string]any{"maxOutputBytes": float64(256)}}
	resp, n, err := Finish(req, effect.Response{Output: "your key is " + secret, Usage: map[string]any{"model": "m", "tokensIn": 3.0}}, red, 0, "")
	if err != nil || n != 1 || resp.Output != "your key is "+redact.Redacted {
		t.Fatalf("Finish = %v %d %v", resp.Output, n, err)
	}
	big := strings.Repeat("a", 300)
	resp, _, err = Finish(req, effect.Response{Output: big, Usage: map[string]any{"model": "m", "tokensOut": 80.0}}, red, 0, "")
	if fault.CodeOf(err) != fault.BudgetExhausted || !strings.Contains(err.Error(), "302 bytes, over the cell's maxOutputBytes (256)") {
		t.Fatalf("oversized answer: %v", err)
	}
	if resp.Output != nil || resp.Usage["tokensOut"] != 80.0 {
		t.Errorf("a refused answer keeps its usage and drops its output: %+v", resp)
	}
	if err := Bound(effect.Request{}, big, 100, ""); err == nil || !strings.Contains(err.Error(), "max-answer-bytes (100)") {
		t.Errorf("max-answer-bytes: %v", err)
	}
}
