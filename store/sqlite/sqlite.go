package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/driver"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// Defaults applied for zero Config fields.
const (
	DefaultBusyTimeout      = 5 * time.Second
	DefaultCacheSizeKiB     = 8 << 10
	DefaultVectorCacheBytes = 512 << 20

	// DefaultVectorPrefilterMin is the default of Config.VectorPrefilterMin.
	DefaultVectorPrefilterMin = 2_000
)

// Config configures a Store. The zero value is usable.
type Config struct {
	// Dimensions is the vector length the store holds; every vector written
	// or searched must have it. Zero accepts any length, and a search then
	// compares only vectors of the query's length.
	Dimensions int
	// BusyTimeout is how long a statement waits for a lock another
	// connection or process holds before failing; zero means
	// DefaultBusyTimeout (5 s).
	BusyTimeout time.Duration
	// CacheSizeKiB is SQLite's page cache per connection, in KiB; zero
	// means DefaultCacheSizeKiB (8 MiB).
	CacheSizeKiB int
	// VectorCacheBytes bounds the in-memory vector cache (about 5 bytes
	// per dimension per vector, codes included, plus ~250 bytes per document
	// and the text index); the least recently
	// searched user's sets are evicted first. Zero means
	// DefaultVectorCacheBytes (512 MiB, enough for 100,000 interactions with
	// two 384-d vectors); a negative value disables the cache, so every
	// search reads the user's vectors from the file and a text search also
	// tokenizes all the user's documents of the kind.
	VectorCacheBytes int64
	// VectorPrefilterMin is the number of documents of one kind from which
	// a user's cached vectors are searched through a pre-filter: each
	// vector also has an int8 code (404 bytes for 384 dimensions) that
	// bounds its similarity to a query, and a vector leg ranks exactly only
	// the documents whose bound does not rule them out. The results are
	// the exact scan's, bit for bit; only the work differs (see the package
	// documentation). Zero means DefaultVectorPrefilterMin (2,000); a
	// negative value turns the pre-filter off. Smaller sets, and sets not
	// cached, are always scanned exactly.
	VectorPrefilterMin int
	// MaxReaders caps the read connections; zero means max(4, GOMAXPROCS).
	MaxReaders int
	// Logger receives migrations (Info) and cache activity (Debug); nil
	// discards them.
	Logger *slog.Logger
}

