package effect

import (
	"context"
	"testing"
)

func BenchmarkScriptedExecute(b *testing.B) {
	s, _ := NewScripted("scripted", map[string]any{"route": "bug"})
	req := request("route", KindClassifier, nil)
	ctx := context.Background()
	for b.Loop() {
		if _, err := s.Execute(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkScriptedViaRouter(b *testing.B) {
	s, _ := NewScripted("scripted", map[string]any{"route": "bug"})
	r := NewRouter(s)
	req := request("route", KindClassifier, nil)
	ctx := context.Background()
	for b.Loop() {
		if rec, err := r.Effect(ctx, req, 0); err != nil || rec.Err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReplayViaRouter(b *testing.B) {
	req := request("route", KindClassifier, nil)
	d, _ := RequestDigest(req)
	recs := make([]Record, 0, 1<<16)
	for range 1 << 16 {
		recs = append(recs, Record{RequestDigest: d, Executor: "scripted", Output: "bug"})
	}
	r := NewRouter(NewReplay(recs))
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%(1<<16) == 0 && i > 0 {
			b.StopTimer()
			r = NewRouter(NewReplay(recs))
			b.StartTimer()
		}
		if _, err := r.Effect(ctx, req, 0); err != nil {
			b.Fatal(err)
		}
	}
}
