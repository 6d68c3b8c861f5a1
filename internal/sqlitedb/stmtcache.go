package sqlitedb

import (
	"container/list"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"reflect"
	"sync/atomic"
)

// stmtCacheSize is how many prepared statements a connection keeps.
// framelake's requests run a few dozen distinct statements; ones built
// with a varying text (optional filters) come and go.
const stmtCacheSize = 128

// The driver prepares, and SQLite parses and plans, every statement a
// query or exec without a prepared statement runs, and then throws it
// away: under issue 35's team load SQLite's parser took 13% of the server's
// CPU, in the one writer's transactions too. Each connection here keeps its
// last stmtCacheSize statements by their text, reset and ready, as the
// driver does for a *sql.Stmt.

// cachingConnector opens the registered sqlite driver's connections with a
// statement cache each.
type cachingConnector struct {
	dsn      string
	drv      driver.Driver
	prepares *atomic.Int64 // statements prepared, counted for tests
}

// openCaching is sql.Open("sqlite", dsn) with a statement cache on every
// connection.
func openCaching(dsn string, prepares *atomic.Int64) (*sql.DB, error) {
	probe, err := sql.Open("sqlite", dsn) // the registered driver, with its hooks (sqlite-vec)
	if err != nil {
		return nil, err
	}
	drv := probe.Driver()
	probe.Close()
	return sql.OpenDB(cachingConnector{dsn: dsn, drv: drv, prepares: prepares}), nil
}

func (c cachingConnector) Driver() driver.Driver { return c.drv }

func (c cachingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.drv.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	inner, ok := dc.(sqliteConn)
	if !ok { // not the modernc driver: no cache
		return dc, nil
	}
	return &cachingConn{sqliteConn: inner, byText: map[string]*list.Element{}, order: list.New(), prepares: c.prepares}, nil
}

// sqliteConn is what database/sql uses of the modernc driver's connection.
type sqliteConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// sqliteStmt is what the cache uses of the driver's prepared statement.
type sqliteStmt interface {
	driver.Stmt
	driver.StmtExecContext
	driver.StmtQueryContext
}

type cachedStmt struct {
	text  string
	stmt  sqliteStmt
	inUse bool // rows of it are open: a second use prepares its own
}

// cachingConn is a driver connection whose queries and execs without a
// prepared statement reuse one, most recently used first. database/sql
// uses a connection from one goroutine at a time, so it needs no lock.
type cachingConn struct {
	sqliteConn
	byText   map[string]*list.Element
	order    *list.List // of *cachedStmt, most recently used at the front
	prepares *atomic.Int64
}

// get returns the cached statement of query, preparing it when missing;
// done is nil when the statement is one of its own (the cached one has
// rows open) and must be closed after use.
func (c *cachingConn) get(ctx context.Context, query string) (*cachedStmt, bool, error) {
	if e, ok := c.byText[query]; ok {
		cs := e.Value.(*cachedStmt)
		c.order.MoveToFront(e)
		if !cs.inUse {
			return cs, true, nil
		}
		s, err := c.prepare(ctx, query)
		return &cachedStmt{text: query, stmt: s}, false, err
	}
	s, err := c.prepare(ctx, query)
	if err != nil {
		return nil, false, err
	}
	cs := &cachedStmt{text: query, stmt: s}
	c.byText[query] = c.order.PushFront(cs)
	for c.order.Len() > stmtCacheSize {
		last := c.order.Back()
		old := last.Value.(*cachedStmt)
		c.order.Remove(last)
		delete(c.byText, old.text)
		if old.inUse { // its rows close it (cachedRows)
			old.text = ""
		} else {
			old.stmt.Close()
		}
	}
	return cs, true, nil
}

func (c *cachingConn) prepare(ctx context.Context, query string) (sqliteStmt, error) {
	s, err := c.sqliteConn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.prepares.Add(1)
	ss, ok := s.(sqliteStmt)
	if !ok {
		s.Close()
		return nil, errors.New("sqlitedb: the driver's statement runs no context")
	}
	return ss, nil
}

func (c *cachingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	cs, cached, err := c.get(ctx, query)
	if err != nil {
		return nil, err
	}
	if !cached {
		defer cs.stmt.Close()
	}
	return cs.stmt.ExecContext(ctx, args)
}

func (c *cachingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	cs, cached, err := c.get(ctx, query)
	if err != nil {
		return nil, err
	}
	rows, err := cs.stmt.QueryContext(ctx, args)
	if err != nil {
		if !cached {
			cs.stmt.Close()
		}
		return nil, err
	}
	if cached {
		cs.inUse = true
	}
	return &cachedRows{Rows: rows, cs: cs, cached: cached}, nil
}

// PrepareContext serves an explicit prepare (tx.PrepareContext, a *sql.Stmt)
// from the cache too: the writes that prepare their inserts in the
// transaction (an upload's file rows, a frame edit's boxes) parsed them
// again each time while holding the one writer. The statement is the
// prepare's alone until database/sql closes it, which gives it back.
func (c *cachingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	cs, cached, err := c.get(ctx, query)
	if err != nil {
		return nil, err
	}
	if cached {
		cs.inUse = true
	}
	return &preparedStmt{sqliteStmt: cs.stmt, cs: cs, cached: cached}, nil
}

// preparedStmt is an explicit prepare's statement: closing it gives it back
// to the cache, or closes it when it was the prepare's own or has left the
// cache meanwhile.
type preparedStmt struct {
	sqliteStmt
	cs     *cachedStmt
	cached bool
}

func (p *preparedStmt) Close() error {
	if !p.cached || p.cs.text == "" {
		return p.cs.stmt.Close()
	}
	p.cs.inUse = false
	return nil
}

// Close closes the cached statements, then the connection.
func (c *cachingConn) Close() error {
	for e := c.order.Front(); e != nil; e = e.Next() {
		e.Value.(*cachedStmt).stmt.Close()
	}
	c.order.Init()
	clear(c.byText)
	return c.sqliteConn.Close()
}

// cachedRows gives its statement back when closed: to the cache, or closes
// it when it was the use's own or has left the cache meanwhile.
type cachedRows struct {
	driver.Rows
	cs     *cachedStmt
	cached bool
}

func (r *cachedRows) Close() error {
	err := r.Rows.Close()
	switch {
	case !r.cached || r.cs.text == "":
		r.cs.stmt.Close()
	default:
		r.cs.inUse = false
	}
	return err
}

// The driver's rows describe their columns (sql.Rows.ColumnTypes).

func (r *cachedRows) ColumnTypeDatabaseTypeName(i int) string {
	if t, ok := r.Rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return t.ColumnTypeDatabaseTypeName(i)
	}
	return ""
}

func (r *cachedRows) ColumnTypeNullable(i int) (nullable, ok bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypeNullable); ok {
		return t.ColumnTypeNullable(i)
	}
	return false, false
}

func (r *cachedRows) ColumnTypeLength(i int) (int64, bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypeLength); ok {
		return t.ColumnTypeLength(i)
	}
	return 0, false
}

func (r *cachedRows) ColumnTypePrecisionScale(i int) (precision, scale int64, ok bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypePrecisionScale); ok {
		return t.ColumnTypePrecisionScale(i)
	}
	return 0, 0, false
}

func (r *cachedRows) ColumnTypeScanType(i int) reflect.Type {
	if t, ok := r.Rows.(driver.RowsColumnTypeScanType); ok {
		return t.ColumnTypeScanType(i)
	}
	return reflect.TypeFor[any]()
}
