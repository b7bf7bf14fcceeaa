// Package openaitest is a local OpenAI-compatible chat-completions server
// for tests: deterministic answers with usage, configurable latency, rate
// limiting with Retry-After, server errors, malformed bodies, function
// calls and servers that omit usage. It answers on 127.0.0.1 through
// net/http/httptest and counts what it was asked.
package openaitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// Request is one chat-completions request as the server received it.
type Request struct {
	Body          map[string]any
	Raw           []byte
	Authorization string
	Header        http.Header
	// Prompt is the cell prompt the request carries (the text after
	// "Task:\n" in the user message), "" when there is none.
	Prompt string
}

// Reply is what the server sends back. Zero fields take defaults: status
// 200, an answer {"value": Value}, usage counted from the request.
type Reply struct {
	Status  int
	Headers map[string]string
	// Raw, when set, is sent verbatim as the body (malformed bodies).
	Raw string
	// Value is the answer's value.
	Value any
	// Content, when set, replaces the {"value": ...} content.
	Content *string
	// Call, when set, answers with one function call.
	Call *Call
	// Finish is the finish_reason (default stop, or tool_calls).
	Finish string
	// Model is the model reported (default: the model asked for).
	Model string
	// OmitUsage leaves usage out of the response.
	OmitUsage bool
	// CachedTokens, when positive, is reported as cached prompt tokens.
	CachedTokens int
	// ReasoningTokens, when positive, is reported as reasoning tokens
	// (completion_tokens_details), counted inside completion_tokens as
	// OpenAI counts them.
	ReasoningTokens int
	// Message is the error message of a reply with an error status
	// (default: OpenAI's for the status).
	Message string
	// Redirect, when set with a 3xx Status, is the Location header.
	Redirect string
}

// Call is a function call in a reply.
type Call struct {
	Name      string
	Arguments string
}

// Server is the fake.
type Server struct {
	*httptest.Server
	// Answer decides each reply; n counts requests from 1. Nil answers
	// every request with the value "ok".
	Answer func(n int, r Request) Reply
	// Latency is slept before each reply (the request's cancellation cuts
	// it short).
	Latency time.Duration

	mu       sync.Mutex
	requests []Request
	inFlight int
	peak     int
}

// New starts a fake; Close it when done.
func New(answer func(n int, r Request) Reply) *Server {
	s := &Server{Answer: answer}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL is the base URL clients use (with the /v1 prefix).
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Requests returns what the server was asked, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Count is the number of requests received.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// PeakInFlight is the most requests that were being answered at once.
func (s *Server) PeakInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
}

// Reset forgets the requests seen.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = nil
	s.peak = 0
}

func (s *Server) serve(w http.ResponseWriter, hr *http.Request) {
	if hr.Method != http.MethodPost || !strings.HasSuffix(hr.URL.Path, "/chat/completions") {
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	var raw []byte
	buf := make([]byte, 32<<10)
	for {
		n, err := hr.Body.Read(buf)
		raw = append(raw, buf[:n]...)
		if err != nil {
			break
		}
	}
	req := Request{Raw: raw, Authorization: hr.Header.Get("Authorization"), Header: hr.Header.Clone()}
	if err := json.Unmarshal(raw, &req.Body); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"message": "body is not JSON", "type": "invalid_request_error"}})
		return
	}
	req.Prompt = promptOf(req.Body)
	if msg, param, code := reasoningRefusal(req.Body); msg != "" {
		s.mu.Lock()
		s.requests = append(s.requests, req)
		s.mu.Unlock()
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "param": param, "code": code}})
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	n := len(s.requests)
	s.inFlight++
	s.peak = max(s.peak, s.inFlight)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()
	if s.Latency > 0 {
		t := time.NewTimer(s.Latency)
		select {
		case <-t.C:
		case <-hr.Context().Done():
			t.Stop()
			return
		}
	}
	reply := Reply{Value: "ok"}
	if s.Answer != nil {
		reply = s.Answer(n, req)
	}
	for k, v := range reply.Headers {
		w.Header().Set(k, v)
	}
	status := reply.Status
	if status == 0 {
		status = http.StatusOK
	}
	if reply.Raw != "" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(reply.Raw))
		return
	}
	if status >= 300 && status < 400 {
		if reply.Redirect != "" {
			w.Header().Set("Location", reply.Redirect)
		}
		w.WriteHeader(status)
		return
	}
	if status != http.StatusOK {
		writeJSON(w, status, ErrorBody(status, reply.Message))
		return
	}
	writeJSON(w, status, completion(req, reply))
}

