package lexical_test

import (
	"context"
	"fmt"

	"github.com/agentmemory/agentmemory/embed"
	"github.com/agentmemory/agentmemory/embed/lexical"
)

func Example() {
	e, err := lexical.New(lexical.Config{}) // 384 dimensions
	if err != nil {
		panic(err)
	}
	vs, err := e.Embed(context.Background(), []string{
		"What did we decide about my retirement plan?",
		"We decided to keep the retirement plan in index funds.",
		"My car needs new tyres.",
		"I bought an automobile.",
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(e.Model(), len(vs[0]))
	fmt.Println("related texts closer:", embed.Cosine(vs[0], vs[1]) > embed.Cosine(vs[0], vs[2]))
	fmt.Printf("car vs automobile: %.2f (lexical, not semantic)\n", embed.Cosine(vs[2], vs[3]))
	// Output:
	// lexical-v1-384 384
	// related texts closer: true
	// car vs automobile: 0.00 (lexical, not semantic)
}
