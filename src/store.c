/* store.c -- SQLite storage of sweep runs. Opening a database reads its header and schema before
 * it writes anything (store.h): dse never alters another program's database. */
#include "store.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <time.h>

#include <sqlite3.h>

#include "sbuf.h"

#define MAX_COLS 96

/* Points go to SQLite INSERT_ROWS at a time, one multi-row INSERT: 1.65x the rows per second of one
 * row per statement (measured on this project's 2-core VM, 15 columns: 310,000 against 530,000). */
#define INSERT_ROWS 32

/* A point waiting for its multi-row INSERT: the strings are the caller's (the spec's axis values, the
 * sink's rows), alive until the transaction's commit, which flushes. */
struct held_row {
    long long run_id, point;
    int feasible;
    const char *reason;
    const char *axis[MAX_COLS];
    double axis_num[MAX_COLS];
    double metric[MAX_COLS];
};

struct store {
    sqlite3 *db;
    char path[512];
    sqlite3_stmt *ins, *ins_many; /* one row; INSERT_ROWS rows */
    struct held_row *held;        /* INSERT_ROWS of them */
    int n_held;
    int n_axes, n_metrics, n_cols;  /* n_cols: the metric columns this run stores */
    int axis_numeric[MAX_COLS];
    int col_metric[MAX_COLS];       /* metric index of each stored metric column */
    int legacy; /* a dse database from before application_id: marked at the first write */
};

/* The tables and the columns every dse database has had (points also has one column per axis and
 * per metric, which come and go with the spec and the metric registry). */
static const char *const runs_cols[] = {"id", "name", "spec", "spec_hash", "dse_version", "git", "openmp", "host",
                                        "threads", "started", "finished", "status", "inputs", "objectives", "axes",
                                        "points_total", "hypervolume", NULL};
static const char *const metrics_cols[] = {"name", "unit", "direction", "description", NULL};
static const char *const points_cols[] = {"run_id", "point", "feasible", "reason", "pareto", "rank", NULL};
static const struct {
    const char *table;
    const char *const *cols;
} dse_tables[] = {{"runs", runs_cols}, {"metrics", metrics_cols}, {"points", points_cols}};

#define STR(x) #x
#define XSTR(x) STR(x)
static const char schema_sql[] =
    "CREATE TABLE IF NOT EXISTS runs (id INTEGER PRIMARY KEY, name TEXT NOT NULL, spec TEXT NOT NULL,"
    " spec_hash TEXT NOT NULL, dse_version TEXT NOT NULL, git TEXT NOT NULL, openmp INTEGER NOT NULL,"
    " host TEXT NOT NULL, threads INTEGER NOT NULL, started TEXT NOT NULL, finished TEXT,"
    " status TEXT NOT NULL, inputs TEXT NOT NULL, objectives TEXT NOT NULL, axes TEXT NOT NULL,"
    " points_total INTEGER NOT NULL, hypervolume REAL);"
    "CREATE TABLE IF NOT EXISTS metrics (name TEXT PRIMARY KEY, unit TEXT NOT NULL,"
    " direction TEXT NOT NULL, description TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS points (run_id INTEGER NOT NULL REFERENCES runs(id),"
    " point INTEGER NOT NULL, feasible INTEGER NOT NULL, reason TEXT,"
    " pareto INTEGER NOT NULL DEFAULT 0, rank INTEGER, PRIMARY KEY (run_id, point));"
    /* each sweep name's newest run: queries that should not mix re-runs of a spec */
    "CREATE VIEW IF NOT EXISTS latest AS SELECT points.* FROM points JOIN runs ON runs.id = points.run_id"
    " WHERE runs.id = (SELECT max(r2.id) FROM runs r2 WHERE r2.name = runs.name);";
static const char mark_sql[] =
    "PRAGMA application_id = " XSTR(STORE_APPLICATION_ID) "; PRAGMA user_version = " XSTR(STORE_SCHEMA_VERSION) ";";

static int db_err(struct store *s, struct dse_err *e, const char *what)
{
    return dse_err_set(e, DSE_ERUNTIME, s->path, NULL, "%s: %s", what, sqlite3_errmsg(s->db));
}

/* Prepares the statement built in q (and frees q) with ?1 bound to run_id. */
static int prepare_run(struct store *s, struct sb *q, long long run_id, sqlite3_stmt **st, const char *what,
                       struct dse_err *e)
{
    int prep = q->oom ? SQLITE_NOMEM : sqlite3_prepare_v2(s->db, sb_str(q), -1, st, NULL);
    free(q->s);
    if (q->oom)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    if (prep != SQLITE_OK)
        return db_err(s, e, what);
    sqlite3_bind_int64(*st, 1, run_id);
    return DSE_OK;
}

static int exec(struct store *s, const char *sql, struct dse_err *e)
{
    char *msg = NULL;
    if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        int rc = dse_err_set(e, DSE_ERUNTIME, s->path, NULL, "%s", msg ? msg : "SQLite error");
        sqlite3_free(msg);
        return rc;
    }
    return DSE_OK;
}

