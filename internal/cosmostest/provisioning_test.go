package cosmostest_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/agentmemory/agentmemory/internal/cosmostest"
)

// vectorProps is a container with one vector path of dims dimensions and a
// vector index of type idx on it, and no full text.
func vectorProps(id string, idx azcosmos.VectorIndexType, dims int32) azcosmos.ContainerProperties {
	return azcosmos.ContainerProperties{
		ID:                     id,
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/user_id"}, Kind: azcosmos.PartitionKeyKindHash},
		VectorEmbeddingPolicy: &azcosmos.VectorEmbeddingPolicy{VectorEmbeddings: []azcosmos.VectorEmbedding{{
			Path: "/vec", DataType: azcosmos.VectorDataTypeFloat32,
			DistanceFunction: azcosmos.VectorDistanceFunctionCosine, Dimensions: dims,
		}}},
		IndexingPolicy: &azcosmos.IndexingPolicy{
			Automatic: true, IndexingMode: azcosmos.IndexingModeConsistent,
			IncludedPaths: []azcosmos.IncludedPath{{Path: "/*"}},
			ExcludedPaths: []azcosmos.ExcludedPath{{Path: "/vec/*"}},
			VectorIndexes: []azcosmos.VectorIndex{{Path: "/vec", Type: idx}},
		},
	}
}

// fullTextProps is a container with a full-text policy and index on /text
// and no vectors.
func fullTextProps(id string) azcosmos.ContainerProperties {
	return azcosmos.ContainerProperties{
		ID:                     id,
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/user_id"}, Kind: azcosmos.PartitionKeyKindHash},
		FullTextPolicy: &azcosmos.FullTextPolicy{DefaultLanguage: "en-US",
			FullTextPaths: []azcosmos.FullTextPath{{Path: "/text", Language: "en-US"}}},
		IndexingPolicy: &azcosmos.IndexingPolicy{
			Automatic: true, IndexingMode: azcosmos.IndexingModeConsistent,
			IncludedPaths:   []azcosmos.IncludedPath{{Path: "/*"}},
			FullTextIndexes: []azcosmos.FullTextIndex{{Path: "/text"}},
		},
	}
}

