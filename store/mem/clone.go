package mem

import (
	"maps"
	"slices"

	"github.com/agentmemory/agentmemory/store"
)

// The clone functions deep-copy documents, keeping nil slices and maps nil
// and empty ones empty, and store times in UTC.

func cloneInteraction(d *store.Interaction) *store.Interaction {
	c := *d
	c.Timestamp = d.Timestamp.UTC()
	c.TurnIDs = slices.Clone(d.TurnIDs)
	c.ContentVector = slices.Clone(d.ContentVector)
	c.SummaryVector = slices.Clone(d.SummaryVector)
	c.Metadata.MentionedTopics = slices.Clone(d.Metadata.MentionedTopics)
	c.Metadata.Entities = slices.Clone(d.Metadata.Entities)
	return &c
}

func cloneInsight(d *store.Insight) *store.Insight {
	c := *d
	c.SessionIDs = slices.Clone(d.SessionIDs)
	c.InsightVector = slices.Clone(d.InsightVector)
	if d.Confidence != nil {
		v := *d.Confidence
		c.Confidence = &v
	}
	c.SourceInteractionIDs = slices.Clone(d.SourceInteractionIDs)
	c.SourceInsightIDs = slices.Clone(d.SourceInsightIDs)
	c.CreatedAt = d.CreatedAt.UTC()
	c.UpdatedAt = d.UpdatedAt.UTC()
	c.SupersededAt = d.SupersededAt.UTC()
	return &c
}

func cloneSession(d *store.Session) *store.Session {
	c := *d
	c.StartTime = d.StartTime.UTC()
	c.EndTime = d.EndTime.UTC()
	c.UpdatedAt = d.UpdatedAt.UTC()
	c.SummaryVector = slices.Clone(d.SummaryVector)
	c.KeyTopics = slices.Clone(d.KeyTopics)
	c.ExtractedInsights = slices.Clone(d.ExtractedInsights)
	if d.State.Turns != nil {
		c.State.Turns = make([]store.Turn, len(d.State.Turns))
		for i, t := range d.State.Turns {
			c.State.Turns[i] = cloneTurn(t)
		}
	}
	return &c
}

func cloneTurn(t store.Turn) store.Turn {
	t.Time = t.Time.UTC()
	t.Messages = slices.Clone(t.Messages) // TurnMessage holds only strings and ints
	t.Metadata = maps.Clone(t.Metadata)
	return t
}
