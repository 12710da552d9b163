package adk_test

import (
	"context"
	"fmt"
	"testing"

	adkagent "google.golang.org/adk/agent"
	"google.golang.org/genai"
)

// BenchmarkInvocation is one ADK invocation through the runner with a
// scripted model, in conversations of 20 invocations: with the plugin
// (memory injected before the model call, the turn stored in SQLite after
// it, pruning in the background) and without it (ADK alone).
func BenchmarkInvocation(b *testing.B) {
	for _, withPlugin := range []bool{false, true} {
		b.Run(fmt.Sprintf("plugin=%v", withPlugin), func(b *testing.B) {
			s := newStack(b, withPlugin, nil)
			ctx := context.Background()
			sess := s.newSession(b, "dana")
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if i%20 == 19 {
					sess = s.newSession(b, "dana")
				}
				msg := genai.NewContentFromText(fmt.Sprintf("Message %d: I saved $%d this month.", i, i), genai.RoleUser)
				for _, err := range s.run.Run(ctx, "dana", sess.ID(), msg, adkagent.RunConfig{}) {
					if err != nil {
						b.Fatal(err)
					}
				}
				s.llm.reset()
			}
			b.StopTimer()
			if err := s.mem.Provider().Flush(ctx); err != nil {
				b.Fatal(err)
			}
		})
	}
}