/* "name" with embedded quotes doubled. */
static void quote(char *out, size_t n, const char *name)
{
    size_t k = 0;
    if (n < 3)
        return;
    out[k++] = '"';
    for (const char *p = name; *p && k + 3 < n; p++) {
        if (*p == '"')
            out[k++] = '"';
        out[k++] = *p;
    }
    out[k++] = '"';
    out[k] = '\0';
}

/* Appends before "name" after for each of cols: SQL that names columns. */
static void add_cols(struct sb *q, const char *const *cols, int n, const char *before, const char *after)
{
    char name[300];
    for (int i = 0; i < n; i++) {
        quote(name, sizeof name, cols[i]);
        sb_add(q, "%s%s%s", before, name, after);
    }
}

/* Column i of the row st stepped to, as text ("" for NULL) or as a number (NAN for NULL, text, a blob
 * or a non-finite value: a text axis is never plotted as 0). */
static const char *col_txt(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? (const char *)t : "";
}

static double col_num(sqlite3_stmt *st, int i)
{
    int t = sqlite3_column_type(st, i);
    double v = t == SQLITE_INTEGER || t == SQLITE_FLOAT ? sqlite3_column_double(st, i) : NAN;
    return isfinite(v) ? v : NAN;
}

static void now_iso(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Tables of the database's own (SQLite keeps its own as sqlite_*). */
#define USER_TABLE " AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"

/* One integer from a query (a PRAGMA or a count). Returns the SQLite result code. */
static int query_int(struct store *s, const char *sql, long long *out)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return rc;
    rc = sqlite3_step(st);
    *out = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
    sqlite3_finalize(st);
    return rc;
}

/* 1 when table has every column of cols. */
static int has_columns(struct store *s, const char *table, const char *const *cols)
{
    for (int i = 0; cols[i]; i++) {
        long long n;
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(s->db, "SELECT count(*) FROM pragma_table_info(?1) WHERE name = ?2", -1, &st, NULL) !=
            SQLITE_OK)
            return 0;
        sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, cols[i], -1, SQLITE_STATIC);
        n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
        sqlite3_finalize(st);
        if (n != 1)
            return 0;
    }
    return 1;
}

/* Reads (only) the header and schema: 0 a new database (no tables, no application_id or version),
 * 1 a dse database, 2 a dse database from before application_id; else an input error, whose message
 * ends in refusing (what dse will not do with the file). */
static int identify(struct store *s, int *kind, const char *refusing, struct dse_err *e)
{
    long long app, ver, tables;
    int rc = query_int(s, "PRAGMA application_id", &app);
    if (rc == SQLITE_OK)
        rc = query_int(s, "PRAGMA user_version", &ver);
    if (rc == SQLITE_OK)
        rc = query_int(s, "SELECT count(*) FROM sqlite_master WHERE type = 'table'" USER_TABLE, &tables);
    if (rc == SQLITE_NOTADB)
        return dse_err_set(e, DSE_EINPUT, s->path, NULL, "not an SQLite database%s", refusing);
    if (rc == SQLITE_CORRUPT)
        return dse_err_set(e, DSE_EINPUT, s->path, NULL, "a damaged SQLite database%s", refusing);
    if (rc != SQLITE_OK)
        return db_err(s, e, "cannot read the database");
    if (app == STORE_APPLICATION_ID) {
        if (ver > STORE_SCHEMA_VERSION)
            return dse_err_set(e, DSE_EINPUT, s->path, NULL, "written by a newer dse (schema version %lld; this one "
                               "knows %d)%s", ver, STORE_SCHEMA_VERSION, refusing);
        *kind = 1;
        return DSE_OK;
    }
    if (app == 0 && ver == 0 && tables == 0) {
        *kind = 0;
        return DSE_OK;
    }
    int dse = app == 0 && ver == 0;
    for (size_t t = 0; dse && t < sizeof dse_tables / sizeof dse_tables[0]; t++)
        dse = has_columns(s, dse_tables[t].table, dse_tables[t].cols);
    if (dse) {
        *kind = 2;
        return DSE_OK;
    }
    /* Name a few of its tables, so that the user recognizes the file. */
    char names[160] = "";
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT name FROM sqlite_master WHERE type = 'table'" USER_TABLE " ORDER BY name LIMIT 4",
                           -1, &st, NULL) == SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", names[0] ? ", " : "",
                     (const char *)sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
    }
    return dse_err_set(e, DSE_EINPUT, s->path, NULL,
                       "not a dse sweep database (application_id %lld, user_version %lld, %lld table%s%s%s%s)%s",
                       app, ver, tables, tables == 1 ? "" : "s", names[0] ? ": " : "", names,
                       tables > 4 ? ", ..." : "", refusing);
}

#define WRITE_REFUSED ": refusing to write to it (give --db a new file or a dse database)"

