package cosmos

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/agentmemory/agentmemory/store"
)

// kindSchema is what provisioning needs to know of one document kind.
type kindSchema struct {
	vectors  []string // vector paths
	fullText []string // full-text paths
	// order are the composite indexes the kind's ordered listings need,
	// declared ascending and descending.
	order [][]string
}

func schemaOf(kind store.Kind) kindSchema {
	switch kind {
	case store.KindInteraction:
		return kindSchema{
			vectors:  []string{"/content_vector", "/summary_vector"},
			fullText: []string{"/content", "/summary", "/metadata/mentioned_topics", "/metadata/entities"},
			order:    [][]string{{"/timestamp", "/first_turn", "/id"}},
		}
	case store.KindInsight:
		return kindSchema{
			vectors:  []string{"/insight_vector"},
			fullText: []string{"/insight_text"},
			order:    [][]string{{"/created_at", "/id"}},
		}
	case store.KindSessionSummary:
		return kindSchema{
			vectors:  []string{"/summary_vector"},
			fullText: []string{"/summary", "/key_topics"},
			order:    [][]string{{"/start_time", "/id"}},
		}
	}
	return kindSchema{}
}

// ContainerProperties returns the definition CreateIfNotExists sends for
// the container of kind: partition key /user_id; a vector embedding policy
// (float32, cosine, dimensions) and a vector index of type idx for each
// vector path; a full-text policy (en-US) and full-text index for each
// text path; and an indexing policy that range-indexes every path (/*)
// except the vector paths and _etag, with the composite indexes the
// ordered listings need.
func ContainerProperties(kind store.Kind, name string, dimensions int, idx VectorIndexType) azcosmos.ContainerProperties {
	sc := schemaOf(kind)
	vep := &azcosmos.VectorEmbeddingPolicy{}
	ip := &azcosmos.IndexingPolicy{
		Automatic:     true,
		IndexingMode:  azcosmos.IndexingModeConsistent,
		IncludedPaths: []azcosmos.IncludedPath{{Path: "/*"}},
		ExcludedPaths: []azcosmos.ExcludedPath{{Path: `/"_etag"/?`}},
	}
	for _, p := range sc.vectors {
		vep.VectorEmbeddings = append(vep.VectorEmbeddings, azcosmos.VectorEmbedding{
			Path:             p,
			DataType:         azcosmos.VectorDataTypeFloat32,
			DistanceFunction: azcosmos.VectorDistanceFunctionCosine,
			Dimensions:       int32(dimensions),
		})
		ip.ExcludedPaths = append(ip.ExcludedPaths, azcosmos.ExcludedPath{Path: p + "/*"})
		ip.VectorIndexes = append(ip.VectorIndexes, azcosmos.VectorIndex{Path: p, Type: azcosmos.VectorIndexType(idx)})
	}
	ftp := &azcosmos.FullTextPolicy{DefaultLanguage: defaultFullTextLanguage}
	for _, p := range sc.fullText {
		ftp.FullTextPaths = append(ftp.FullTextPaths, azcosmos.FullTextPath{Path: p, Language: defaultFullTextLanguage})
		ip.FullTextIndexes = append(ip.FullTextIndexes, azcosmos.FullTextIndex{Path: p})
	}
	for _, paths := range sc.order {
		// The service serves the fully reversed order from one index; the
		// test server's engine does not, so both directions are declared.
		for _, o := range []azcosmos.CompositeIndexOrder{azcosmos.CompositeIndexAscending, azcosmos.CompositeIndexDescending} {
			var ci []azcosmos.CompositeIndex
			for _, p := range paths {
				ci = append(ci, azcosmos.CompositeIndex{Path: p, Order: o})
			}
			ip.CompositeIndexes = append(ip.CompositeIndexes, ci)
		}
	}
	return azcosmos.ContainerProperties{
		ID: name,
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{
			Paths: []string{partitionKeyPath},
			Kind:  azcosmos.PartitionKeyKindHash,
			// Version 2 hashes the full key (user ids up to 255 bytes).
			Version: 2,
		},
		IndexingPolicy:        ip,
		VectorEmbeddingPolicy: vep,
		FullTextPolicy:        ftp,
	}
}

// provision creates the database and the three containers when missing.
func (s *Store) provision(ctx context.Context) error {
	_, err := s.client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: s.cfg.Database}, nil)
	switch {
	case err == nil:
		s.log.InfoContext(ctx, "cosmos: created database", "database", s.cfg.Database)
	case statusOf(err) == http.StatusConflict:
	default:
		return fmt.Errorf("cosmos: create database %q: %w", s.cfg.Database, err)
	}
	for _, kind := range store.Kinds {
		props := ContainerProperties(kind, s.names[kind], s.cfg.Dimensions, s.cfg.VectorIndex)
		if s.fullTextRefused {
			// An earlier container's full-text policy was refused.
			props = withoutFullText(props)
		}
		var opts *azcosmos.CreateContainerOptions
		if s.cfg.AutoscaleMaxRU > 0 {
			tp := azcosmos.NewAutoscaleThroughputProperties(s.cfg.AutoscaleMaxRU)
			opts = &azcosmos.CreateContainerOptions{ThroughputProperties: &tp}
		}
		resp, err := s.db.CreateContainer(ctx, props, opts)
		if refusalOf(err) == refusedFullTextCapability {
			s.refuseFullText(ctx, props.ID, err)
			props = withoutFullText(props)
			resp, err = s.db.CreateContainer(ctx, props, opts)
		}
		switch {
		case err == nil:
			s.stats.add(opProvision, float64(resp.RequestCharge))
			s.log.InfoContext(ctx, "cosmos: created container", "container", props.ID,
				"vector_index", s.cfg.VectorIndex, "dimensions", s.cfg.Dimensions, "autoscale_max_ru", s.cfg.AutoscaleMaxRU,
				"full_text_policy", props.FullTextPolicy != nil)
		case statusOf(err) == http.StatusConflict:
		default:
			return s.prerequisiteError(props.ID, refusalOf(err), err)
		}
	}
	return nil
}

// refuseFullText records that the account refused a full-text policy:
// the containers are created without it, and the store says so once, at
// Warn, naming the capability. No query of the store needs the policy
// (full-text candidates come from search_terms).
func (s *Store) refuseFullText(ctx context.Context, container string, err error) {
	s.fullTextRefused = true
	s.log.WarnContext(ctx, "cosmos: full-text policy refused by the account; containers created without it (the store does not need it: full text is matched through search_terms; to have the service's full-text index anyway, enable `"+enableCommand("EnableNoSQLFullTextSearch")+"` and recreate the containers)",
		"container", container, "error", serviceMessage(err))
}

// statusOf returns the HTTP status of a service error, or 0.
func statusOf(err error) int {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode
	}
	return 0
}