func completion(req Request, r Reply) map[string]any {
	model, _ := req.Body["model"].(string)
	if r.Model != "" {
		model = r.Model
	}
	msg := map[string]any{"role": "assistant"}
	finish := r.Finish
	content := ""
	switch {
	case r.Call != nil:
		msg["content"] = nil
		msg["tool_calls"] = []any{map[string]any{"id": "call_fake", "type": "function",
			"function": map[string]any{"name": r.Call.Name, "arguments": r.Call.Arguments}}}
		if finish == "" {
			finish = "tool_calls"
		}
	case r.Content != nil:
		content = *r.Content
		msg["content"] = content
	default:
		b, _ := json.Marshal(map[string]any{"value": r.Value})
		content = string(b)
		msg["content"] = content
	}
	if finish == "" {
		finish = "stop"
	}
	out := map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion", "created": 1700000000, "model": model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
	}
	if !r.OmitUsage {
		in := (len(req.Raw) + 3) / 4
		outTok := max(1, (len(content)+3)/4)
		u := map[string]any{"prompt_tokens": in, "completion_tokens": outTok, "total_tokens": in + outTok}
		if r.CachedTokens > 0 {
			u["prompt_tokens_details"] = map[string]any{"cached_tokens": r.CachedTokens}
		}
		if r.ReasoningTokens > 0 {
			outTok += r.ReasoningTokens
			u["completion_tokens"] = outTok
			u["total_tokens"] = in + outTok
			u["completion_tokens_details"] = map[string]any{"reasoning_tokens": r.ReasoningTokens}
		}
		out["usage"] = u
	}
	return out
}

// ErrorBody is the body OpenAI sends with an error status: {"error":
// {"message", "type", "param", "code"}}, with the service's own message,
// type and code for the status when message is empty.
func ErrorBody(status int, message string) map[string]any {
	typ, code, msg := "server_error", any(nil), "The server had an error while processing your request. Sorry about that!"
	switch status {
	case http.StatusBadRequest:
		typ, msg = "invalid_request_error", "Invalid request."
	case http.StatusUnauthorized:
		typ, code, msg = "invalid_request_error", "invalid_api_key", "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys."
	case http.StatusForbidden:
		typ, code, msg = "invalid_request_error", "unsupported_country_region_territory", "Country, region, or territory not supported"
	case http.StatusNotFound:
		typ, code, msg = "invalid_request_error", "model_not_found", "The model does not exist or you do not have access to it."
	case http.StatusTooManyRequests:
		typ, code, msg = "requests", "rate_limit_exceeded", "Rate limit reached for requests. Please try again in 20ms."
	case http.StatusServiceUnavailable:
		msg = "The engine is currently overloaded, please try again later"
	}
	if message != "" {
		msg = message
	}
	return map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": code}}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Request-Id", "req_fake")
	w.Header().Set("Openai-Processing-Ms", "1")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// promptOf finds the cell prompt in the rendered user message.
func promptOf(body map[string]any) string {
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		if mm["role"] != "user" {
			continue
		}
		c, _ := mm["content"].(string)
		c = strings.TrimPrefix(c, "Task:\n")
		if i := strings.Index(c, "\n\nContext (JSON):"); i >= 0 {
			return c[:i]
		}
		return c
	}
	return ""
}

// Context returns the context JSON the rendered user message carries,
// decoded, or nil.
func (r Request) Context() map[string]any {
	msgs, _ := r.Body["messages"].([]any)
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		if mm["role"] != "user" {
			continue
		}
		c, _ := mm["content"].(string)
		i := strings.Index(c, "Context (JSON):\n")
		if i < 0 {
			return nil
		}
		rest := c[i+len("Context (JSON):\n"):]
		if j := strings.Index(rest, "\n\n"); j >= 0 {
			rest = rest[:j]
		}
		var out map[string]any
		if json.Unmarshal([]byte(rest), &out) != nil {
			return nil
		}
		return out
	}
	return nil
}

// ByPrompt answers each request with the value its prompt maps to; a
// prompt not in the table gets an HTTP 400, which makes a test that
// forgot one fail loudly.
func ByPrompt(values map[string]any) func(int, Request) Reply {
	return func(_ int, r Request) Reply {
		v, ok := values[r.Prompt]
		if !ok {
			return Reply{Status: http.StatusBadRequest, Raw: fmt.Sprintf(`{"error":{"message":"no answer for prompt %q"}}`, r.Prompt)}
		}
		return Reply{Value: v}
	}
}

// reasoningModels are the models the fake serves as OpenAI serves its
// reasoning models (a name, or a name followed by "-" and a version).
var reasoningModels = []string{"o1", "o1-mini", "o3", "o3-mini", "o4-mini", "gpt-5", "gpt-5-mini", "gpt-5-nano"}

// reasoningRefusal is OpenAI's 400 to a reasoning model asked with
// max_tokens or a sampling setting, or to another model asked with
// reasoning_effort.
func reasoningRefusal(body map[string]any) (msg, param, code string) {
	model, _ := body["model"].(string)
	reasons := false
	for _, m := range reasoningModels {
		if model == m || strings.HasPrefix(model, m+"-") {
			reasons = true
		}
	}
	if !reasons {
		if _, ok := body["reasoning_effort"]; ok {
			return "Unrecognized request argument supplied: reasoning_effort", "reasoning_effort", "unsupported_parameter"
		}
		return "", "", ""
	}
	if _, ok := body["max_tokens"]; ok {
		return "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", "max_tokens", "unsupported_parameter"
	}
	for _, p := range []string{"temperature", "top_p"} {
		if v, ok := body[p]; ok && v != 1.0 {
			return fmt.Sprintf("Unsupported value: '%s' does not support %v with this model. Only the default (1) value is supported.", p, v), p, "unsupported_value"
		}
	}
	if _, ok := body["stop"]; ok {
		return "Unsupported parameter: 'stop' is not supported with this model.", "stop", "unsupported_parameter"
	}
	return "", "", ""
}