int store_open(const char *path, struct store **out, struct dse_err *e)
{
    struct store *s = calloc(1, sizeof *s);
    int rc, kind = 0;
    *out = NULL;
    if (!s)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    dse_strlcpy(s->path, path, sizeof s->path);
    if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        rc = dse_err_set(e, DSE_ERUNTIME, path, NULL, "cannot open database: %s",
                         s->db ? sqlite3_errmsg(s->db) : "out of memory");
        goto fail;
    }
    sqlite3_busy_timeout(s->db, 5000);
    if ((rc = identify(s, &kind, WRITE_REFUSED, e)))
        goto fail;
    s->legacy = kind == 2;
    /* A new database is marked as dse's in the same breath as its tables are made, with 16 KiB pages
     * (set before its first write): a quarter of the writes of 4 KiB pages for a sweep's rows, 5-8 %
     * faster on the 1M-point benchmark (16 KiB was the faster in 6 of 7 runs against 4 KiB). */
    if (kind == 0 && ((rc = exec(s, "PRAGMA page_size = 16384;", e)) || (rc = exec(s, mark_sql, e))))
        goto fail;
    if ((rc = exec(s, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", e)) || (rc = exec(s, schema_sql, e)))
        goto fail;
    *out = s;
    return DSE_OK;
fail:
    store_close(s);
    return rc;
}

void store_init(void)
{
    /* Before SQLite starts: no memory statistics (a mutex around every allocation) and no mutexes on
     * connections (each is used by one thread at a time: the sweep's sink runs on one thread). */
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    sqlite3_config(SQLITE_CONFIG_MULTITHREAD);
}

void store_close(struct store *s)
{
    if (!s)
        return;
    sqlite3_finalize(s->ins);
    sqlite3_finalize(s->ins_many);
    sqlite3_close(s->db);
    free(s->held);
    free(s);
}

int store_prepare(struct store *s, const struct store_col *axes, int n_axes, const struct store_metric *metrics,
                  int n_metrics, const unsigned char *stored, struct dse_err *e)
{
    char q[300], sql[512];
    int rc;
    if (n_axes + n_metrics > MAX_COLS - 4)
        return dse_err_set(e, DSE_ERUNTIME, s->path, NULL, "too many columns");
    s->n_cols = 0;
    for (int i = 0; i < n_metrics; i++)
        if (!stored || stored[i])
            s->col_metric[s->n_cols++] = i;
    if ((rc = exec(s, "BEGIN", e)))
        return rc;
    if (s->legacy) /* the migration: an earlier dse's database is marked as dse's (docs/sweep-db.md) */
        rc = exec(s, mark_sql, e);
    for (int i = 0; i < n_axes + s->n_cols && !rc; i++) {
        const char *name = i < n_axes ? axes[i].name : metrics[s->col_metric[i - n_axes]].name;
        int numeric = i < n_axes ? axes[i].numeric : 1, integer = i < n_axes && axes[i].integer;
        if (has_columns(s, "points", (const char *const[]){name, NULL}))
            continue;
        quote(q, sizeof q, name);
        snprintf(sql, sizeof sql, "ALTER TABLE points ADD COLUMN %s %s", q, integer ? "INTEGER" : numeric ? "REAL" : "TEXT");
        rc = exec(s, sql, e);
    }
    sqlite3_stmt *st = NULL;
    if (!rc && sqlite3_prepare_v2(s->db, "INSERT OR REPLACE INTO metrics VALUES (?, ?, ?, ?)", -1, &st, NULL) != SQLITE_OK)
        rc = db_err(s, e, "metrics");
    for (int i = 0; !rc && i < n_metrics; i++) {
        sqlite3_bind_text(st, 1, metrics[i].name, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, metrics[i].unit, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, metrics[i].direction, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, metrics[i].description, -1, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_DONE)
            rc = db_err(s, e, "metrics");
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    if (rc) {
        exec(s, "ROLLBACK", e);
        return rc;
    }
    if ((rc = exec(s, "COMMIT", e)))
        return rc;
    s->legacy = 0;
    /* INSERT INTO points (run_id, point, feasible, reason, axes..., metrics...) VALUES (?, ...) */
    size_t cap = 256 + (size_t)(n_axes + n_metrics) * 310 + (size_t)INSERT_ROWS * (size_t)(4 + n_axes + n_metrics) * 4;
    char *ins = malloc(cap);
    if (!ins)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    size_t k = (size_t)snprintf(ins, cap, "INSERT INTO points (run_id, point, feasible, reason");
    for (int i = 0; i < n_axes + s->n_cols; i++) {
        quote(q, sizeof q, i < n_axes ? axes[i].name : metrics[s->col_metric[i - n_axes]].name);
        k += (size_t)snprintf(ins + k, cap - k, ", %s", q);
    }
    k += (size_t)snprintf(ins + k, cap - k, ") VALUES ");
    size_t one = 0;
    for (int r = 0; r < INSERT_ROWS && k < cap; r++) {
        k += (size_t)snprintf(ins + k, cap - k, "%s(?, ?, ?, ?", r ? ", " : "");
        for (int i = 0; i < n_axes + s->n_cols && k < cap; i++)
            k += (size_t)snprintf(ins + k, cap - k, ", ?");
        k += (size_t)snprintf(ins + k, cap - k, ")");
        if (!r)
            one = k;
    }
    sqlite3_finalize(s->ins);
    sqlite3_finalize(s->ins_many);
    s->ins = s->ins_many = NULL;
    if (k >= cap)
        rc = dse_err_set(e, DSE_ERUNTIME, s->path, NULL, "insert statement too long");
    else if (sqlite3_prepare_v2(s->db, ins, -1, &s->ins_many, NULL) != SQLITE_OK ||
             sqlite3_prepare_v2(s->db, ins, (int)one, &s->ins, NULL) != SQLITE_OK)
        rc = db_err(s, e, "prepare insert");
    free(ins);
    if (!rc && !s->held && !(s->held = malloc(sizeof *s->held * INSERT_ROWS)))
        rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    s->n_held = 0;
    s->n_axes = n_axes;
    s->n_metrics = n_metrics;
    for (int i = 0; i < n_axes; i++)
        s->axis_numeric[i] = axes[i].integer ? 2 : axes[i].numeric;
    return rc;
}

int store_begin_run(struct store *s, const struct store_run_info *ri, long long *run_id, struct dse_err *e)
{
    sqlite3_stmt *st;
    char now[32];
    now_iso(now, sizeof now);
    if (sqlite3_prepare_v2(s->db,
                           "INSERT INTO runs (name, spec, spec_hash, dse_version, git, openmp, host, threads, started,"
                           " status, inputs, objectives, axes, points_total)"
                           " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?, ?)",
                           -1, &st, NULL) != SQLITE_OK)
        return db_err(s, e, "runs");
    sqlite3_bind_text(st, 1, ri->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, ri->spec, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, ri->spec_hash, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, ri->version, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, ri->git, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 6, ri->openmp);
    sqlite3_bind_text(st, 7, ri->host, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 8, ri->threads);
    sqlite3_bind_text(st, 9, now, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 10, ri->inputs_json, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 11, ri->objectives_json, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 12, ri->axes_json, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 13, ri->points_total);
    int ok = sqlite3_step(st) == SQLITE_DONE;
    sqlite3_finalize(st);
    if (!ok)
        return db_err(s, e, "runs");
    *run_id = sqlite3_last_insert_rowid(s->db);
    return DSE_OK;
}

/* The row st stepped to (id, spec_hash, dse_version, git, inputs) into r. */
static int run_row(sqlite3_stmt *st, struct store_resumable *r, struct dse_err *e)
{
    const char *txt[4];
    for (int i = 0; i < 4; i++)
        txt[i] = col_txt(st, 1 + i);
    r->id = sqlite3_column_int64(st, 0);
    dse_strlcpy(r->spec_hash, txt[0], sizeof r->spec_hash);
    dse_strlcpy(r->version, txt[1], sizeof r->version);
    dse_strlcpy(r->git, txt[2], sizeof r->git);
    if (!(r->inputs_json = strdup(txt[3])))
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    return DSE_OK;
}

int store_find_resumable(struct store *s, const char *name, struct store_resumable *r, struct dse_err *e)
{
    sqlite3_stmt *st;
    memset(r, 0, sizeof *r);
    if (sqlite3_prepare_v2(s->db,
                           "SELECT id, spec_hash, dse_version, git, inputs FROM runs WHERE name = ?"
                           " AND status IN ('running', 'interrupted') ORDER BY id DESC LIMIT 1",
                           -1, &st, NULL) != SQLITE_OK)
        return db_err(s, e, "runs");
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st), out = DSE_OK;
    if (rc == SQLITE_ROW)
        out = run_row(st, r, e);
    else if (rc != SQLITE_DONE)
        out = db_err(s, e, "runs");
    sqlite3_finalize(st);
    if (out)
        store_resumable_free(r);
    return out;
}

void store_resumable_free(struct store_resumable *r)
{
    free(r->inputs_json);
    memset(r, 0, sizeof *r);
}

/* Binds held row h as the row at parameter offset off of st. */
static void bind_row(struct store *s, sqlite3_stmt *st, int off, const struct held_row *h)
{
    sqlite3_bind_int64(st, off + 1, h->run_id);
    sqlite3_bind_int64(st, off + 2, h->point);
    sqlite3_bind_int(st, off + 3, h->feasible);
    if (h->feasible || !h->reason)
        sqlite3_bind_null(st, off + 4);
    else
        sqlite3_bind_text(st, off + 4, h->reason, -1, SQLITE_STATIC);
    for (int i = 0; i < s->n_axes; i++) {
        if (s->axis_numeric[i] == 2)
            sqlite3_bind_int64(st, off + 5 + i, (sqlite3_int64)h->axis_num[i]);
        else if (s->axis_numeric[i])
            sqlite3_bind_double(st, off + 5 + i, h->axis_num[i]);
        else
            sqlite3_bind_text(st, off + 5 + i, h->axis[i], -1, SQLITE_STATIC);
    }
    for (int i = 0; i < s->n_cols; i++) {
        if (isfinite(h->metric[i]))
            sqlite3_bind_double(st, off + 5 + s->n_axes + i, h->metric[i]);
        else
            sqlite3_bind_null(st, off + 5 + s->n_axes + i);
    }
}

static int step(struct store *s, sqlite3_stmt *st, struct dse_err *e)
{
    int ok = sqlite3_step(st) == SQLITE_DONE;
    sqlite3_reset(st);
    return ok ? DSE_OK : db_err(s, e, "insert point");
}

/* The held rows into the table: one multi-row INSERT when full, else one INSERT each. */
static int flush_held(struct store *s, struct dse_err *e)
{
    int rc = DSE_OK, per_row = 4 + s->n_axes + s->n_cols;
    if (s->n_held == INSERT_ROWS) {
        for (int r = 0; r < INSERT_ROWS; r++)
            bind_row(s, s->ins_many, r * per_row, &s->held[r]);
        rc = step(s, s->ins_many, e);
    } else {
        for (int r = 0; r < s->n_held && !rc; r++) {
            bind_row(s, s->ins, 0, &s->held[r]);
            rc = step(s, s->ins, e);
        }
    }
    s->n_held = 0;
    return rc;
}

int store_tx_begin(struct store *s, struct dse_err *e) { return exec(s, "BEGIN", e); }

int store_tx_commit(struct store *s, struct dse_err *e)
{
    int rc = s->n_held ? flush_held(s, e) : DSE_OK;
    return rc ? rc : exec(s, "COMMIT", e);
}

int store_insert(struct store *s, long long run_id, long long point, const char *const *axis_values,
                 const double *axis_num, const double *metrics, int feasible, const char *reason, struct dse_err *e)
{
    struct held_row *h = &s->held[s->n_held++];
    h->run_id = run_id;
    h->point = point;
    h->feasible = feasible;
    h->reason = reason;
    for (int i = 0; i < s->n_axes; i++) {
        h->axis[i] = axis_values[i];
        h->axis_num[i] = axis_num[i];
    }
    for (int i = 0; i < s->n_cols; i++)
        h->metric[i] = metrics[s->col_metric[i]];
    return s->n_held == INSERT_ROWS ? flush_held(s, e) : DSE_OK;
}

int store_load(struct store *s, long long run_id, const char *const *cols, int n_cols,
               void (*fn)(void *ctx, long long point, int feasible, const char *reason, const double *values),
               void *ctx, struct dse_err *e)
{
    struct sb q = {0};
    sqlite3_stmt *st;
    sb_add(&q, "SELECT point, feasible, reason");
    add_cols(&q, cols, n_cols, ", ", "");
    sb_add(&q, " FROM points WHERE run_id = ?1 ORDER BY point");
    int r = prepare_run(s, &q, run_id, &st, "load points", e);
    if (r != DSE_OK)
        return r;
    double v[64];
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        for (int i = 0; i < n_cols && i < 64; i++)
            v[i] = col_num(st, 3 + i);
        fn(ctx, sqlite3_column_int64(st, 0), sqlite3_column_int(st, 1), (const char *)sqlite3_column_text(st, 2), v);
    }
    sqlite3_finalize(st);
    return r == SQLITE_DONE ? DSE_OK : db_err(s, e, "load points");
}

int store_set_ranks(struct store *s, long long run_id, const long long *points, const int *rank, long long n,
                    struct dse_err *e)
{
    sqlite3_stmt *st;
    int rc = exec(s, "BEGIN", e);
    if (rc)
        return rc;
    if (sqlite3_prepare_v2(s->db, "UPDATE points SET rank = ?, pareto = ? WHERE run_id = ? AND point = ?", -1, &st,
                           NULL) != SQLITE_OK) {
        exec(s, "ROLLBACK", e);
        return db_err(s, e, "ranks");
    }
    for (long long i = 0; i < n && !rc; i++) {
        if (rank[i] < 0)
            sqlite3_bind_null(st, 1);
        else
            sqlite3_bind_int(st, 1, rank[i]);
        sqlite3_bind_int(st, 2, rank[i] == 0);
        sqlite3_bind_int64(st, 3, run_id);
        sqlite3_bind_int64(st, 4, points[i]);
        if (sqlite3_step(st) != SQLITE_DONE)
            rc = db_err(s, e, "ranks");
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    if (rc) {
        struct dse_err ignore;
        exec(s, "ROLLBACK", &ignore);
        return rc;
    }
    return exec(s, "COMMIT", e);
}

int store_finish_run(struct store *s, long long run_id, const char *status, double hypervolume, struct dse_err *e)
{
    sqlite3_stmt *st;
    char now[32];
    now_iso(now, sizeof now);
    if (sqlite3_prepare_v2(s->db, "UPDATE runs SET status = ?, finished = ?, hypervolume = ? WHERE id = ?", -1, &st,
                           NULL) != SQLITE_OK)
        return db_err(s, e, "runs");
    sqlite3_bind_text(st, 1, status, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, now, -1, SQLITE_TRANSIENT);
    if (isfinite(hypervolume))
        sqlite3_bind_double(st, 3, hypervolume);
    else
        sqlite3_bind_null(st, 3);
    sqlite3_bind_int64(st, 4, run_id);
    int ok = sqlite3_step(st) == SQLITE_DONE;
    sqlite3_finalize(st);
    return ok ? DSE_OK : db_err(s, e, "runs");
}

static const char validation_sql[] =
    "PRAGMA journal_mode=WAL; BEGIN;"
    "CREATE TABLE IF NOT EXISTS validation_runs (id INTEGER PRIMARY KEY, started TEXT NOT NULL,"
    " hw TEXT NOT NULL, suite TEXT NOT NULL, fidelity TEXT NOT NULL, environment TEXT NOT NULL,"
    " n_kernels INTEGER NOT NULL, mape_pct REAL, within10_pct REAL, within20_pct REAL);"
    "CREATE TABLE IF NOT EXISTS validation_kernels (run_id INTEGER NOT NULL REFERENCES"
    " validation_runs(id), kernel TEXT NOT NULL, shape TEXT NOT NULL, precision TEXT NOT NULL,"
    " measured_ms REAL NOT NULL, predicted_ms REAL NOT NULL, error_pct REAL NOT NULL,"
    " spread_pct REAL, runs INTEGER, flagged INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS validation_cases (run_id INTEGER NOT NULL REFERENCES"
    " validation_runs(id), idx INTEGER NOT NULL, device TEXT NOT NULL, measured_mJ REAL,"
    " predicted_mJ REAL);";

int store_validation(const char *path, const struct store_vrun *r, const struct store_vcase *c, int n,
                     struct dse_err *e)
{
    sqlite3 *h = NULL;
    sqlite3_stmt *q = NULL;
    char *msg = NULL, now[32];
    int rc = DSE_OK;
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
        rc = dse_err_set(e, DSE_ERUNTIME, path, NULL, "cannot open: %s", h ? sqlite3_errmsg(h) : "out of memory");
        goto out;
    }
    if (sqlite3_exec(h, validation_sql, NULL, NULL, &msg) != SQLITE_OK) {
        rc = dse_err_set(e, DSE_ERUNTIME, path, NULL, "%s", msg ? msg : "SQLite error");
        goto out;
    }
    if (sqlite3_prepare_v2(h, "INSERT INTO validation_runs (started, hw, suite, fidelity, environment, n_kernels,"
                              " mape_pct, within10_pct, within20_pct) VALUES (?,?,?,?,?,?,?,?,?)",
                           -1, &q, NULL) != SQLITE_OK)
        goto db_fail;
    sqlite3_bind_text(q, 1, now, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(q, 2, r->hw, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 3, r->suite, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 4, r->fidelity, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 5, r->environment, -1, SQLITE_STATIC);
    sqlite3_bind_int(q, 6, r->n_kernels);
    sqlite3_bind_double(q, 7, r->mape_pct);
    sqlite3_bind_double(q, 8, r->within10_pct);
    sqlite3_bind_double(q, 9, r->within20_pct);
    if (sqlite3_step(q) != SQLITE_DONE)
        goto db_fail;
    sqlite3_finalize(q);
    q = NULL;
    long long run = sqlite3_last_insert_rowid(h);
    if (sqlite3_prepare_v2(h, "INSERT INTO validation_kernels VALUES (?,?,?,?,?,?,?,?,?,?)", -1, &q, NULL) != SQLITE_OK)
        goto db_fail;
    for (int i = 0; i < n; i++) {
        sqlite3_bind_int64(q, 1, run);
        sqlite3_bind_text(q, 2, c[i].kernel, -1, SQLITE_STATIC);
        sqlite3_bind_text(q, 3, c[i].shape, -1, SQLITE_STATIC);
        sqlite3_bind_text(q, 4, c[i].precision, -1, SQLITE_STATIC);
        sqlite3_bind_double(q, 5, c[i].measured_ms);
        sqlite3_bind_double(q, 6, c[i].predicted_ms);
        sqlite3_bind_double(q, 7, 100 * (c[i].predicted_ms / c[i].measured_ms - 1));
        sqlite3_bind_double(q, 8, c[i].spread_pct);
        sqlite3_bind_int(q, 9, c[i].runs);
        sqlite3_bind_int(q, 10, c[i].flagged);
        if (sqlite3_step(q) != SQLITE_DONE)
            goto db_fail;
        sqlite3_reset(q);
    }
    sqlite3_finalize(q);
    q = NULL;
    /* The device each case ran on and its energy (NULL unless measured), in a table of its own so
     * that databases written before it still take new runs. */
    if (sqlite3_prepare_v2(h, "INSERT INTO validation_cases VALUES (?,?,?,?,?)", -1, &q, NULL) != SQLITE_OK)
        goto db_fail;
    for (int i = 0; i < n; i++) {
        sqlite3_bind_int64(q, 1, run);
        sqlite3_bind_int(q, 2, i);
        sqlite3_bind_text(q, 3, c[i].device, -1, SQLITE_STATIC);
        if (c[i].measured_mJ > 0) {
            sqlite3_bind_double(q, 4, c[i].measured_mJ);
            sqlite3_bind_double(q, 5, c[i].predicted_mJ);
        } else {
            sqlite3_bind_null(q, 4);
            sqlite3_bind_null(q, 5);
        }
        if (sqlite3_step(q) != SQLITE_DONE)
            goto db_fail;
        sqlite3_reset(q);
    }
    if (sqlite3_exec(h, "COMMIT", NULL, NULL, &msg) != SQLITE_OK)
        goto db_fail;
    goto out;
db_fail:
    rc = dse_err_set(e, DSE_ERUNTIME, path, NULL, "%s", sqlite3_errmsg(h));
out:
    sqlite3_free(msg);
    sqlite3_finalize(q);
    sqlite3_close(h);
    return rc;
}

/* ---- reading ---- */

int store_open_read(const char *path, struct store **out, struct dse_err *e)
{
    struct stat sb;
    int rc, kind = 0;
    *out = NULL;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) /* never created by a reader */
        return dse_err_set(e, DSE_EINPUT, path, NULL, "no such database");
    struct store *s = calloc(1, sizeof *s);
    if (!s)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    dse_strlcpy(s->path, path, sizeof s->path);
    if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        rc = dse_err_set(e, DSE_ERUNTIME, path, NULL, "cannot open database: %s",
                         s->db ? sqlite3_errmsg(s->db) : "out of memory");
        goto fail;
    }
    sqlite3_busy_timeout(s->db, 5000); /* a sweep may be writing its last batch */
    if ((rc = identify(s, &kind, "", e)))
        goto fail;
    if (kind == 0) {
        rc = dse_err_set(e, DSE_EINPUT, path, NULL, "not a dse sweep database (no tables)");
        goto fail;
    }
    /* A read-only connection cannot remove the -wal and -shm files it makes beside a WAL database, and
     * the last connection to close should. So a dse database we may write to is read through a
     * read-write connection that refuses writes (query_only); a file we may not write stays read-only. */
    if (access(path, W_OK) == 0) {
        sqlite3 *rw = NULL;
        if (sqlite3_open_v2(path, &rw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) == SQLITE_OK &&
            sqlite3_exec(rw, "PRAGMA query_only = 1", NULL, NULL, NULL) == SQLITE_OK) {
            sqlite3_close(s->db);
            s->db = rw;
            sqlite3_busy_timeout(s->db, 5000);
        } else {
            sqlite3_close(rw);
        }
    }
    /* one read transaction: the counts and the rows come from the same snapshot */
    if ((rc = exec(s, "BEGIN", e)))
        goto fail;
    *out = s;
    return DSE_OK;
fail:
    store_close(s);
    return rc;
}

