package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
)

// ErrSchemaTooNew reports a file whose schema version is newer than this
// build knows: it was written by a newer agentmemory and is left untouched.
var ErrSchemaTooNew = errors.New("sqlite: database schema is newer than this build supports")

// ErrForeignDatabase reports a SQLite file that belongs to another
// application (its PRAGMA application_id is neither 0 nor ours).
var ErrForeignDatabase = errors.New("sqlite: not an agentmemory database")

// applicationID marks our files in the SQLite header ("AgMm").
const applicationID = 0x41674d6d

// migrations are the schema changes in order: migrations[i] takes the
// schema from version i to i+1. Never edit a released migration; append.
var migrations = [...]string{
	// 1: the three kinds, their indexes, full text and generations.
	`
CREATE TABLE interactions (
	rid              INTEGER PRIMARY KEY,
	user_id          TEXT    NOT NULL,
	id               TEXT    NOT NULL,
	session_id       TEXT    NOT NULL,
	ts               TEXT    NOT NULL,
	first_turn       INTEGER NOT NULL,
	metadata_pending INTEGER NOT NULL,
	content_vector   BLOB,
	summary_vector   BLOB,
	doc              TEXT    NOT NULL,
	UNIQUE (user_id, id)
) STRICT;
CREATE INDEX interactions_by_time ON interactions (user_id, ts, first_turn, id);
CREATE INDEX interactions_by_session ON interactions (user_id, session_id, ts, first_turn, id);
CREATE INDEX interactions_pending ON interactions (user_id, ts, first_turn, id) WHERE metadata_pending = 1;

CREATE VIRTUAL TABLE interactions_fts USING fts5 (
	content, summary, topics, entities,
	content = '', contentless_delete = 1, tokenize = 'porter unicode61'
);
CREATE TRIGGER interactions_fts_insert AFTER INSERT ON interactions BEGIN
	INSERT INTO interactions_fts (rowid, content, summary, topics, entities) VALUES (
		new.rid, new.doc ->> '$.content', new.doc ->> '$.summary',
		(SELECT group_concat(value, ' ') FROM json_each(new.doc, '$.metadata.mentioned_topics')),
		(SELECT group_concat(value, ' ') FROM json_each(new.doc, '$.metadata.entities')));
END;
CREATE TRIGGER interactions_fts_update AFTER UPDATE OF doc ON interactions BEGIN
	DELETE FROM interactions_fts WHERE rowid = old.rid;
	INSERT INTO interactions_fts (rowid, content, summary, topics, entities) VALUES (
		new.rid, new.doc ->> '$.content', new.doc ->> '$.summary',
		(SELECT group_concat(value, ' ') FROM json_each(new.doc, '$.metadata.mentioned_topics')),
		(SELECT group_concat(value, ' ') FROM json_each(new.doc, '$.metadata.entities')));
END;
CREATE TRIGGER interactions_fts_delete AFTER DELETE ON interactions BEGIN
	DELETE FROM interactions_fts WHERE rowid = old.rid;
END;

CREATE TABLE insights (
	rid            INTEGER PRIMARY KEY,
	user_id        TEXT    NOT NULL,
	id             TEXT    NOT NULL,
	insight_type   TEXT    NOT NULL,
	category       TEXT    NOT NULL,
	processed      INTEGER NOT NULL,
	content_hash   TEXT    NOT NULL,
	superseded     INTEGER NOT NULL,
	created_at     TEXT    NOT NULL,
	insight_vector BLOB,
	doc            TEXT    NOT NULL,
	UNIQUE (user_id, id)
) STRICT;
CREATE INDEX insights_by_time ON insights (user_id, superseded, created_at, id);
CREATE INDEX insights_by_category ON insights (user_id, category, created_at);
CREATE INDEX insights_by_type ON insights (user_id, insight_type, created_at);
CREATE INDEX insights_by_hash ON insights (user_id, content_hash, created_at) WHERE superseded = 0;

-- The session ids of each insight, for the SessionID filter.
CREATE TABLE insight_sessions (
	user_id     TEXT    NOT NULL,
	session_id  TEXT    NOT NULL,
	insight_rid INTEGER NOT NULL REFERENCES insights (rid) ON DELETE CASCADE,
	PRIMARY KEY (user_id, session_id, insight_rid)
) WITHOUT ROWID, STRICT;
CREATE INDEX insight_sessions_by_insight ON insight_sessions (insight_rid);
CREATE TRIGGER insight_sessions_insert AFTER INSERT ON insights BEGIN
	INSERT OR IGNORE INTO insight_sessions (user_id, session_id, insight_rid)
		SELECT new.user_id, value, new.rid FROM json_each(new.doc, '$.session_ids') WHERE type = 'text';
END;
CREATE TRIGGER insight_sessions_update AFTER UPDATE OF doc ON insights BEGIN
	DELETE FROM insight_sessions WHERE insight_rid = old.rid;
	INSERT OR IGNORE INTO insight_sessions (user_id, session_id, insight_rid)
		SELECT new.user_id, value, new.rid FROM json_each(new.doc, '$.session_ids') WHERE type = 'text';
END;

CREATE VIRTUAL TABLE insights_fts USING fts5 (
	insight_text,
	content = '', contentless_delete = 1, tokenize = 'porter unicode61'
);
CREATE TRIGGER insights_fts_insert AFTER INSERT ON insights BEGIN
	INSERT INTO insights_fts (rowid, insight_text) VALUES (new.rid, new.doc ->> '$.insight_text');
END;
CREATE TRIGGER insights_fts_update AFTER UPDATE OF doc ON insights
WHEN old.doc ->> '$.insight_text' IS NOT new.doc ->> '$.insight_text' BEGIN
	DELETE FROM insights_fts WHERE rowid = old.rid;
	INSERT INTO insights_fts (rowid, insight_text) VALUES (new.rid, new.doc ->> '$.insight_text');
END;
CREATE TRIGGER insights_fts_delete AFTER DELETE ON insights BEGIN
	DELETE FROM insights_fts WHERE rowid = old.rid;
END;

CREATE TABLE session_summaries (
	rid               INTEGER PRIMARY KEY,
	user_id           TEXT NOT NULL,
	id                TEXT NOT NULL,
	start_time        TEXT NOT NULL,
	status            TEXT NOT NULL,
	reflection_status TEXT NOT NULL,
	etag              TEXT NOT NULL,
	summary_vector    BLOB,
	doc               TEXT NOT NULL,
	UNIQUE (user_id, id)
) STRICT;
CREATE INDEX sessions_by_time ON session_summaries (user_id, start_time, id);
CREATE INDEX sessions_by_status ON session_summaries (user_id, status, start_time, id);
CREATE INDEX sessions_by_reflection ON session_summaries (user_id, reflection_status, start_time, id);

CREATE VIRTUAL TABLE sessions_fts USING fts5 (
	summary, key_topics,
	content = '', contentless_delete = 1, tokenize = 'porter unicode61'
);
CREATE TRIGGER sessions_fts_insert AFTER INSERT ON session_summaries BEGIN
	INSERT INTO sessions_fts (rowid, summary, key_topics) VALUES (
		new.rid, new.doc ->> '$.summary',
		(SELECT group_concat(value, ' ') FROM json_each(new.doc, '$.key_topics')));
END;
-- Session state is rewritten every turn: reindex only when the text changed.
CREATE TRIGGER sessions_fts_update AFTER UPDATE OF doc ON session_summaries
WHEN old.doc ->> '$.summary' IS NOT new.doc ->> '$.summary'
  OR old.doc -> '$.key_topics' IS NOT new.doc -> '$.key_topics' BEGIN
	DELETE FROM sessions_fts WHERE rowid = old.rid;
	INSERT INTO sessions_fts (rowid, summary, key_topics) VALUES (
		new.rid, new.doc ->> '$.summary',
		(SELECT group_concat(value, ' ') FROM json_each(new.doc, '$.key_topics')));
END;
CREATE TRIGGER sessions_fts_delete AFTER DELETE ON session_summaries BEGIN
	DELETE FROM sessions_fts WHERE rowid = old.rid;
END;

-- A random number per user and kind, changed by every write of that kind:
-- tells an in-memory vector cache whether it is current.
CREATE TABLE generations (
	user_id TEXT    NOT NULL,
	kind    TEXT    NOT NULL,
	gen     INTEGER NOT NULL,
	PRIMARY KEY (user_id, kind)
) WITHOUT ROWID, STRICT;
`,
	// 2: turns stored on their own, one row each, numbered per session;
	// the user state.
	`
CREATE TABLE turns (
	rid        INTEGER PRIMARY KEY,
	user_id    TEXT    NOT NULL,
	session_id TEXT    NOT NULL,
	seq        INTEGER NOT NULL,
	turn_id    TEXT    NOT NULL,
	doc        TEXT    NOT NULL,
	UNIQUE (user_id, session_id, seq),
	UNIQUE (user_id, session_id, turn_id)
) STRICT;

-- Each user's coordination document: the lease on background work and
-- the reflection counters.
CREATE TABLE user_state (
	user_id TEXT NOT NULL PRIMARY KEY,
	etag    TEXT NOT NULL,
	doc     TEXT NOT NULL
) WITHOUT ROWID, STRICT;
`,
	// 3: the deletion log, one row per record, numbered from 1 without
	// gaps; no user's rows. user_id and the items' ids are the clear
	// names, blanked by EraseDeletionNames; nothing indexes them.
	`
CREATE TABLE deletion_log (
	seq     INTEGER PRIMARY KEY,
	at      TEXT    NOT NULL,
	reason  TEXT    NOT NULL,
	subject TEXT    NOT NULL,
	hash    TEXT    NOT NULL,
	prev    TEXT    NOT NULL,
	key     TEXT    NOT NULL,
	user_id TEXT    NOT NULL,
	items   TEXT    NOT NULL
) STRICT;
CREATE INDEX deletion_log_by_subject ON deletion_log (subject);
`,
	// 4: each searchable document's full-text tokens and their counts
	// (terms.go), so that loading a user's text index reads them instead
	// of tokenizing every document again. A row goes with its document
	// and whenever the document's indexed text may change (the FTS5
	// triggers' conditions); the store writes it anew. Files migrated from
	// version 3 have none until their documents are loaded or rewritten.
	`
CREATE TABLE interaction_terms (rid INTEGER PRIMARY KEY, terms BLOB NOT NULL) STRICT;
CREATE TRIGGER interaction_terms_update AFTER UPDATE OF doc ON interactions BEGIN
	DELETE FROM interaction_terms WHERE rid = old.rid;
END;
CREATE TRIGGER interaction_terms_delete AFTER DELETE ON interactions BEGIN
	DELETE FROM interaction_terms WHERE rid = old.rid;
END;

CREATE TABLE insight_terms (rid INTEGER PRIMARY KEY, terms BLOB NOT NULL) STRICT;
CREATE TRIGGER insight_terms_update AFTER UPDATE OF doc ON insights
WHEN old.doc ->> '$.insight_text' IS NOT new.doc ->> '$.insight_text' BEGIN
	DELETE FROM insight_terms WHERE rid = old.rid;
END;
CREATE TRIGGER insight_terms_delete AFTER DELETE ON insights BEGIN
	DELETE FROM insight_terms WHERE rid = old.rid;
END;

CREATE TABLE session_terms (rid INTEGER PRIMARY KEY, terms BLOB NOT NULL) STRICT;
CREATE TRIGGER session_terms_update AFTER UPDATE OF doc ON session_summaries
WHEN old.doc ->> '$.summary' IS NOT new.doc ->> '$.summary'
  OR old.doc -> '$.key_topics' IS NOT new.doc -> '$.key_topics' BEGIN
	DELETE FROM session_terms WHERE rid = old.rid;
END;
CREATE TRIGGER session_terms_delete AFTER DELETE ON session_summaries BEGIN
	DELETE FROM session_terms WHERE rid = old.rid;
END;
`,
	// 5: the records (store.Records), a component's small coordination
	// documents: kept and listed, never searched, so no full text, no
	// terms and no generations; one index lists a partition by time.
	`
CREATE TABLE records (
	user_id TEXT    NOT NULL,
	id      TEXT    NOT NULL,
	time    TEXT    NOT NULL,
	active  INTEGER NOT NULL,
	etag    TEXT    NOT NULL,
	body    TEXT    NOT NULL,
	PRIMARY KEY (user_id, id)
) WITHOUT ROWID, STRICT;
CREATE INDEX records_by_time ON records (user_id, time, id);
`,
}

