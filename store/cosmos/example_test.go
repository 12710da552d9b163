package cosmos_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"

	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/cosmos"
)

// Open an account with Entra ID (DefaultAzureCredential, since neither Key
// nor Credential is set), provision the database and containers for
// 1536-dimension embeddings, and run a hybrid search.
func Example() {
	ctx := context.Background()
	st, err := cosmos.Open(ctx, cosmos.Config{
		Endpoint:          os.Getenv("AZURE_COSMOS_ENDPOINT"),
		Dimensions:        1536,
		CreateIfNotExists: true,
		VectorIndex:       cosmos.DiskANN,
		AutoscaleMaxRU:    4000,
		Logger:            slog.Default(),
	})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()

	var query []float32 // the embedding of the user's question
	hits, err := st.SearchInteractions(ctx, "user-123", store.SearchRequest{
		Text:   "roth ira contribution limits",
		Vector: query,
		TopK:   5,
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range hits {
		fmt.Printf("%.4f %s\n", h.Score, h.Doc.Summary)
	}
	ru := st.Stats().Total()
	fmt.Printf("%d requests, %.1f RU\n", ru.Requests, ru.RequestCharge)
}