static char *dup_col(sqlite3_stmt *st, int i) { return strdup(col_txt(st, i)); }

int store_read_run(struct store *s, long long run_id, struct store_run *r, struct dse_err *e)
{
    sqlite3_stmt *st;
    memset(r, 0, sizeof *r);
    const char *cols = "SELECT id, points_total, openmp, threads, hypervolume, name, spec, spec_hash, dse_version, git,"
                       " host, started, finished, status, inputs, objectives, axes FROM runs";
    char sql[400];
    snprintf(sql, sizeof sql, "%s%s", cols, run_id > 0 ? " WHERE id = ?" : " ORDER BY id DESC LIMIT 1");
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
        return db_err(s, e, "runs");
    if (run_id > 0)
        sqlite3_bind_int64(st, 1, run_id);
    int step = sqlite3_step(st), rc = DSE_OK;
    if (step == SQLITE_ROW) {
        r->id = sqlite3_column_int64(st, 0);
        r->points_total = sqlite3_column_int64(st, 1);
        r->openmp = sqlite3_column_int(st, 2);
        r->threads = sqlite3_column_int(st, 3);
        r->hypervolume = sqlite3_column_type(st, 4) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 4);
        char **txt[] = {&r->name, &r->spec, &r->spec_hash, &r->version, &r->git, &r->host, &r->started,
                        &r->finished, &r->status, &r->inputs, &r->objectives, &r->axes};
        for (size_t i = 0; i < sizeof txt / sizeof txt[0]; i++)
            if (!(*txt[i] = dup_col(st, 5 + (int)i)))
                rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    } else if (step != SQLITE_DONE) {
        rc = db_err(s, e, "runs");
    }
    sqlite3_finalize(st);
    if (rc)
        store_run_free(r);
    return rc;
}

