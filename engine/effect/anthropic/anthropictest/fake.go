// Package anthropictest is a local fake of Anthropic's Messages API for
// tests: POST /v1/messages answered on 127.0.0.1 as the service answers,
// with its headers (request-id, anthropic-ratelimit-*), its error bodies
// {"type":"error","error":{"type":...,"message":...}} and status codes
// (400, 401, 403, 404, 413, 429 with retry-after, 500, 529 overloaded),
// tool_use answers with usage (cache read and write tokens included),
// configurable latency, and no streaming (a stream request is refused).
package anthropictest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// Request is one Messages request as the server received it.
type Request struct {
	Body   map[string]any
	Raw    []byte
	Header http.Header
	// Prompt is the cell prompt (the text after "Task:\n" in the first
	// user turn).
	Prompt string
}

// Reply is what the server sends back. Zero fields take defaults: status
// 200, the value "ok" through the output tool, usage counted.
type Reply struct {
	Status  int
	Headers map[string]string
	// Raw, when set, is sent verbatim as the body.
	Raw string
	// Value is the answer's value, given through the forced output tool.
	Value any
	// Input, when set, replaces the output tool's input ({"value": V}).
	Input map[string]any
	// Tool, when set, answers with a call to that tool with ToolInput.
	Tool      string
	ToolInput map[string]any
	// Text, when set, answers with a text block and no tool call.
	Text *string
	// StopReason defaults to tool_use (end_turn for Text).
	StopReason string
	// Model is the model reported (default: the model asked for).
	Model string
	// OmitUsage leaves usage out.
	OmitUsage bool
	// CacheRead and CacheWrite are reported as cache_read_input_tokens
	// and cache_creation_input_tokens when positive.
	CacheRead, CacheWrite int
	// Message is an error reply's message (default: the service's).
	Message string
}

// Server is the fake.
type Server struct {
	*httptest.Server
	// Answer decides each reply; n counts requests from 1.
	Answer func(n int, r Request) Reply
	// Latency is slept before each reply.
	Latency time.Duration
	// Key, when set, is the only x-api-key accepted.
	Key string

	mu       sync.Mutex
	requests []Request
}

// New starts a fake; Close it when done.
func New(answer func(n int, r Request) Reply) *Server {
	s := &Server{Answer: answer}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

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

// Reset forgets the requests seen.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = nil
}

// ErrorTypes are the service's error types by status.
var ErrorTypes = map[int][2]string{
	400: {"invalid_request_error", "There was an issue with the format or content of your request."},
	401: {"authentication_error", "invalid x-api-key"},
	403: {"permission_error", "Your API key does not have permission to use the specified resource."},
	404: {"not_found_error", "The requested resource could not be found."},
	413: {"request_too_large", "Request exceeds the maximum allowed number of bytes."},
	429: {"rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"},
	500: {"api_error", "Internal server error"},
	529: {"overloaded_error", "Overloaded"},
}

func writeError(w http.ResponseWriter, status int, message string) {
	t, ok := ErrorTypes[status]
	if !ok {
		t = ErrorTypes[500]
	}
	if message == "" {
		message = t[1]
	}
	writeJSON(w, status, map[string]any{"type": "error", "error": map[string]any{"type": t[0], "message": message}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Request-Id", "req_011fake")
	w.Header().Set("Anthropic-Organization-Id", "00000000-0000-0000-0000-000000000000")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) serve(w http.ResponseWriter, hr *http.Request) {
	if hr.Method != http.MethodPost || hr.URL.Path != "/v1/messages" {
		writeError(w, http.StatusNotFound, "")
		return
	}
	// The service takes the key as x-api-key, or as a bearer token (what
	// the SDK sends).
	if s.Key != "" && hr.Header.Get("X-Api-Key") != s.Key && hr.Header.Get("Authorization") != "Bearer "+s.Key {
		writeError(w, http.StatusUnauthorized, "")
		return
	}
	if hr.Header.Get("Anthropic-Version") == "" {
		writeError(w, http.StatusBadRequest, "anthropic-version: header is required")
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
	req := Request{Raw: raw, Header: hr.Header.Clone()}
	if err := json.Unmarshal(raw, &req.Body); err != nil {
		writeError(w, http.StatusBadRequest, "body: invalid JSON")
		return
	}
	if _, ok := req.Body["max_tokens"]; !ok {
		writeError(w, http.StatusBadRequest, "max_tokens: Field required")
		return
	}
	if req.Body["stream"] == true {
		writeError(w, http.StatusBadRequest, "stream: this fake answers whole messages only")
		return
	}
	req.Prompt = promptOf(req.Body)
	s.mu.Lock()
	s.requests = append(s.requests, req)
	n := len(s.requests)
	s.mu.Unlock()
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
	if status != http.StatusOK {
		writeError(w, status, reply.Message)
		return
	}
	writeJSON(w, status, message(req, reply))
}

func message(req Request, r Reply) map[string]any {
	model, _ := req.Body["model"].(string)
	if r.Model != "" {
		model = r.Model
	}
	var content []any
	stop := r.StopReason
	outText := ""
	switch {
	case r.Text != nil:
		content = []any{map[string]any{"type": "text", "text": *r.Text}}
		outText = *r.Text
		if stop == "" {
			stop = "end_turn"
		}
	case r.Tool != "":
		content = []any{map[string]any{"type": "tool_use", "id": "toolu_fake", "name": r.Tool, "input": r.ToolInput}}
	default:
		input := r.Input
		if input == nil {
			input = map[string]any{"value": r.Value}
		}
		name := "algal_cell_output"
		if tc, ok := req.Body["tool_choice"].(map[string]any); ok && tc["type"] == "tool" {
			name, _ = tc["name"].(string)
		}
		content = []any{map[string]any{"type": "tool_use", "id": "toolu_fake", "name": name, "input": input}}
		b, _ := json.Marshal(input)
		outText = string(b)
	}
	if stop == "" {
		stop = "tool_use"
	}
	out := map[string]any{"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
		"content": content, "stop_reason": stop, "stop_sequence": nil}
	if !r.OmitUsage {
		u := map[string]any{"input_tokens": (len(req.Raw) + 3) / 4, "output_tokens": max(1, (len(outText)+3)/4),
			"cache_creation_input_tokens": r.CacheWrite, "cache_read_input_tokens": r.CacheRead}
		out["usage"] = u
	}
	return out
}

func promptOf(body map[string]any) string {
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		c, ok := mm["content"].(string)
		if mm["role"] != "user" || !ok {
			continue
		}
		c = strings.TrimPrefix(c, "Task:\n")
		if i := strings.Index(c, "\n\nContext (JSON):"); i >= 0 {
			return c[:i]
		}
		return c
	}
	return ""
}

// Context returns the context JSON the first user turn carries, decoded.
func (r Request) Context() map[string]any {
	msgs, _ := r.Body["messages"].([]any)
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		c, ok := mm["content"].(string)
		if mm["role"] != "user" || !ok {
			continue
		}
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
