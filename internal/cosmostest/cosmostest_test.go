package cosmostest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
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
	if g := fmt.Sprint(got); g != fmt.Sprint([]scored{{"exact", 0}, {"near", 0.1}, {"mid", 1}, {"far", math.Sqrt2}}) {
		if len(got) != 4 || got[0].ID != "exact" || got[1].ID != "near" || got[2].ID != "mid" || got[3].ID != "far" || math.Abs(got[1].S-0.1) > 1e-6 {
			t.Errorf("euclidean: %+v", got)
		}
	}
	got = query[scored](t, c, "u", "SELECT c.id, VectorDistance(c.vec, [2, 0, 0], true, {'distanceFunction': 'DotProduct'}) AS s FROM c ORDER BY VectorDistance(c.vec, [2, 0, 0], true, {'distanceFunction': 'DotProduct'})", nil, 0)
	if len(got) != 4 || got[0].S != 2 || got[3].ID != "far" || got[3].S != 0 {
		t.Errorf("dot product: %+v", got)
	}
}