void store_run_free(struct store_run *r)
{
    char *txt[] = {r->name, r->spec, r->spec_hash, r->version, r->git, r->host, r->started,
                   r->finished, r->status, r->inputs, r->objectives, r->axes};
    for (size_t i = 0; i < sizeof txt / sizeof txt[0]; i++)
        free(txt[i]);
    memset(r, 0, sizeof *r);
}

int store_count(struct store *s, long long run_id, long long *n, long long *feasible, long long *pareto,
                struct dse_err *e)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT count(*), total(feasible = 1), total(pareto = 1) FROM points WHERE run_id = ?",
                           -1, &st, NULL) != SQLITE_OK)
        return db_err(s, e, "count points");
    sqlite3_bind_int64(st, 1, run_id);
    int ok = sqlite3_step(st) == SQLITE_ROW;
    if (ok) {
        *n = sqlite3_column_int64(st, 0);
        *feasible = (long long)sqlite3_column_double(st, 1);
        *pareto = (long long)sqlite3_column_double(st, 2);
    }
    sqlite3_finalize(st);
    return ok ? DSE_OK : db_err(s, e, "count points");
}

int store_reasons(struct store *s, long long run_id, void (*fn)(void *ctx, const char *reason, long long n), void *ctx,
                  struct dse_err *e)
{
    sqlite3_stmt *st;
    /* grouped by SQLite first: far fewer texts than points reach the caller */
    if (sqlite3_prepare_v2(s->db, "SELECT coalesce(reason, ''), count(*) FROM points WHERE run_id = ? AND feasible = 0"
                                  " GROUP BY reason ORDER BY min(point)",
                           -1, &st, NULL) != SQLITE_OK)
        return db_err(s, e, "reasons");
    sqlite3_bind_int64(st, 1, run_id);
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW)
        fn(ctx, (const char *)sqlite3_column_text(st, 0), sqlite3_column_int64(st, 1));
    sqlite3_finalize(st);
    return step == SQLITE_DONE ? DSE_OK : db_err(s, e, "reasons");
}