// SchemaVersion is the schema version this build writes.
const SchemaVersion = len(migrations)

// migrate brings the schema of db (the writer pool) to SchemaVersion in one
// immediate transaction, so that two processes opening a new file at once
// do not both create it.
func migrate(ctx context.Context, db *sql.DB, log *slog.Logger) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin migration: %w", err)
	}
	defer tx.Rollback()
	var version, appID int
	if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if err := tx.QueryRowContext(ctx, `PRAGMA application_id`).Scan(&appID); err != nil {
		return fmt.Errorf("read application id: %w", err)
	}
	if appID != 0 && appID != applicationID {
		return fmt.Errorf("%w: application_id is %#x", ErrForeignDatabase, appID)
	}
	if version > SchemaVersion {
		return fmt.Errorf("%w: the file is at version %d, this build knows up to %d", ErrSchemaTooNew, version, SchemaVersion)
	}
	if version == SchemaVersion {
		return nil
	}
	if version == 0 && appID == 0 {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema`).Scan(&n); err != nil {
			return fmt.Errorf("inspect schema: %w", err)
		}
		if n > 0 {
			return fmt.Errorf("%w: the file has %d schema objects and no agentmemory version", ErrForeignDatabase, n)
		}
	}
	for v := version; v < SchemaVersion; v++ {
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			return fmt.Errorf("migrate schema to version %d: %w", v+1, err)
		}
	}
	// PRAGMA takes no parameters; both values are our constants.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, SchemaVersion)); err != nil {
		return fmt.Errorf("write schema version: %w", err)
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA application_id = %d`, applicationID)); err != nil {
		return fmt.Errorf("write application id: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit migration: %w", err)
	}
	log.Info("sqlite schema migrated", "from", version, "to", SchemaVersion)
	return nil
}