// Store is a store.Store on one SQLite file. It is safe for concurrent use.
type Store struct {
	path string
	v    driver.Validator
	log  *slog.Logger
	w    *sql.DB // the one writer connection, BEGIN IMMEDIATE
	// busy is how long a write waits for another process's write lock
	// (Config.BusyTimeout; see begin).
	busy time.Duration
	r    *sql.DB // readers
	// rstmts keeps the statements of r prepared (readtx.go).
	rstmts *stmtCache
	// lr reads for the set loads (setLoads): searches waiting for a load
	// hold connections of r, so a load taking one of them could wait for
	// them forever.
	lr  *sql.DB
	wmu sync.Mutex // serialises write transactions and their cache updates
	wq  writeQueue // writes waiting for a group commit (groupcommit.go)
	// wstats counts the writes' figures (WriteStats).
	wstats writeCounters
	// wstmts keeps the writer's statements prepared (stmts.go).
	wstmts *writeStmts
	cache  *vecCache
	pf     prefilter
	toks   tokenCache
	// scratch holds the text leg's per-search score arrays (*scores).
	scratch sync.Pool
	loads   setLoads
	stop    context.CancelFunc // cancels loads.ctx and the checkpointer
	ckpt    *checkpointer

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

var _ store.Store = (*Store)(nil)

// Open opens (creating if needed) the store file at path and migrates its
// schema to the current version. The file's directory must exist: a
// missing one is an error naming it (errors.Is fs.ErrNotExist), never
// created.
func Open(ctx context.Context, path string, cfg Config) (*Store, error) {
	if path == "" {
		return nil, errors.New("sqlite: open: empty path")
	}
	if err := checkDir(path); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	log := cfg.Logger.With("store", "sqlite", "path", path)

	w, err := sql.Open("sqlite", dsn(path, cfg, true))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxIdleTime(0)
	w.SetConnMaxLifetime(0)
	if err := migrate(ctx, w, log); err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	wstmts, err := newWriteStmts(ctx, w)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	// From here on the writer waits for another process's write lock in
	// begin, not in SQLite's busy handler.
	if _, err := w.ExecContext(ctx, `PRAGMA busy_timeout = 0`); err != nil {
		wstmts.close()
		w.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	r, err := sql.Open("sqlite", dsn(path, cfg, false))
	if err != nil {
		wstmts.close()
		w.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	r.SetMaxOpenConns(cfg.MaxReaders)
	r.SetMaxIdleConns(cfg.MaxReaders)
	if err := r.PingContext(ctx); err != nil {
		wstmts.close()
		w.Close()
		r.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	lr, err := sql.Open("sqlite", dsn(path, cfg, false))
	if err != nil {
		wstmts.close()
		w.Close()
		r.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	lr.SetMaxOpenConns(2) // two users' sets load at once; more wait
	lr.SetMaxIdleConns(1)
	bg, stop := context.WithCancel(context.Background())
	s := &Store{
		path:   path,
		v:      driver.Validator{Dimensions: cfg.Dimensions},
		log:    log,
		w:      w,
		r:      r,
		rstmts: newStmtCache(r),
		lr:     lr,
		cache:  newVecCache(cfg.VectorCacheBytes),
		pf:     prefilter{min: cfg.VectorPrefilterMin},
		loads:  setLoads{m: make(map[cacheKey]*setLoad), ctx: bg},
		wq:     writeQueue{lead: make(chan struct{}, 1)},

		wstmts: wstmts,
		stop:   stop,
		busy:   cfg.BusyTimeout,
		ckpt:   newCheckpointer(),
	}
	go s.checkpoints(bg, s.ckpt)
	return s, nil
}

// withDefaults returns c with every zero field that has a default set to
// it (a negative BusyTimeout, CacheSizeKiB or MaxReaders counts as zero).
// The logger defaults to one that discards.
func (c Config) withDefaults() Config {
	if c.BusyTimeout <= 0 {
		c.BusyTimeout = DefaultBusyTimeout
	}
	if c.CacheSizeKiB <= 0 {
		c.CacheSizeKiB = DefaultCacheSizeKiB
	}
	c.VectorCacheBytes = cmp.Or(c.VectorCacheBytes, DefaultVectorCacheBytes)
	c.VectorPrefilterMin = cmp.Or(c.VectorPrefilterMin, DefaultVectorPrefilterMin)
	if c.MaxReaders <= 0 {
		c.MaxReaders = max(4, runtime.GOMAXPROCS(0))
	}
	c.Logger = cmp.Or(c.Logger, slog.New(slog.DiscardHandler))
	return c
}

// validate reports the first field of c that is out of range.
func (c Config) validate() error {
	if c.Dimensions < 0 {
		return fmt.Errorf("negative dimensions %d", c.Dimensions)
	}
	return nil
}

// dirError is a store path whose directory does not exist.
type dirError struct{ path, dir string }

func (e *dirError) Error() string {
	return fmt.Sprintf("sqlite: open %q: directory %q does not exist", e.path, e.dir)
}

func (e *dirError) Unwrap() error { return fs.ErrNotExist }

// checkDir reports a path whose directory is missing or is not a
// directory, which SQLite would report only as "unable to open database
// file".
func checkDir(path string) error {
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &dirError{path: path, dir: dir}
	case err != nil:
		return fmt.Errorf("sqlite: open %q: %w", path, err)
	case !fi.IsDir():
		return fmt.Errorf("sqlite: open %q: %q is not a directory", path, dir)
	}
	return nil
}

// dsn builds the modernc DSN: a file: URI (so that '?', '#' and '%' in the
// path are escaped rather than parsed) with the connection pragmas.
func dsn(path string, cfg Config, writer bool) string {
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	var b strings.Builder
	b.WriteString("file:")
	b.WriteString(esc)
	fmt.Fprintf(&b, "?_pragma=busy_timeout(%d)", cfg.BusyTimeout.Milliseconds())
	b.WriteString("&_pragma=journal_mode(WAL)")
	b.WriteString("&_pragma=synchronous(FULL)")
	b.WriteString("&_pragma=foreign_keys(1)")
	b.WriteString("&_pragma=temp_store(MEMORY)")
	// Deleted content is overwritten, not left in free pages.
	b.WriteString("&_pragma=secure_delete(1)")
	fmt.Fprintf(&b, "&_pragma=cache_size(-%d)", cfg.CacheSizeKiB)
	if writer {
		b.WriteString("&_txlock=immediate")
		// The store's checkpointer copies the WAL (checkpoint.go), not
		// the commit that takes it past 1,000 pages.
		b.WriteString("&_pragma=wal_autocheckpoint(0)")
	}
	return b.String()
}

// As sets *i when i is a **sql.DB: the pool of read connections on the
// store's file. Reading through it is safe at any time. Writes through it
// must use BEGIN IMMEDIATE and are not seen by the store's vector cache
// until the user's next write through the store; prefer the Store methods.
func (s *Store) As(i any) bool {
	if p, ok := i.(**sql.DB); ok && p != nil {
		*p = s.r
		return true
	}
	return false
}

// Close closes the store's connections. It is safe to call more than once;
// every other method then fails with store.ErrClosed.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		s.stop() // ends the set loads in flight and the checkpointer
		<-s.ckpt.done
		// Past this barrier no load starts (loadShared checks closed
		// under the same lock), so the wait sees every one.
		s.loads.mu.Lock()
		s.loads.mu.Unlock()
		s.loads.wg.Wait()
		s.wmu.Lock() // let a write in flight finish its cache update
		defer s.wmu.Unlock()
		s.closeErr = errors.Join(s.rstmts.close(), s.r.Close(), s.lr.Close(), s.wstmts.close(), s.w.Close())
		s.cache.clear()
		if s.closeErr != nil {
			s.closeErr = fmt.Errorf("sqlite: close %s: %w", s.path, s.closeErr)
		}
	})
	return s.closeErr
}

// check refuses calls on a closed store and bad user ids.
func (s *Store) check(userID string) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	return store.CheckUserID(userID)
}