int store_scan_feasible(struct store *s, long long run_id, const char *const *num, int n_num, int all_num,
                        const char *const *txt, int n_txt,
                        void (*fn)(void *ctx, long long point, int pareto, const double *num, const char *const *txt),
                        void *ctx, struct dse_err *e)
{
    if (n_num > 64 || n_txt > 64)
        return dse_err_set(e, DSE_ERUNTIME, s->path, NULL, "too many columns");
    struct sb q = {0};
    sqlite3_stmt *st;
    sb_add(&q, "SELECT point, pareto");
    add_cols(&q, num, n_num, ", ", "");
    add_cols(&q, txt, n_txt, ", CAST(", " AS TEXT)");
    sb_add(&q, " FROM points WHERE run_id = ?1 AND feasible = 1");
    add_cols(&q, num, all_num ? n_num : 0, " AND ", " IS NOT NULL");
    sb_add(&q, " ORDER BY point");
    int step = prepare_run(s, &q, run_id, &st, "read points", e);
    if (step != DSE_OK)
        return step;
    double v[64];
    const char *t[64];
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        for (int i = 0; i < n_num; i++)
            v[i] = col_num(st, 2 + i);
        for (int i = 0; i < n_txt; i++)
            t[i] = col_txt(st, 2 + n_num + i);
        fn(ctx, sqlite3_column_int64(st, 0), sqlite3_column_int(st, 1) == 1, v, t);
    }
    sqlite3_finalize(st);
    return step == SQLITE_DONE ? DSE_OK : db_err(s, e, "read points");
}