// accountDatabase creates a database on the server at endpoint, with
// throughput when tp is not nil.
func accountDatabase(t *testing.T, endpoint string, tp *azcosmos.ThroughputProperties) *azcosmos.DatabaseClient {
	t.Helper()
	cred, err := azcosmos.NewKeyCredential(cosmostest.Key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := azcosmos.NewClientWithKey(endpoint, cred, &azcosmos.ClientOptions{ClientOptions: azcore.ClientOptions{
		Retry: policy.RetryOptions{MaxRetries: 1, RetryDelay: 10 * time.Millisecond},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	name := cosmostest.DatabaseName(t)
	var opts *azcosmos.CreateDatabaseOptions
	if tp != nil {
		opts = &azcosmos.CreateDatabaseOptions{ThroughputProperties: tp}
	}
	if _, err := c.CreateDatabase(ctx(t), azcosmos.DatabaseProperties{ID: name}, opts); err != nil {
		t.Fatalf("create database: %v", err)
	}
	db, err := c.NewDatabase(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = db.Delete(ctx(t), nil) })
	return db
}

// wantRefusal checks that err is the service's 400 with a message holding
// want.
func wantRefusal(t *testing.T, what string, err error, want string) {
	t.Helper()
	if statusCode(err) != http.StatusBadRequest {
		t.Fatalf("%s: got %v, want a 400", what, err)
	}
	if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `Message: {\"Errors\":[`) {
		t.Errorf("%s: the 400 says %v, want the service's shape with %q", what, err, want)
	}
}

func TestAccountWithoutVectorSearch(t *testing.T) {
	db := accountDatabase(t, cosmostest.NewAccount(t, cosmostest.Account{Without: []string{cosmostest.CapabilityVectorSearch}}), nil)
	_, err := db.CreateContainer(ctx(t), vectorProps("v", azcosmos.VectorIndexTypeQuantizedFlat, 8), nil)
	wantRefusal(t, "a vector container", err, "A Container Vector Policy has been provided, but the capability has not been enabled on your account.")
	// Full text alone is still accepted.
	if _, err := db.CreateContainer(ctx(t), fullTextProps("t"), nil); err != nil {
		t.Errorf("a full-text container on an account with full text: %v", err)
	}
}

func TestAccountWithoutFullTextSearch(t *testing.T) {
	db := accountDatabase(t, cosmostest.NewAccount(t, cosmostest.Account{Without: []string{cosmostest.CapabilityFullTextSearch}}), nil)
	_, err := db.CreateContainer(ctx(t), fullTextProps("t"), nil)
	wantRefusal(t, "a full-text container", err, "A Full Text Policy has been provided, but the capability has not been enabled on your account.")
	if _, err := db.CreateContainer(ctx(t), vectorProps("v", azcosmos.VectorIndexTypeQuantizedFlat, 8), nil); err != nil {
		t.Errorf("a vector container on an account with vector search: %v", err)
	}
}

func TestSharedThroughputRefusesVectorIndexes(t *testing.T) {
	endpoint := cosmostest.Endpoint(t)
	tp := azcosmos.NewManualThroughputProperties(400)
	shared := accountDatabase(t, endpoint, &tp)
	_, err := shared.CreateContainer(ctx(t), vectorProps("v", azcosmos.VectorIndexTypeDiskANN, 8), nil)
	wantRefusal(t, "a vector index in a shared-throughput database", err, "Vector Indexing is not supported for shared throughput offer")
	auto := azcosmos.NewAutoscaleThroughputProperties(1000)
	_, err = accountDatabase(t, endpoint, &auto).CreateContainer(ctx(t), vectorProps("v", azcosmos.VectorIndexTypeQuantizedFlat, 8), nil)
	wantRefusal(t, "a vector index in an autoscale shared-throughput database", err, "shared throughput")
	if _, err := shared.CreateContainer(ctx(t), fullTextProps("t"), nil); err != nil {
		t.Errorf("a container without vector indexes in a shared-throughput database: %v", err)
	}
	if _, err := accountDatabase(t, endpoint, nil).CreateContainer(ctx(t), vectorProps("v", azcosmos.VectorIndexTypeDiskANN, 8), nil); err != nil {
		t.Errorf("a vector index in a database without throughput: %v", err)
	}
}

func TestVectorIndexDimensionLimits(t *testing.T) {
	db := accountDatabase(t, cosmostest.Endpoint(t), nil)
	for _, c := range []struct {
		idx  azcosmos.VectorIndexType
		dims int32
		ok   bool
	}{
		{azcosmos.VectorIndexTypeFlat, 505, true},
		{azcosmos.VectorIndexTypeFlat, 506, false},
		{azcosmos.VectorIndexTypeFlat, 1536, false},
		{azcosmos.VectorIndexTypeQuantizedFlat, 1536, true},
		{azcosmos.VectorIndexTypeQuantizedFlat, 4096, true},
		{azcosmos.VectorIndexTypeQuantizedFlat, 4097, false},
		{azcosmos.VectorIndexTypeDiskANN, 4096, true},
		{azcosmos.VectorIndexTypeDiskANN, 4097, false},
	} {
		id := fmt.Sprintf("%s-%d", c.idx, c.dims)
		_, err := db.CreateContainer(ctx(t), vectorProps(id, c.idx, c.dims), nil)
		if c.ok {
			if err != nil {
				t.Errorf("%s over %d dimensions: %v", c.idx, c.dims, err)
			}
			continue
		}
		wantRefusal(t, fmt.Sprintf("%s over %d dimensions", c.idx, c.dims), err, "vector index type '"+string(c.idx)+"'")
	}
}
