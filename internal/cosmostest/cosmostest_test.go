package cosmostest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/agentmemory/agentmemory/internal/cosmostest"
)

func TestMain(m *testing.M) { cosmostest.Main(m) }

type doc struct {
	ID     string    `json:"id"`
	UserID string    `json:"user_id"`
	Text   string    `json:"text,omitempty"`
	Vec    []float32 `json:"vec,omitempty"`
	N      int       `json:"n,omitempty"`
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// containerProps is a container like store/cosmos provisions: partition key
// /user_id, a cosine vector policy on /vec and full text on /text.
func containerProps(id string) azcosmos.ContainerProperties {
	return azcosmos.ContainerProperties{
		ID: id,
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{
			Paths: []string{"/user_id"},
			Kind:  azcosmos.PartitionKeyKindHash,
		},
		VectorEmbeddingPolicy: &azcosmos.VectorEmbeddingPolicy{VectorEmbeddings: []azcosmos.VectorEmbedding{{
			Path: "/vec", DataType: azcosmos.VectorDataTypeFloat32,
			DistanceFunction: azcosmos.VectorDistanceFunctionCosine, Dimensions: 3,
		}}},
		FullTextPolicy: &azcosmos.FullTextPolicy{
			DefaultLanguage: "en-US",
			FullTextPaths:   []azcosmos.FullTextPath{{Path: "/text", Language: "en-US"}},
		},
		IndexingPolicy: &azcosmos.IndexingPolicy{
			Automatic:       true,
			IndexingMode:    azcosmos.IndexingModeConsistent,
			IncludedPaths:   []azcosmos.IncludedPath{{Path: "/*"}},
			ExcludedPaths:   []azcosmos.ExcludedPath{{Path: "/vec/*"}},
			VectorIndexes:   []azcosmos.VectorIndex{{Path: "/vec", Type: azcosmos.VectorIndexTypeQuantizedFlat}},
			FullTextIndexes: []azcosmos.FullTextIndex{{Path: "/text"}},
		},
	}
}

func newContainer(t *testing.T, props azcosmos.ContainerProperties) *azcosmos.ContainerClient {
	t.Helper()
	db := cosmostest.NewDatabase(t)
	if _, err := db.CreateContainer(ctx(t), props, nil); err != nil {
		t.Fatalf("create container: %v", err)
	}
	c, err := db.NewContainer(props.ID)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func put(t *testing.T, c *azcosmos.ContainerClient, docs ...doc) {
	t.Helper()
	for _, d := range docs {
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.UpsertItem(ctx(t), azcosmos.NewPartitionKeyString(d.UserID), b, nil); err != nil {
			t.Fatalf("upsert %s/%s: %v", d.UserID, d.ID, err)
		}
	}
}

// query runs sql with parameters in user's partition ("" for a
// cross-partition query) and returns every row, following continuations.
func query[T any](t *testing.T, c *azcosmos.ContainerClient, user, sql string, params map[string]any, pageSize int32) []T {
	t.Helper()
	rows, err := tryQuery[T](t, c, user, sql, params, pageSize)
	if err != nil {
		t.Fatalf("query %q: %v", sql, err)
	}
	return rows
}

func tryQuery[T any](t *testing.T, c *azcosmos.ContainerClient, user, sql string, params map[string]any, pageSize int32) ([]T, error) {
	t.Helper()
	opts := &azcosmos.QueryOptions{PageSizeHint: pageSize}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range params {
			if !yield(k) {
				return
			}
		}
	}) {
		opts.QueryParameters = append(opts.QueryParameters, azcosmos.QueryParameter{Name: k, Value: params[k]})
	}
	pk := azcosmos.NewPartitionKey()
	if user != "" {
		pk = azcosmos.NewPartitionKeyString(user)
	}
	pager := c.NewQueryItemsPager(sql, pk, opts)
	var out []T
	for pager.More() {
		page, err := pager.NextPage(ctx(t))
		if err != nil {
			return nil, err
		}
		for _, item := range page.Items {
			var v T
			if err := json.Unmarshal(item, &v); err != nil {
				t.Fatalf("decode %s: %v", item, err)
			}
			out = append(out, v)
		}
	}
	return out, nil
}