int store_count_present(struct store *s, long long run_id, const char *const *cols, int n_cols, long long *n_all,
                        long long *present, struct dse_err *e)
{
    /* one pass: sum(1 AND a IS NOT NULL AND ...) counts the rows with every value, count(a) those with a */
    struct sb q = {0};
    sqlite3_stmt *st;
    sb_add(&q, "SELECT coalesce(sum(1");
    add_cols(&q, cols, n_cols, " AND ", " IS NOT NULL");
    sb_add(&q, "), 0)");
    add_cols(&q, cols, present ? n_cols : 0, ", count(", ")");
    sb_add(&q, " FROM points WHERE run_id = ?1 AND feasible = 1");
    int rc = prepare_run(s, &q, run_id, &st, "count points", e);
    if (rc != DSE_OK)
        return rc;
    int ok = sqlite3_step(st) == SQLITE_ROW;
    if (ok) {
        *n_all = sqlite3_column_int64(st, 0);
        for (int i = 0; present && i < n_cols; i++)
            present[i] = sqlite3_column_int64(st, 1 + i);
    }
    sqlite3_finalize(st);
    return ok ? DSE_OK : db_err(s, e, "count points");
}

int store_columns(struct store *s, const char *table, void (*fn)(void *ctx, const char *name), void *ctx,
                  struct dse_err *e)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT name FROM pragma_table_info(?1)", -1, &st, NULL) != SQLITE_OK)
        return db_err(s, e, "columns");
    sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW)
        fn(ctx, col_txt(st, 0));
    sqlite3_finalize(st);
    return step == SQLITE_DONE ? DSE_OK : db_err(s, e, "columns");
}

int store_metrics(struct store *s, void (*fn)(void *ctx, const struct store_metric *m), void *ctx,
                  struct dse_err *e)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT name, unit, direction, description FROM metrics", -1, &st, NULL) !=
        SQLITE_OK)
        return db_err(s, e, "metrics");
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        struct store_metric m = {col_txt(st, 0), col_txt(st, 1), col_txt(st, 2), col_txt(st, 3)};
        fn(ctx, &m);
    }
    sqlite3_finalize(st);
    return step == SQLITE_DONE ? DSE_OK : db_err(s, e, "metrics");
}

int store_runs(struct store *s, void (*fn)(void *ctx, long long id, const char *name), void *ctx,
               struct dse_err *e)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT id, name FROM runs ORDER BY id", -1, &st, NULL) != SQLITE_OK)
        return db_err(s, e, "runs");
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW)
        fn(ctx, sqlite3_column_int64(st, 0), col_txt(st, 1));
    sqlite3_finalize(st);
    return step == SQLITE_DONE ? DSE_OK : db_err(s, e, "runs");
}