// fail wraps a database error from op, mapping the errors of a store
// closed underneath the call to store.ErrClosed.
func (s *Store) fail(op string, err error) error {
	if err == nil {
		return nil
	}
	if s.closed.Load() && !errors.Is(err, store.ErrClosed) {
		return fmt.Errorf("sqlite: %s: %w (%v)", op, store.ErrClosed, err)
	}
	return fmt.Errorf("sqlite: %s: %w", op, err)
}

// change is what a committed write does to one user's cached vector set of
// one kind: an upserted row or a removed id.
type change struct {
	kind   store.Kind
	upsert *vecRow
	remove string
	// terms are upsert's tokens, for a cached text index (see readChangeTerms).
	terms *docTerms
	// noText says upsert has no indexed text: no tokens, and no terms
	// row is read or written (readChangeTerms).
	noText bool
}

func isStoreErr(err error) bool {
	return errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrConflict) ||
		errors.Is(err, store.ErrInvalid) || errors.Is(err, store.ErrClosed)
}

// newGen returns a fresh, non-zero generation number. Generations are
// random rather than counters so that a value is never reused after a
// user's rows (and generation rows) are deleted and written again.
func newGen() int64 {
	for {
		if g := rand.Int64(); g != 0 {
			return g
		}
	}
}

// queryer is what *sql.Tx and *sql.DB share.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// queryDocs runs query, which selects a document's id and then the cols
// columns decode makes it from, and returns the documents in row order;
// what names the kind in errors. The columns are only valid during
// decode.
func queryDocs[D any](ctx context.Context, q queryer, what string, cols int, decode func(cols []sql.RawBytes) (D, error), query string, args ...any) ([]D, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var id string
	raw := make([]sql.RawBytes, cols)
	dest := []any{&id}
	for i := range raw {
		dest = append(dest, &raw[i])
	}
	var out []D
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		doc, err := decode(raw)
		if err != nil {
			return nil, fmt.Errorf("decode %s %s: %w", what, id, err)
		}
		out = append(out, doc)
	}
	return out, rows.Err()
}

// readDocs runs query, a function of queryDocs' kind, on a reader
// connection; op names the call in errors. It is one statement, so one
// snapshot without a transaction of its own: BEGIN and COMMIT around it
// cost more than a point read itself.
func readDocs[D any](ctx context.Context, s *Store, op string, query func(context.Context, queryer, string, ...any) ([]D, error), q string, args ...any) ([]D, error) {
	out, err := query(ctx, pooled{s.r, s.rstmts}, q, args...)
	if err != nil {
		if isStoreErr(err) {
			return nil, err
		}
		return nil, s.fail(op, err)
	}
	return out, nil
}

// pooled runs each statement on a connection of db, in a transaction of
// its own, prepared when stmts keeps it.
type pooled struct {
	db    *sql.DB
	stmts *stmtCache
}

func (p pooled) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := p.stmts.get(query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return p.db.QueryContext(ctx, query, args...)
}

func (p pooled) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := p.stmts.get(query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return p.db.QueryRowContext(ctx, query, args...)
}

// readDoc is readDocs for a query of at most one document: the first,
// or store.ErrNotFound with missing (what was not there) when there is
// none.
func readDoc[D any](ctx context.Context, s *Store, op, missing string, query func(context.Context, queryer, string, ...any) ([]D, error), q string, args ...any) (D, error) {
	docs, err := readDocs(ctx, s, op, query, q, args...)
	if err == nil && len(docs) == 0 {
		err = fmt.Errorf("%w: %s", store.ErrNotFound, missing)
	}
	if err != nil {
		var zero D
		return zero, err
	}
	return docs[0], nil
}

// readGen returns the generation of a user's kind; 0 when it has none.
func readGen(ctx context.Context, q queryer, userID string, kind store.Kind) (int64, error) {
	var g int64
	err := q.QueryRowContext(ctx, readGenSQL, userID, string(kind)).Scan(&g)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return g, err
}

// read runs fn in a read transaction: one consistent snapshot. A read
// that succeeds commits, which writes nothing to the file but keeps the
// temporary tables the text leg creates on the connection (a rollback
// would drop them, and every search would create them again).
func (s *Store) read(ctx context.Context, op string, fn func(tx *readTx) error) error {
	return s.readOn(ctx, s.r, s.rstmts, op, fn)
}

// readOn is read on the connections of db.
func (s *Store) readOn(ctx context.Context, db *sql.DB, stmts *stmtCache, op string, fn func(tx *readTx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return s.fail(op, err)
	}
	defer tx.Rollback()
	if err := fn(&readTx{tx, stmts}); err != nil {
		if isStoreErr(err) {
			return err
		}
		return s.fail(op, err)
	}
	if err := tx.Commit(); err != nil {
		return s.fail(op, err)
	}
	return nil
}