func ids(docs []doc) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.ID
	}
	return out
}

func wantIDs(t *testing.T, what string, got []doc, want ...string) {
	t.Helper()
	if g := ids(got); !slices.Equal(g, want) {
		t.Errorf("%s: got ids %v, want %v", what, g, want)
	}
}

func statusCode(err error) int {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode
	}
	return 0
}

func TestEndpointIsPlainHTTPOnLoopback(t *testing.T) {
	ep := cosmostest.Endpoint(t)
	resp, err := http.Get(ep + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var account struct {
		Writable []struct {
			Endpoint string `json:"databaseAccountEndpoint"`
		} `json:"writableLocations"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&account); err != nil {
		t.Fatal(err)
	}
	if len(account.Writable) == 0 || account.Writable[0].Endpoint != ep+"/" {
		t.Errorf("account writable locations = %+v, want %s/", account.Writable, ep)
	}
	if resp.Header.Get("Connection") != "keep-alive" {
		t.Errorf("Connection header = %q, want keep-alive", resp.Header.Get("Connection"))
	}
}

func TestContainerDefinitionRoundTrip(t *testing.T) {
	props := containerProps("interactions")
	c := newContainer(t, props)
	resp, err := c.Read(ctx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := resp.ContainerProperties
	if !slices.Equal(got.PartitionKeyDefinition.Paths, []string{"/user_id"}) {
		t.Errorf("partition key paths = %v", got.PartitionKeyDefinition.Paths)
	}
	if !reflect.DeepEqual(got.VectorEmbeddingPolicy, props.VectorEmbeddingPolicy) {
		t.Errorf("vector policy = %+v, want %+v", got.VectorEmbeddingPolicy, props.VectorEmbeddingPolicy)
	}
	if !reflect.DeepEqual(got.FullTextPolicy, props.FullTextPolicy) {
		t.Errorf("full-text policy = %+v, want %+v", got.FullTextPolicy, props.FullTextPolicy)
	}
	ip := got.IndexingPolicy
	if ip == nil {
		t.Fatal("no indexing policy")
	}
	if !reflect.DeepEqual(ip.VectorIndexes, props.IndexingPolicy.VectorIndexes) ||
		!reflect.DeepEqual(ip.FullTextIndexes, props.IndexingPolicy.FullTextIndexes) ||
		!reflect.DeepEqual(ip.ExcludedPaths, props.IndexingPolicy.ExcludedPaths) ||
		!reflect.DeepEqual(ip.IncludedPaths, props.IndexingPolicy.IncludedPaths) {
		t.Errorf("indexing policy = %+v, want %+v", *ip, *props.IndexingPolicy)
	}
}

func TestCRUDAndNotFound(t *testing.T) {
	c := newContainer(t, containerProps("items"))
	pk := azcosmos.NewPartitionKeyString("u1")
	b, _ := json.Marshal(doc{ID: "a", UserID: "u1", Text: "hello"})
	if _, err := c.CreateItem(ctx(t), pk, b, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateItem(ctx(t), pk, b, nil); statusCode(err) != http.StatusConflict {
		t.Errorf("second create: %v, want 409", err)
	}
	r, err := c.ReadItem(ctx(t), pk, "a", nil)
	if err != nil {
		t.Fatal(err)
	}
	var d doc
	if err := json.Unmarshal(r.Value, &d); err != nil || d.Text != "hello" {
		t.Errorf("read = %s (%v)", r.Value, err)
	}
	b, _ = json.Marshal(doc{ID: "a", UserID: "u1", Text: "bye"})
	if _, err := c.ReplaceItem(ctx(t), pk, "a", b, nil); err != nil {
		t.Fatal(err)
	}
	r, _ = c.ReadItem(ctx(t), pk, "a", nil)
	if err := json.Unmarshal(r.Value, &d); err != nil || d.Text != "bye" {
		t.Errorf("after replace = %s", r.Value)
	}
	if _, err := c.DeleteItem(ctx(t), pk, "a", nil); err != nil {
		t.Fatal(err)
	}

	other := azcosmos.NewPartitionKeyString("u2")
	put(t, c, doc{ID: "b", UserID: "u1"})
	for name, op := range map[string]func() error{
		"read deleted":    func() error { _, err := c.ReadItem(ctx(t), pk, "a", nil); return err },
		"replace deleted": func() error { _, err := c.ReplaceItem(ctx(t), pk, "a", b, nil); return err },
		"delete deleted":  func() error { _, err := c.DeleteItem(ctx(t), pk, "a", nil); return err },
		"patch deleted": func() error {
			p := azcosmos.PatchOperations{}
			p.AppendSet("/text", "x")
			_, err := c.PatchItem(ctx(t), pk, "a", p, nil)
			return err
		},
		"read other user":    func() error { _, err := c.ReadItem(ctx(t), other, "b", nil); return err },
		"delete other user":  func() error { _, err := c.DeleteItem(ctx(t), other, "b", nil); return err },
		"replace other user": func() error { _, err := c.ReplaceItem(ctx(t), other, "b", b, nil); return err },
	} {
		err := op()
		if statusCode(err) != http.StatusNotFound {
			t.Errorf("%s: %v, want a 404 ResponseError", name, err)
			continue
		}
		// azcosmos sets ErrorCode to the HTTP status; the Cosmos-shaped body
		// is in the message.
		if !strings.Contains(err.Error(), `"code": "NotFound"`) {
			t.Errorf("%s: error body lacks the NotFound code: %v", name, err)
		}
	}
	if _, err := c.ReadItem(ctx(t), pk, "b", nil); err != nil {
		t.Errorf("b must survive the other user's delete: %v", err)
	}
}

func TestETagPrecondition(t *testing.T) {
	c := newContainer(t, containerProps("sessions"))
	pk := azcosmos.NewPartitionKeyString("u1")
	b, _ := json.Marshal(doc{ID: "s", UserID: "u1", N: 1})
	created, err := c.CreateItem(ctx(t), pk, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	etag := created.ETag
	if etag == "" {
		t.Fatal("no ETag on create")
	}
	b2, _ := json.Marshal(doc{ID: "s", UserID: "u1", N: 2})
	updated, err := c.ReplaceItem(ctx(t), pk, "s", b2, &azcosmos.ItemOptions{IfMatchEtag: &etag})
	if err != nil {
		t.Fatalf("replace with current ETag: %v", err)
	}
	if updated.ETag == etag {
		t.Error("ETag did not change on replace")
	}
	if _, err := c.ReplaceItem(ctx(t), pk, "s", b, &azcosmos.ItemOptions{IfMatchEtag: &etag}); statusCode(err) != http.StatusPreconditionFailed {
		t.Errorf("replace with stale ETag: %v, want 412", err)
	}
	if _, err := c.UpsertItem(ctx(t), pk, b, &azcosmos.ItemOptions{IfMatchEtag: &etag}); statusCode(err) != http.StatusPreconditionFailed {
		t.Errorf("upsert with stale ETag: %v, want 412", err)
	}
}

func TestQueryIsScopedToPartition(t *testing.T) {
	c := newContainer(t, containerProps("interactions"))
	put(t, c,
		doc{ID: "x", UserID: "alice", Text: "alice secret"},
		doc{ID: "y", UserID: "alice", Text: "alice notes"},
		doc{ID: "x", UserID: "bob", Text: "bob secret"},
	)
	got := query[doc](t, c, "alice", "SELECT * FROM c", nil, 0)
	if len(got) != 2 || got[0].UserID != "alice" || got[1].UserID != "alice" {
		t.Errorf("alice sees %+v", got)
	}
	// Bob's id and user id in the query text do not reach Bob's partition.
	got = query[doc](t, c, "alice", "SELECT * FROM c WHERE c.id = @id OR c.user_id = @u", map[string]any{"@id": "x", "@u": "bob"}, 0)
	if len(got) != 1 || got[0].UserID != "alice" {
		t.Errorf("alice asking for bob's docs sees %+v", got)
	}
	got = query[doc](t, c, "bob", "SELECT * FROM c WHERE FullTextContains(c.text, 'secret')", nil, 0)
	if len(got) != 1 || got[0].UserID != "bob" {
		t.Errorf("bob full text sees %+v", got)
	}
	// Without a partition key the query is cross-partition.
	if got := query[doc](t, c, "", "SELECT * FROM c", nil, 0); len(got) != 3 {
		t.Errorf("cross-partition query sees %d documents, want 3", len(got))
	}
}

type scored struct {
	ID string  `json:"id"`
	S  float64 `json:"s"`
}

func TestVectorDistanceOrder(t *testing.T) {
	c := newContainer(t, containerProps("interactions"))
	put(t, c,
		doc{ID: "far", UserID: "u", Vec: []float32{0, 0, 1}},
		doc{ID: "near", UserID: "u", Vec: []float32{1, 0.1, 0}},
		doc{ID: "mid", UserID: "u", Vec: []float32{1, 1, 0}},
		doc{ID: "exact", UserID: "u", Vec: []float32{1, 0, 0}},
		doc{ID: "novec", UserID: "u"},
		doc{ID: "other", UserID: "v", Vec: []float32{1, 0, 0}},
	)
	q := []float32{1, 0, 0}
	got := query[scored](t, c, "u", "SELECT TOP @k c.id, VectorDistance(c.vec, @q) AS s FROM c ORDER BY VectorDistance(c.vec, @q)", map[string]any{"@k": 3, "@q": q}, 0)
	wantIDs := []string{"exact", "near", "mid"}
	wantS := []float64{1, 1 / math.Sqrt(1.01), 1 / math.Sqrt(2)}
	if len(got) != 3 {
		t.Fatalf("got %+v, want 3 rows", got)
	}
	for i := range got {
		if got[i].ID != wantIDs[i] || math.Abs(got[i].S-wantS[i]) > 1e-6 {
			t.Errorf("row %d = %+v, want %s %.6f", i, got[i], wantIDs[i], wantS[i])
		}
	}

	// Per-call distance functions: euclidean is a distance (smallest first),
	// dot product a similarity.
	got = query[scored](t, c, "u", "SELECT c.id, VectorDistance(c.vec, @q, false, {'distanceFunction': 'euclidean'}) AS s FROM c ORDER BY VectorDistance(c.vec, @q, false, {'distanceFunction': 'euclidean'})", map[string]any{"@q": q}, 0)
	if len(got) != 4 || got[0].ID != "exact" || got[1].ID != "near" || got[2].ID != "mid" || got[3].ID != "far" ||
		got[0].S != 0 || math.Abs(got[1].S-0.1) > 1e-6 || math.Abs(got[3].S-math.Sqrt2) > 1e-6 {
		t.Errorf("euclidean: got %+v, want exact 0, near 0.1, mid 1, far 1.414", got)
	}
	got = query[scored](t, c, "u", "SELECT c.id, VectorDistance(c.vec, [2, 0, 0], true, {'distanceFunction': 'DotProduct'}) AS s FROM c ORDER BY VectorDistance(c.vec, [2, 0, 0], true, {'distanceFunction': 'DotProduct'})", nil, 0)
	if len(got) != 4 || got[0].S != 2 || got[3].ID != "far" || got[3].S != 0 {
		t.Errorf("dot product: %+v", got)
	}
}

type textDoc struct {
	ID       string `json:"id"`
	UserID   string `json:"user_id"`
	Text     string `json:"text"`
	Metadata struct {
		Entities []string `json:"entities"`
	} `json:"metadata"`
}

func TestFullText(t *testing.T) {
	c := newContainer(t, containerProps("interactions"))
	docs := []textDoc{
		{ID: "t1", UserID: "u", Text: "Retirement savings and bonds"},
		{ID: "t2", UserID: "u", Text: "Bond funds for retirement planning; BONDS, bonds!"},
		{ID: "t3", UserID: "u", Text: "Crypto speculation"},
		{ID: "t4", UserID: "v", Text: "bonds bonds bonds planning"},
	}
	docs[2].Metadata.Entities = []string{"Vanguard", "Coinbase"}
	for _, d := range docs {
		b, _ := json.Marshal(d)
		if _, err := c.UpsertItem(ctx(t), azcosmos.NewPartitionKeyString(d.UserID), b, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		sql  string
		want []string
	}{
		// Case-insensitive, stemmed word match (bond ~ bonds).
		{"SELECT c.id FROM c WHERE FullTextContains(c.text, 'bond')", []string{"t1", "t2"}},
		{"SELECT c.id FROM c WHERE FullTextContains(c.text, 'RETIREMENT')", []string{"t1", "t2"}},
		{"SELECT c.id FROM c WHERE FullTextContains(c.text, 'bon')", nil},
		{"SELECT c.id FROM c WHERE FullTextContainsAll(c.text, 'bonds', 'planning')", []string{"t2"}},
		{"SELECT c.id FROM c WHERE FullTextContainsAny(c.text, 'crypto', 'planning')", []string{"t2", "t3"}},
		// An array of strings is not text: the documented functions search
		// a string property, and a full-text path cannot name array
		// elements (no [] or * in a full-text policy).
		{"SELECT c.id FROM c WHERE FullTextContains(c.metadata.entities, 'vanguard')", nil},
		{"SELECT c.id FROM c WHERE FullTextContainsAny(c.metadata.entities, 'vanguard', 'coinbase')", nil},
		// BM25: more occurrences of the term rank first.
		{"SELECT c.id FROM c WHERE FullTextContainsAny(c.text, 'bond', 'crypto') ORDER BY RANK FullTextScore(c.text, 'bond')", []string{"t2", "t1", "t3"}},
		{"SELECT TOP 1 c.id FROM c ORDER BY RANK FullTextScore(c.text, 'speculation', 'crypto')", []string{"t3"}},
		// The older array form of the terms.
		{"SELECT TOP 2 c.id FROM c ORDER BY RANK FullTextScore(c.text, ['bond'])", []string{"t2", "t1"}},
	} {
		got := query[doc](t, c, "u", tc.sql, nil, 0)
		wantIDs(t, tc.sql, got, tc.want...)
	}
	got := query[doc](t, c, "u", "SELECT c.id FROM c WHERE FullTextContains(c.text, @w) ORDER BY RANK FullTextScore(c.text, @w)", map[string]any{"@w": "bonds"}, 0)
	wantIDs(t, "parameterised terms", got, "t2", "t1")
}

// TestFullTextStopwords: as the service does, the full-text functions
// drop English stopwords from the text and from the search terms, so a
// term made only of stopwords matches nothing and scores nothing.
func TestFullTextStopwords(t *testing.T) {
	c := newContainer(t, containerProps("interactions"))
	put(t, c,
		doc{ID: "s1", UserID: "u", Text: "It was the best of times"},
		doc{ID: "s2", UserID: "u", Text: "John Doe to do"},
		doc{ID: "s3", UserID: "u", Text: "best times ahead"},
	)
	for _, tc := range []struct {
		sql  string
		want []string
	}{
		{"SELECT c.id FROM c WHERE FullTextContains(c.text, 'the')", nil},
		{"SELECT c.id FROM c WHERE FullTextContains(c.text, 'IT')", nil},
		{"SELECT c.id FROM c WHERE FullTextContainsAny(c.text, 'it', 'was', 'of')", nil},
		// Stopwords in a phrase are dropped; the other words must be there.
		{"SELECT c.id FROM c WHERE FullTextContains(c.text, 'the best of times')", []string{"s1", "s3"}},
		{"SELECT c.id FROM c WHERE FullTextContains(c.text, 'John Doe To Do')", []string{"s2"}},
		// A term made only of stopwords is never contained.
		{"SELECT c.id FROM c WHERE FullTextContainsAll(c.text, 'John', 'Doe', 'To')", nil},
		{"SELECT c.id FROM c WHERE FullTextContainsAny(c.text, 'to', 'john')", []string{"s2"}},
		// Stopwords score nothing: s3 alone holds a scored word.
		{"SELECT TOP 1 c.id FROM c ORDER BY RANK FullTextScore(c.text, 'the', 'of', 'ahead')", []string{"s3"}},
	} {
		got := query[doc](t, c, "u", tc.sql, nil, 0)
		wantIDs(t, tc.sql, got, tc.want...)
	}
}

func TestInvalidQueriesAre400(t *testing.T) {
	c := newContainer(t, containerProps("interactions"))
	put(t, c, doc{ID: "a", UserID: "u", Text: "x", Vec: []float32{1, 0, 0}})
	for _, sql := range []string{
		"SELECT c.id, FullTextScore(c.text, 'x') AS s FROM c",    // only in ORDER BY RANK, as in Cosmos DB
		"SELECT c.id FROM c ORDER BY FullTextScore(c.text, 'x')", // needs RANK
		"SELECT c.id FROM c ORDER BY RRF(VectorDistance(c.vec, [1,0,0]), FullTextScore(c.text, 'x'))",
		"SELECT c.id FROM c ORDER BY RANK c.id",
		"SELECT c.id FROM c ORDER BY RANK RRF(c.id, FullTextScore(c.text, 'x'))",
		"SELECT c.id FROM c OFFSET 1",
		"SELECT c.id FROM c LIMIT 1",
		"SELECT c.id FROM c WHERE c.text LIKE 'x%'", // LIKE is not supported by the test server
	} {
		_, err := tryQuery[doc](t, c, "u", sql, nil, 0)
		if statusCode(err) != http.StatusBadRequest {
			t.Errorf("%s: %v, want 400", sql, err)
		}
	}
}

// hybridDocs is a corpus whose fused order is computed by hand in
// TestRRF. Query vector [1,0,0], term "bond".
//
//	id  cosine  vector rank  text (tokens)                        BM25 rank
//	d1  1.0     1            stocks and shares (3)                -
//	d2  0.8     2            bond bond fund (3)                   1 (tf 2)
//	d3  0.0     4            bond etf (2)                         2
//	d4  0.6     3            municipal bond ladder strategy notes 3 (dl 5)
//
// RRF (k=60): d1 1/61 = .016393; d2 1/62+1/61 = .032522;
// d3 1/64+1/62 = .031754; d4 1/63+1/63 = .031746: d2 d3 d4 d1.
// Weights [3,1] (vector, text): d1 .049180; d2 .064780; d3 .063004;
// d4 .063492: d2 d4 d3 d1.
var hybridDocs = []doc{
	{ID: "d1", UserID: "u", Vec: []float32{1, 0, 0}, Text: "stocks and shares"},
	{ID: "d2", UserID: "u", Vec: []float32{0.8, 0.6, 0}, Text: "bond bond fund"},
	{ID: "d3", UserID: "u", Vec: []float32{0, 1, 0}, Text: "bond etf"},
	{ID: "d4", UserID: "u", Vec: []float32{0.6, 0.8, 0}, Text: "municipal bond ladder strategy notes"},
	// Another user's documents must change neither ranks nor statistics.
	{ID: "d1", UserID: "v", Vec: []float32{0.9, 0.1, 0}, Text: "bond bond bond bond"},
	{ID: "e1", UserID: "v", Vec: []float32{1, 0, 0}, Text: "etf etf etf"},
}

func TestRRF(t *testing.T) {
	c := newContainer(t, containerProps("interactions"))
	put(t, c, hybridDocs...)
	params := map[string]any{"@q": []float32{1, 0, 0}, "@t": "bond"}
	got := query[doc](t, c, "u", "SELECT TOP 10 c.id FROM c ORDER BY RANK RRF(VectorDistance(c.vec, @q), FullTextScore(c.text, @t))", params, 0)
	wantIDs(t, "RRF", got, "d2", "d3", "d4", "d1")
	got = query[doc](t, c, "u", "SELECT TOP 10 * FROM c ORDER BY RANK RRF(VectorDistance(c.vec, @q), FullTextScore(c.text, @t), [3, 1])", params, 0)
	wantIDs(t, "weighted RRF", got, "d2", "d4", "d3", "d1")
	if len(got) > 0 && got[0].Text != "bond bond fund" {
		t.Errorf("SELECT * with RANK lost the document: %+v", got[0])
	}
	got = query[doc](t, c, "u", "SELECT TOP 2 c.id FROM c WHERE FullTextContains(c.text, @t) ORDER BY RANK RRF(VectorDistance(c.vec, @q), FullTextScore(c.text, @t))", params, 0)
	wantIDs(t, "RRF with filter and TOP", got, "d2", "d3")
	got = query[doc](t, c, "u", "SELECT c.id FROM c ORDER BY RANK VectorDistance(c.vec, @q)", params, 0)
	wantIDs(t, "RANK VectorDistance", got, "d1", "d2", "d4", "d3")
}

func TestOrderByExpression(t *testing.T) {
	c := newContainer(t, containerProps("interactions"))
	put(t, c,
		doc{ID: "a", UserID: "u", N: 3, Text: "ccc"},
		doc{ID: "b", UserID: "u", N: 1, Text: "a"},
		doc{ID: "c", UserID: "u", N: 2, Text: "bb"},
	)
	wantIDs(t, "ORDER BY LENGTH", query[doc](t, c, "u", "SELECT c.id FROM c ORDER BY LENGTH(c.text) DESC", nil, 0), "a", "c", "b")
	wantIDs(t, "ORDER BY arithmetic", query[doc](t, c, "u", "SELECT c.id FROM c ORDER BY c.n * -1", nil, 0), "a", "c", "b")
	wantIDs(t, "ORDER BY field", query[doc](t, c, "u", "SELECT c.id FROM c ORDER BY c.n", nil, 0), "b", "c", "a")
}

func TestOffsetLimit(t *testing.T) {
	c := newContainer(t, containerProps("interactions"))
	for i := 1; i <= 6; i++ {
		put(t, c, doc{ID: fmt.Sprintf("n%d", i), UserID: "u", N: i, Vec: []float32{1, float32(i), 0}})
	}
	wantIDs(t, "literal", query[doc](t, c, "u", "SELECT c.id FROM c ORDER BY c.n OFFSET 1 LIMIT 2", nil, 0), "n2", "n3")
	wantIDs(t, "parameters", query[doc](t, c, "u", "SELECT c.id FROM c ORDER BY c.n DESC OFFSET @o LIMIT @l", map[string]any{"@o": 4, "@l": 10}, 0), "n2", "n1")
	wantIDs(t, "past the end", query[doc](t, c, "u", "SELECT c.id FROM c OFFSET 10 LIMIT 2", nil, 0))
	wantIDs(t, "vector", query[doc](t, c, "u", "SELECT c.id FROM c ORDER BY VectorDistance(c.vec, [1, 0, 0]) OFFSET 1 LIMIT 2", nil, 0), "n2", "n3")
	wantIDs(t, "paged", query[doc](t, c, "u", "SELECT c.id FROM c ORDER BY c.n OFFSET 1 LIMIT 4", nil, 2), "n2", "n3", "n4", "n5")
}

func TestContinuationPaging(t *testing.T) {
	c := newContainer(t, containerProps("interactions"))
	var want []string
	for i := 1; i <= 7; i++ {
		put(t, c, doc{ID: fmt.Sprintf("p%d", i), UserID: "u", N: i, Vec: []float32{1, float32(i) / 2, 0}, Text: fmt.Sprintf("bond %d", i)})
		want = append(want, fmt.Sprintf("p%d", i))
	}
	put(t, c, doc{ID: "p1", UserID: "other", N: 0, Vec: []float32{1, 0, 0}})

	pager := c.NewQueryItemsPager("SELECT c.id FROM c ORDER BY c.n", azcosmos.NewPartitionKeyString("u"), &azcosmos.QueryOptions{PageSizeHint: 3})
	var got []string
	pages := 0
	for pager.More() {
		page, err := pager.NextPage(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, item := range page.Items {
			var d doc
			_ = json.Unmarshal(item, &d)
			got = append(got, d.ID)
		}
	}
	if pages != 3 || !slices.Equal(got, want) {
		t.Errorf("ORDER BY c.n in pages of 3: %d pages, ids %v, want 3 pages of %v", pages, got, want)
	}
	wantIDs(t, "VectorDistance paged", query[doc](t, c, "u", "SELECT c.id FROM c ORDER BY VectorDistance(c.vec, [1, 0, 0])", nil, 2), want...)
	all := query[doc](t, c, "u", "SELECT c.id FROM c ORDER BY RANK RRF(VectorDistance(c.vec, [1, 0, 0]), FullTextScore(c.text, 'bond'))", nil, 0)
	wantIDs(t, "RRF paged", query[doc](t, c, "u", "SELECT c.id FROM c ORDER BY RANK RRF(VectorDistance(c.vec, [1, 0, 0]), FullTextScore(c.text, 'bond'))", nil, 2), ids(all)...)
	if len(all) != 7 {
		t.Errorf("RRF returned %d rows, want 7", len(all))
	}
}

// TestSkipUnlessCI runs this test binary again with the server directory
// pointing at an empty directory: without CI (or with CI false) both
// subtests skip and only the first gives the reason with the install hint;
// with CI set they fail.
func TestSkipUnlessCI(t *testing.T) {
	if os.Getenv("COSMOSTEST_CHILD") == "1" {
		for _, name := range []string{"first", "second"} {
			t.Run(name, func(t *testing.T) {
				cosmostest.Endpoint(t)
				t.Log("server started")
			})
		}
		return
	}
	if os.Getenv("COSMOSTEST_WITHOUT_SERVER") != "" {
		t.Skip("runs children of its own")
	}
	empty := t.TempDir()
	for _, tc := range []struct {
		ci       string
		wantFail bool
		want     string
	}{
		{"", false, "--- SKIP: TestSkipUnlessCI/second"},
		{"false", false, "--- SKIP: TestSkipUnlessCI/second"},
		{"0", false, "--- SKIP: TestSkipUnlessCI/second"},
		{"true", true, "--- FAIL: TestSkipUnlessCI/second"},
		{"1", true, "--- FAIL: TestSkipUnlessCI/second"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSkipUnlessCI$", "-test.v")
		cmd.Env = append(os.Environ(), "COSMOSTEST_CHILD=1", "COSMOSTEST_SERVER_DIR="+empty, "CI="+tc.ci)
		out, err := cmd.CombinedOutput()
		if failed := err != nil; failed != tc.wantFail {
			t.Errorf("CI=%q: exit error %v, want failure %v\n%s", tc.ci, err, tc.wantFail, out)
		}
		if !strings.Contains(string(out), tc.want) || strings.Count(string(out), cosmostest.InstallHint) != 1 {
			t.Errorf("CI=%q: output lacks %q or the install hint, once:\n%s", tc.ci, tc.want, out)
		}
		if strings.Contains(string(out), "server started") {
			t.Errorf("CI=%q: a test went on without the server:\n%s", tc.ci, out)
		}
	}
}

// TestWithoutServer: every test of this package skips without the server,
// or fails in CI.
func TestWithoutServer(t *testing.T) {
	cosmostest.CheckWithoutServer(t, ".")
}

// TestVectorDistanceFollowsContainerPolicy: without an options argument the
// distance function is the container's vector policy for that path.
func TestVectorDistanceFollowsContainerPolicy(t *testing.T) {
	props := containerProps("euclid")
	props.VectorEmbeddingPolicy.VectorEmbeddings[0].DistanceFunction = azcosmos.VectorDistanceFunctionEuclidean
	c := newContainer(t, props)
	put(t, c,
		doc{ID: "far", UserID: "u", Vec: []float32{3, 4, 0}},
		doc{ID: "near", UserID: "u", Vec: []float32{0, 1, 0}},
		doc{ID: "same", UserID: "u", Vec: []float32{0, 0, 0}},
	)
	got := query[scored](t, c, "u", "SELECT c.id, VectorDistance(c.vec, @q) AS s FROM c ORDER BY VectorDistance(c.vec, @q)", map[string]any{"@q": []float32{0, 0, 0}}, 0)
	want := []scored{{"same", 0}, {"near", 1}, {"far", 5}}
	if !slices.Equal(got, want) {
		t.Errorf("euclidean policy: got %+v, want %+v", got, want)
	}
}
