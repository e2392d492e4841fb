/* store.c -- SQLite storage of sweep runs. Opening a database reads its header and schema before
 * it writes anything (store.h): dse never alters another program's database.
 *
 * The layout (schema version 2, docs/sweep-db.md) is chosen for the sweep's write rate, measured on
 * this project's 2-core VM with perf and a bench of SQLite alone (1,000,000 rows):
 * - A point's row (point_rows) holds no axis values: its index in the space is the mixed-radix
 *   number of its axes' value indices, so the run's axes (run_axes, axis_values) give every design.
 *   The axes were 6 of the 18 columns a row and most of its bytes (paths, placements).
 * - Its key is the rowid: the run's key_base + point. No second B-tree (the (run_id, point) primary
 *   key was one), and a key one past the table's largest is bound as NULL, which SQLite appends
 *   without a search (an explicit rowid is looked up first: 0.38 us a row).
 * - A reason is an id into reasons: 67 % of the benchmark's rows are infeasible, with 585
 *   distinct reasons of about 100 bytes; a small cache maps texts to ids without SQL.
 * - The stored metrics go to point_metrics once for each run of points (in insertion order) that
 *   have the same ones: the memory sizes of a design change only feasibility, and power caps above
 *   what it draws change nothing (779 rows for the benchmark's 1,000,000 points).
 * - Ranks, known only at the end, are ranges of neighbours in key order with one rank
 *   (point_ranks): 235 rows for 323,456 ranked points, where updating them in place took longer
 *   than writing them.
 * The points view puts it together with the old columns, so SQL written for schema version 1 reads
 * the same; the latest view is as before. The 1M benchmark, whole process: 2.8-3.9 s before, 0.7-0.9 s. */
#include "store.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <time.h>

#include <sqlite3.h>

#include "sbuf.h"

/* The most columns a read of points asks for at once: every metric (METRIC_MAX) and axes beside them. */
#define STORE_MAX_COLS 128

#define MAX_COLS 96

/* Points go to SQLite INSERT_ROWS at a time, one multi-row INSERT: 1.65x the rows per second of one
 * row per statement (measured on this project's 2-core VM, 15 columns: 310,000 against 530,000). */
#define INSERT_ROWS 32
/* Reason texts cached with their ids: direct-mapped by hash, a text of at most REASON_LEN - 1 bytes
 * (a sweep's are shorter than 200; longer ones are looked up each time). */
#define REASON_SLOTS 2048
#define REASON_LEN 200

/* A point waiting for its multi-row INSERT: reason is the caller's (the sink's rows), alive until the
 * transaction's commit, which flushes. */
struct held_row {
    long long key, metrics;
    int feasible;
    const char *reason;
};

/* A row of point_metrics waiting for its INSERT. */
struct held_metrics {
    long long id;
    double v[MAX_COLS];
};

struct reason_slot {
    unsigned long long hash;
    long long id; /* 0: empty */
    char text[REASON_LEN];
};

struct store {
    sqlite3 *db;
    char path[DSE_PATH_LEN];
    sqlite3_stmt *ins, *ins_many; /* one row; INSERT_ROWS rows */
    sqlite3_stmt *mins, *mins_many; /* the same for point_metrics */
    sqlite3_stmt *reason_get, *reason_put;
    struct held_row *held;        /* INSERT_ROWS of them */
    struct held_metrics *hm;      /* INSERT_ROWS of them */
    int n_held, n_hm;
    long long next_mid;           /* the next point_metrics id */
    int have_last;                /* last_m (id last_mid) was given in this transaction */
    long long last_mid;
    double last_m[MAX_COLS];
    int n_metrics, n_cols;        /* n_cols: the metric columns this run stores */
    int col_metric[MAX_COLS];     /* metric index of each stored metric column */
    int version;                  /* the file's schema version: below 2 migrated by store_prepare */
    int legacy;                   /* a dse database from before application_id */
    long long next_auto;          /* the key SQLite gives a row inserted without one: max(key) + 1 */
    long long kb_run, kb_base, kb_end; /* run kb_run's keys: [kb_base, kb_end) */
    struct reason_slot *reasons;  /* REASON_SLOTS */
};

/* The tables and the columns every dse database has had (points, in schema version 1 a table, also
 * has one column per axis and per metric, which come and go with the spec and the metric registry). */
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
/* What schema version 2 adds to version 1's runs and metrics (a migration runs it too). */
static const char tables2_sql[] =
    "CREATE TABLE IF NOT EXISTS reasons (id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE);"
    "CREATE TABLE IF NOT EXISTS run_axes (run_id INTEGER NOT NULL REFERENCES runs(id), axis INTEGER NOT NULL,"
    " name TEXT NOT NULL, n INTEGER NOT NULL, stride INTEGER NOT NULL, PRIMARY KEY (run_id, axis),"
    " UNIQUE (run_id, name));"
    "CREATE TABLE IF NOT EXISTS axis_values (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, axis INTEGER NOT NULL,"
    " code INTEGER NOT NULL, value);"
    "CREATE TABLE IF NOT EXISTS point_metrics (id INTEGER PRIMARY KEY);"
    "CREATE TABLE IF NOT EXISTS point_rows (key INTEGER PRIMARY KEY, feasible INTEGER NOT NULL,"
    " reason INTEGER REFERENCES reasons(id), metrics INTEGER NOT NULL REFERENCES point_metrics(id));"
    "CREATE TABLE IF NOT EXISTS point_ranks (key INTEGER PRIMARY KEY, last INTEGER NOT NULL, rank INTEGER NOT NULL);";
static const char schema_sql[] =
    "CREATE TABLE IF NOT EXISTS runs (id INTEGER PRIMARY KEY, name TEXT NOT NULL, spec TEXT NOT NULL,"
    " spec_hash TEXT NOT NULL, dse_version TEXT NOT NULL, git TEXT NOT NULL, openmp INTEGER NOT NULL,"
    " host TEXT NOT NULL, threads INTEGER NOT NULL, started TEXT NOT NULL, finished TEXT,"
    " status TEXT NOT NULL, inputs TEXT NOT NULL, objectives TEXT NOT NULL, axes TEXT NOT NULL,"
    " points_total INTEGER NOT NULL, hypervolume REAL, key_base INTEGER, key_end INTEGER);"
    "CREATE TABLE IF NOT EXISTS metrics (name TEXT PRIMARY KEY, unit TEXT NOT NULL,"
    " direction TEXT NOT NULL, description TEXT NOT NULL);";
/* Version 1 to 2 (docs/sweep-db.md): the points table keeps its rows under another name, and the
 * points view shows them beside the new ones. */
static const char migrate_sql[] =
    "DROP VIEW IF EXISTS latest; ALTER TABLE points RENAME TO points_v1;"
    "ALTER TABLE runs ADD COLUMN key_base INTEGER; ALTER TABLE runs ADD COLUMN key_end INTEGER;";
static const char mark_sql[] =
    "PRAGMA application_id = " XSTR(STORE_APPLICATION_ID) "; PRAGMA user_version = " XSTR(STORE_SCHEMA_VERSION) ";";

/* A failure of SQLite on s. A file damaged below SQL, or a dse database missing a table or column its
 * schema has, is an input error (exit 2) saying so; anything else (I/O, a lock held too long) a runtime one. */
static int db_err(struct store *s, struct dse_err *e, const char *what)
{
    int code = sqlite3_errcode(s->db);
    const char *msg = sqlite3_errmsg(s->db);
    if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB)
        return dse_err_set(e, DSE_EINPUT, s->path, NULL, "a damaged SQLite database (%s: %s)", what, msg);
    if (code == SQLITE_ERROR && (!strncmp(msg, "no such table", 13) || !strncmp(msg, "no such column", 14)))
        return dse_err_set(e, DSE_EINPUT, s->path, NULL, "a damaged dse database (%s: %s): not as dse wrote it",
                           what, msg);
    return dse_err_set(e, DSE_ERUNTIME, s->path, NULL, "%s: %s", what, msg);
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

static void rollback(struct store *s)
{
    struct dse_err ignore;
    if (!sqlite3_get_autocommit(s->db))
        exec(s, "ROLLBACK", &ignore);
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

static int has_table(struct store *s, const char *name)
{
    sqlite3_stmt *st;
    int n = 0;
    if (sqlite3_prepare_v2(s->db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1", -1, &st, NULL) ==
        SQLITE_OK) {
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        n = sqlite3_step(st) == SQLITE_ROW;
        sqlite3_finalize(st);
    }
    return n;
}
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
        s->version = ver >= 2 ? 2 : 1;
        /* dse marks a database in the transaction that makes its tables: one without them was changed since */
        static const char *const v2[] = {"runs", "metrics", "reasons", "run_axes", "axis_values", "point_metrics",
                                         "point_rows", "point_ranks", NULL},
                                 *const v1[] = {"runs", "metrics", "points", NULL};
        for (const char *const *t = s->version == 2 ? v2 : v1; *t; t++)
            if (!has_table(s, *t))
                return dse_err_set(e, DSE_EINPUT, s->path, NULL, "a damaged dse database: schema version %d without "
                                   "its table %s%s", s->version, *t, refusing);
        return DSE_OK;
    }
    if (app == 0 && ver == 0 && tables == 0) {
        *kind = 0;
        s->version = STORE_SCHEMA_VERSION;
        return DSE_OK;
    }
    int dse = app == 0 && ver == 0;
    for (size_t t = 0; dse && t < sizeof dse_tables / sizeof dse_tables[0]; t++)
        dse = has_columns(s, dse_tables[t].table, dse_tables[t].cols);
    if (dse) { /* points a table (version 1), or the view over point_rows of a header since cleared */
        *kind = 2;
        s->version = has_table(s, "point_rows") ? 2 : 1;
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


/* Names of a query's first column, appended to names (n of them, at most cap) unless already there. */
static int add_names(struct store *s, const char *sql, char **names, int *n, int cap, struct dse_err *e)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
        return db_err(s, e, "points view");
    int step, rc = DSE_OK;
    while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = col_txt(st, 0);
        int seen = 0;
        for (int i = 0; i < *n && !seen; i++)
            seen = strcmp(names[i], name) == 0;
        if (seen)
            continue;
        if (*n >= cap)
            rc = dse_err_set(e, DSE_ERUNTIME, s->path, NULL, "more than %d point columns", cap);
        else if (!(names[*n] = strdup(name)))
            rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        else
            (*n)++;
    }
    if (!rc && step != SQLITE_DONE)
        rc = db_err(s, e, "points view");
    sqlite3_finalize(st);
    return rc;
}

/* 1 when name is among the first column's values of sql bound to name. */
static int named(struct store *s, const char *sql, const char *name)
{
    sqlite3_stmt *st;
    int yes = 0;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        yes = sqlite3_step(st) == SQLITE_ROW;
        sqlite3_finalize(st);
    }
    return yes;
}

/* An axis value's rowid, (run_id * 256 + axis) * 65536 + code: the view looks values up by rowid, 1.8x
 * faster than by a (run_id, axis, code) key (1,000,000 rows, 6 axes: 1.46 s against 2.65 s). */
#define AXV_AXES 256
#define AXV_CODES 65536
#define AXV_ID(run, axis, code) "((" run ") * 256 + (" axis ")) * 65536 + (" code ")"
#define VIEW_COLS 1024
#define HOISTED 24
#define AXIS_NAMED "SELECT 1 FROM run_axes WHERE name = ?1 LIMIT 1"
#define METRIC_NAMED "SELECT 1 FROM pragma_table_info('point_metrics') WHERE name = ?1 AND cid >= 1"
#define V1_NAMED "SELECT 1 FROM pragma_table_info('points_v1') WHERE name = ?1"

/* The points view (schema version 1's table, column for column: run_id, point, feasible, reason,
 * pareto, rank, every axis any run has, in the spec's order, every metric column) and the latest view,
 * made again whenever a run brings an axis or a column. An axis value is looked up from the point's
 * index: (point / stride) % n is its value's code. Rows of a migrated database's points_v1 follow. */
static int make_views(struct store *s, struct dse_err *e)
{
    char *names[VIEW_COLS];
    int n = 0, rc, v1 = has_table(s, "points_v1");
    rc = add_names(s, "SELECT name FROM run_axes GROUP BY name ORDER BY min(run_id), min(axis)", names, &n, VIEW_COLS,
                   e);
    if (!rc)
        rc = add_names(s, "SELECT name FROM pragma_table_info('point_metrics') WHERE cid >= 1 ORDER BY cid", names, &n,
                       VIEW_COLS, e);
    if (!rc && v1)
        rc = add_names(s, "SELECT name FROM pragma_table_info('points_v1') WHERE name NOT IN ('run_id', 'point',"
                          " 'feasible', 'reason', 'pareto', 'rank') ORDER BY cid", names, &n, VIEW_COLS, e);
    /* An axis's run_axes row is joined once per run (before point_rows, so the planner keeps it in the
     * outer loop), its value once per row: 3.3 s for 1,000,000 rows and 6 axes, against 7.8 s with both
     * looked up per row. SQLite joins at most 64 tables: past HOISTED axes, per row. */
    struct sb q = {0}, pre = {0}, post = {0};
    char qn[300];
    int hoisted = 0;
    sb_add(&q, "DROP VIEW IF EXISTS latest; DROP VIEW IF EXISTS points; CREATE VIEW points AS SELECT r.id AS run_id,"
               " d.key - r.key_base AS point, d.feasible AS feasible, rs.text AS reason,"
               " coalesce(k.rank = 0, 0) AS pareto, k.rank AS rank");
    for (int i = 0; i < n && !rc; i++) {
        int axis = named(s, AXIS_NAMED, names[i]), metric = named(s, METRIC_NAMED, names[i]);
        quote(qn, sizeof qn, names[i]);
        sb_add(&q, ", %s", axis && metric ? "coalesce(" : "");
        if (axis) {
            char *lit = sqlite3_mprintf("%Q", names[i]);
            if (!lit) {
                rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
                break;
            }
            if (hoisted < HOISTED) {
                int a = hoisted++;
                sb_add(&pre, " LEFT JOIN run_axes a%d ON a%d.run_id = r.id AND a%d.name = %s", a, a, a, lit);
                sb_add(&post, " LEFT JOIN axis_values v%d ON v%d.id = ((r.id * 256 + a%d.axis) * 65536 +"
                              " (d.key - r.key_base) / a%d.stride %% a%d.n)", a, a, a, a, a);
                sb_add(&q, "v%d.value", a);
            } else {
                sb_add(&q, "(SELECT v.value FROM run_axes a JOIN axis_values v ON v.id = ((a.run_id * 256 + a.axis) *"
                           " 65536 + (d.key - r.key_base) / a.stride %% a.n) WHERE a.run_id = r.id AND a.name = %s)", lit);
            }
            sqlite3_free(lit);
        }
        if (metric)
            sb_add(&q, "%sm.%s%s", axis ? ", " : "", qn, axis ? ")" : "");
        if (!axis && !metric)
            sb_add(&q, "NULL");
        sb_add(&q, " AS %s", qn);
    }
    sb_add(&q, " FROM runs r%s JOIN point_rows d ON d.key >= r.key_base AND d.key < r.key_end"
               " JOIN point_metrics m ON m.id = d.metrics LEFT JOIN reasons rs ON rs.id = d.reason"
               " LEFT JOIN point_ranks k ON k.key = CASE WHEN d.feasible = 1 THEN (SELECT max(k2.key) FROM point_ranks k2"
               " WHERE k2.key <= d.key) END AND d.key <= k.last%s", sb_str(&pre), sb_str(&post));
    if (pre.oom || post.oom)
        q.oom = 1;
    free(pre.s);
    free(post.s);
    if (v1) {
        sb_add(&q, " UNION ALL SELECT run_id, point, feasible, reason, pareto, rank");
        for (int i = 0; i < n; i++) {
            quote(qn, sizeof qn, names[i]);
            sb_add(&q, ", %s", named(s, V1_NAMED, names[i]) ? qn : "NULL");
        }
        sb_add(&q, " FROM points_v1");
    }
    /* each sweep name's newest run: queries that should not mix re-runs of a spec */
    sb_add(&q, "; CREATE VIEW latest AS SELECT points.* FROM points JOIN runs ON runs.id = points.run_id"
               " WHERE runs.id = (SELECT max(r2.id) FROM runs r2 WHERE r2.name = runs.name);");
    for (int i = 0; i < n; i++)
        free(names[i]);
    if (!rc)
        rc = q.oom ? dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory") : exec(s, sb_str(&q), e);
    free(q.s);
    return rc;
}

#define WRITE_REFUSED ": refusing to write to it (give --db a new file or a dse database)"

int store_open(const char *path, struct store **out, struct dse_err *e)
{
    struct store *s = calloc(1, sizeof *s);
    int rc, kind = 0;
    *out = NULL;
    if (!s)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    if ((rc = dse_path_check(path, "--db", e))) {
        free(s);
        return rc;
    }
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
    if (kind == 0 && (rc = exec(s, "PRAGMA page_size = 16384;", e)))
        goto fail;
    if ((rc = exec(s, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", e)))
        goto fail;
    if (kind == 0) {
        if ((rc = exec(s, "BEGIN", e)))
            goto fail;
        if ((rc = exec(s, mark_sql, e)) || (rc = exec(s, schema_sql, e)) || (rc = exec(s, tables2_sql, e)) ||
            (rc = make_views(s, e)) || (rc = exec(s, "COMMIT", e))) {
            rollback(s);
            goto fail;
        }
    }
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
    sqlite3_finalize(s->mins);
    sqlite3_finalize(s->mins_many);
    sqlite3_finalize(s->reason_get);
    sqlite3_finalize(s->reason_put);
    sqlite3_close(s->db);
    free(s->held);
    free(s->hm);
    free(s->reasons);
    free(s);
}

/* INSERT INTO table (cols) VALUES (?, ...) as one (*one) and as INSERT_ROWS rows (*many). */
static int prepare_insert(struct store *s, const char *table, const char *const *cols, int n, sqlite3_stmt **one,
                          sqlite3_stmt **many, struct dse_err *e)
{
    struct sb q = {0};
    sb_add(&q, "INSERT INTO %s (", table);
    add_cols(&q, cols, 1, "", "");
    add_cols(&q, cols + 1, n - 1, ", ", "");
    sb_add(&q, ") VALUES ");
    size_t first = 0;
    for (int r = 0; r < INSERT_ROWS; r++) {
        sb_add(&q, "%s(?", r ? ", " : "");
        for (int i = 1; i < n; i++)
            sb_add(&q, ", ?");
        sb_add(&q, ")");
        if (!r)
            first = q.len;
    }
    int rc = DSE_OK;
    if (q.oom)
        rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    else if (sqlite3_prepare_v2(s->db, q.s, -1, many, NULL) != SQLITE_OK ||
             sqlite3_prepare_v2(s->db, q.s, (int)first, one, NULL) != SQLITE_OK)
        rc = db_err(s, e, "prepare insert");
    free(q.s);
    return rc;
}

int store_prepare(struct store *s, const struct store_metric *metrics, int n_metrics, const unsigned char *stored,
                  struct dse_err *e)
{
    char q[300], sql[512];
    int rc;
    if (n_metrics > MAX_COLS - 4)
        return dse_err_set(e, DSE_ERUNTIME, s->path, NULL, "too many columns");
    s->n_cols = 0;
    for (int i = 0; i < n_metrics; i++)
        if (!stored || stored[i])
            s->col_metric[s->n_cols++] = i;
    if ((rc = exec(s, "BEGIN", e)))
        return rc;
    int changed = 0;
    if (s->version < 2) { /* the migration (docs/sweep-db.md) */
        rc = exec(s, migrate_sql, e);
        if (!rc)
            rc = exec(s, tables2_sql, e);
        changed = 1;
    }
    if (!rc && (s->legacy || s->version < 2)) /* marked as dse's, of this schema version */
        rc = exec(s, mark_sql, e);
    for (int i = 0; i < s->n_cols && !rc; i++) {
        const char *name = metrics[s->col_metric[i]].name;
        if (has_columns(s, "point_metrics", (const char *const[]){name, NULL}))
            continue;
        quote(q, sizeof q, name);
        snprintf(sql, sizeof sql, "ALTER TABLE point_metrics ADD COLUMN %s REAL", q);
        rc = exec(s, sql, e);
        changed = 1;
    }
    if (!rc && changed)
        rc = make_views(s, e);
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
        rollback(s);
        return rc;
    }
    if ((rc = exec(s, "COMMIT", e)))
        return rc;
    s->legacy = 0;
    s->version = STORE_SCHEMA_VERSION;
    sqlite3_finalize(s->ins);
    sqlite3_finalize(s->ins_many);
    sqlite3_finalize(s->mins);
    sqlite3_finalize(s->mins_many);
    sqlite3_finalize(s->reason_get);
    sqlite3_finalize(s->reason_put);
    s->ins = s->ins_many = s->mins = s->mins_many = s->reason_get = s->reason_put = NULL;
    const char *names[MAX_COLS + 1] = {"id"};
    for (int i = 0; i < s->n_cols; i++)
        names[1 + i] = metrics[s->col_metric[i]].name;
    if ((rc = prepare_insert(s, "point_rows", (const char *const[]){"key", "feasible", "reason", "metrics"}, 4,
                             &s->ins, &s->ins_many, e)) ||
        (rc = prepare_insert(s, "point_metrics", names, 1 + s->n_cols, &s->mins, &s->mins_many, e)))
        return rc;
    if (sqlite3_prepare_v2(s->db, "SELECT id FROM reasons WHERE text = ?1", -1, &s->reason_get, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(s->db, "INSERT INTO reasons (text) VALUES (?1)", -1, &s->reason_put, NULL) != SQLITE_OK)
        return db_err(s, e, "prepare insert");
    if ((!s->held && !(s->held = malloc(sizeof *s->held * INSERT_ROWS))) ||
        (!s->hm && !(s->hm = malloc(sizeof *s->hm * INSERT_ROWS))) ||
        (!s->reasons && !(s->reasons = calloc(REASON_SLOTS, sizeof *s->reasons))))
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    s->n_held = s->n_hm = 0;
    s->n_metrics = n_metrics;
    s->kb_run = 0;
    return DSE_OK;
}

/* Binds axis value v of c (a number for a numeric axis, an integer when integral) to parameter i. */
static void bind_value(sqlite3_stmt *st, int i, const struct store_col *c, int v)
{
    if (c->numeric && c->integer)
        sqlite3_bind_int64(st, i, (sqlite3_int64)c->num[v]);
    else if (c->numeric)
        sqlite3_bind_double(st, i, c->num[v]);
    else
        sqlite3_bind_text(st, i, c->text[v], -1, SQLITE_STATIC);
}

/* The run's axes and values (run_axes, axis_values), in the open transaction. */
static int put_axes(struct store *s, long long run_id, const struct store_col *c, int n, struct dse_err *e)
{
    sqlite3_stmt *ax = NULL, *val = NULL;
    int rc = DSE_OK;
    if (sqlite3_prepare_v2(s->db, "INSERT INTO run_axes (run_id, axis, name, n, stride) VALUES (?1, ?2, ?3, ?4, ?5)",
                           -1, &ax, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(s->db, "INSERT INTO axis_values (id, run_id, axis, code, value) VALUES (" AXV_ID("?1", "?2", "?3")
                                  ", ?1, ?2, ?3, ?4)", -1, &val, NULL) != SQLITE_OK)
        rc = db_err(s, e, "axes");
    if (!rc && (n > AXV_AXES || run_id > INT64_MAX / AXV_AXES / AXV_CODES - 1))
        rc = dse_err_set(e, DSE_ERUNTIME, s->path, NULL, "internal error: run %lld of %d axes", run_id, n);
    for (int a = 0; a < n && !rc; a++)
        if (c[a].n > AXV_CODES)
            rc = dse_err_set(e, DSE_ERUNTIME, s->path, NULL, "internal error: axis %s of %d values", c[a].name, c[a].n);
    for (int a = 0; a < n && !rc; a++) {
        sqlite3_bind_int64(ax, 1, run_id);
        sqlite3_bind_int(ax, 2, a);
        sqlite3_bind_text(ax, 3, c[a].name, -1, SQLITE_STATIC);
        sqlite3_bind_int(ax, 4, c[a].n);
        sqlite3_bind_int64(ax, 5, c[a].stride);
        if (sqlite3_step(ax) != SQLITE_DONE)
            rc = db_err(s, e, "axes");
        sqlite3_reset(ax);
        for (int v = 0; v < c[a].n && !rc; v++) {
            sqlite3_bind_int64(val, 1, run_id);
            sqlite3_bind_int(val, 2, a);
            sqlite3_bind_int(val, 3, v);
            bind_value(val, 4, &c[a], v);
            if (sqlite3_step(val) != SQLITE_DONE)
                rc = db_err(s, e, "axes");
            sqlite3_reset(val);
        }
    }
    sqlite3_finalize(ax);
    sqlite3_finalize(val);
    return rc;
}

int store_begin_run(struct store *s, const struct store_run_info *ri, long long *run_id, struct dse_err *e)
{
    sqlite3_stmt *st;
    char now[32];
    long long base = 0, top = 0;
    now_iso(now, sizeof now);
    int rc = exec(s, "BEGIN IMMEDIATE", e);
    if (rc)
        return rc;
    /* The run's keys follow every key given before (a run's range is its space, so any point fits). */
    if (query_int(s, "SELECT coalesce(max(key_end), 1) FROM runs", &base) != SQLITE_OK ||
        query_int(s, "SELECT coalesce(max(key), 0) + 1 FROM point_rows", &top) != SQLITE_OK) {
        rc = db_err(s, e, "runs");
        goto fail;
    }
    if (top > base)
        base = top;
    if (ri->space < 1 || ri->space > INT64_MAX - base) {
        rc = dse_err_set(e, DSE_EINPUT, s->path, NULL, "no room for another run of %lld points (each run keeps a key "
                         "per point of its space, and the database has given out %lld): use another --db",
                         ri->space, base - 1);
        goto fail;
    }
    if (sqlite3_prepare_v2(s->db,
                           "INSERT INTO runs (name, spec, spec_hash, dse_version, git, openmp, host, threads, started,"
                           " status, inputs, objectives, axes, points_total, key_base, key_end)"
                           " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, ?, ?)",
                           -1, &st, NULL) != SQLITE_OK) {
        rc = db_err(s, e, "runs");
        goto fail;
    }
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
    sqlite3_bind_int64(st, 14, base);
    sqlite3_bind_int64(st, 15, base + ri->space);
    int ok = sqlite3_step(st) == SQLITE_DONE;
    sqlite3_finalize(st);
    if (!ok) {
        rc = db_err(s, e, "runs");
        goto fail;
    }
    *run_id = sqlite3_last_insert_rowid(s->db);
    long long had = 0;
    if (query_int(s, "SELECT count(DISTINCT name) FROM run_axes", &had) != SQLITE_OK) {
        rc = db_err(s, e, "axes");
        goto fail;
    }
    if ((rc = put_axes(s, *run_id, ri->axes, ri->n_axes, e)))
        goto fail;
    long long now_has = 0;
    if (query_int(s, "SELECT count(DISTINCT name) FROM run_axes", &now_has) != SQLITE_OK) {
        rc = db_err(s, e, "axes");
        goto fail;
    }
    if ((now_has != had && (rc = make_views(s, e))) || (rc = exec(s, "COMMIT", e)))
        goto fail;
    s->kb_run = *run_id;
    s->kb_base = base;
    s->kb_end = base + ri->space;
    return DSE_OK;
fail:
    rollback(s);
    return rc;
}

/* Run run_id's keys, [*base, *end), and *kind: 1 a run of schema version 2, 0 one of version 1 (also
 * every run of a database not yet migrated), -1 no such run. */
static int run_range(struct store *s, long long run_id, long long *base, long long *end, int *kind,
                     struct dse_err *e)
{
    sqlite3_stmt *st;
    *kind = 0;
    if (!has_table(s, "point_rows"))
        return DSE_OK;
    if (sqlite3_prepare_v2(s->db, "SELECT key_base, key_end FROM runs WHERE id = ?1", -1, &st, NULL) != SQLITE_OK)
        return db_err(s, e, "runs");
    sqlite3_bind_int64(st, 1, run_id);
    int step = sqlite3_step(st), rc = DSE_OK;
    if (step == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_INTEGER) {
        *kind = 1;
        *base = sqlite3_column_int64(st, 0);
        *end = sqlite3_column_int64(st, 1);
    } else if (step == SQLITE_DONE) {
        *kind = -1;
    } else if (step != SQLITE_ROW) {
        rc = db_err(s, e, "runs");
    }
    sqlite3_finalize(st);
    return rc;
}

/* The key range of run_id into s->kb_* (the writer's: a run of schema version 2). */
static int run_keys(struct store *s, long long run_id, struct dse_err *e)
{
    int kind, rc;
    if (s->kb_run == run_id && run_id > 0)
        return DSE_OK;
    if ((rc = run_range(s, run_id, &s->kb_base, &s->kb_end, &kind, e)))
        return rc;
    if (kind == 1) {
        s->kb_run = run_id;
        return DSE_OK;
    }
    return dse_err_set(e, DSE_ERUNTIME, s->path, NULL, "run %lld %s", run_id,
                       kind < 0 ? "is not in the database"
                                : "was written by an earlier dse (schema version 1): it takes no new points");
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
    /* a database of version 1 (not yet migrated) has no key_base: every run in it is of version 1 */
    if (sqlite3_prepare_v2(s->db,
                           s->version < 2 ? "SELECT id, spec_hash, dse_version, git, inputs, 1 FROM runs WHERE name = ?"
                                            " AND status IN ('running', 'interrupted') ORDER BY id DESC LIMIT 1"
                                          : "SELECT id, spec_hash, dse_version, git, inputs, key_base IS NULL FROM runs"
                                            " WHERE name = ? AND status IN ('running', 'interrupted') ORDER BY id DESC"
                                            " LIMIT 1",
                           -1, &st, NULL) != SQLITE_OK)
        return db_err(s, e, "runs");
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st), out = DSE_OK;
    if (rc == SQLITE_ROW) {
        out = run_row(st, r, e);
        r->v1 = sqlite3_column_int(st, 5);
    }
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

/* ---- a run of schema version 2, read without the points view ----
 * The view looks each axis value up for every row (3 s for 1,000,000 rows and two axes); the readers
 * below take the run's rows in key order from point_rows and decode the axes here, from the point's
 * index, with the values as SQLite gives them (CAST AS TEXT for text, the number for numbers). A column
 * that is neither an axis of the run nor a metric column sends the call to the view. */
#define DEC_AXES 64

struct dec_axis {
    char *name;
    int n;
    long long stride;
    char **txt;  /* n values as text */
    double *num; /* as numbers: NAN for text */
};

struct run_dec {
    long long base, end;
    int n_axes;
    struct dec_axis ax[DEC_AXES];
};

static void dec_free(struct run_dec *rd)
{
    for (int a = 0; a < rd->n_axes; a++) {
        for (int v = 0; v < rd->ax[a].n && rd->ax[a].txt; v++)
            free(rd->ax[a].txt[v]);
        free(rd->ax[a].txt);
        free(rd->ax[a].num);
        free(rd->ax[a].name);
    }
    rd->n_axes = 0;
}

/* *v2 1: run_id is a run of schema version 2, its key range and axes in rd (dec_free releases them);
 * 0: a run of version 1 (the view's or the table's rows). */
static int dec_load(struct store *s, long long run_id, struct run_dec *rd, int *v2, struct dse_err *e)
{
    sqlite3_stmt *st = NULL;
    int kind, rc;
    memset(rd, 0, sizeof *rd);
    *v2 = 0;
    if ((rc = run_range(s, run_id, &rd->base, &rd->end, &kind, e)) || kind != 1)
        return rc;
    if (sqlite3_prepare_v2(s->db, "SELECT a.axis, a.name, a.n, a.stride, v.code, CAST(v.value AS TEXT), v.value"
                                  " FROM run_axes a LEFT JOIN axis_values v ON v.id BETWEEN " AXV_ID("a.run_id", "a.axis", "0")
                                  " AND " AXV_ID("a.run_id", "a.axis", "65535") " WHERE a.run_id = ?1 ORDER BY a.axis, v.code",
                           -1, &st, NULL) != SQLITE_OK)
        return db_err(s, e, "axes");
    sqlite3_bind_int64(st, 1, run_id);
    int step = SQLITE_DONE;
    while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
        int a = sqlite3_column_int(st, 0), n = sqlite3_column_int(st, 2), code = sqlite3_column_int(st, 4);
        if (a < 0 || a >= DEC_AXES || a > rd->n_axes || n < 1 || n > 1 << 20 || code < 0 || code >= n ||
            sqlite3_column_int64(st, 3) < 1) {
            rc = dse_err_set(e, DSE_EINPUT, s->path, NULL, "run %lld: damaged axis table (axis %d)", run_id, a);
            break;
        }
        if (a == rd->n_axes) {
            struct dec_axis *x = &rd->ax[rd->n_axes++];
            x->n = n;
            x->stride = sqlite3_column_int64(st, 3);
            x->name = strdup(col_txt(st, 1));
            x->txt = calloc((size_t)n, sizeof *x->txt);
            x->num = malloc(sizeof *x->num * (size_t)n);
            if (!x->name || !x->txt || !x->num) {
                rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
                break;
            }
            for (int v = 0; v < n; v++)
                x->num[v] = NAN;
        }
        struct dec_axis *x = &rd->ax[a];
        if (code >= x->n || x->txt[code]) {
            rc = dse_err_set(e, DSE_EINPUT, s->path, NULL, "run %lld: damaged axis table (axis %d)", run_id, a);
            break;
        }
        if (!(x->txt[code] = strdup(col_txt(st, 5))))
            rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        x->num[code] = col_num(st, 6);
    }
    if (!rc && step != SQLITE_DONE)
        rc = db_err(s, e, "axes");
    for (int a = 0; a < rd->n_axes && !rc; a++)
        for (int v = 0; v < rd->ax[a].n && !rc; v++)
            if (!rd->ax[a].txt[v])
                rc = dse_err_set(e, DSE_EINPUT, s->path, NULL, "run %lld: axis %s has no value %d", run_id,
                                 rd->ax[a].name, v);
    sqlite3_finalize(st);
    if (rc)
        dec_free(rd);
    else
        *v2 = 1;
    return rc;
}

/* Where each of cols comes from: >= 0 an axis of rd, -1 a metric column (point_metrics); 0 returned when
 * one is neither (the view then answers). */
static int dec_plan(struct store *s, const struct run_dec *rd, const char *const *cols, int n, int *src)
{
    for (int i = 0; i < n; i++) {
        src[i] = -2;
        for (int a = 0; a < rd->n_axes && src[i] == -2; a++)
            if (!strcmp(rd->ax[a].name, cols[i]))
                src[i] = a;
        if (src[i] == -2 && named(s, METRIC_NAMED, cols[i]))
            src[i] = -1;
        if (src[i] == -2)
            return 0;
    }
    return 1;
}

static int dec_code(const struct dec_axis *x, long long point) { return (int)(point / x->stride % x->n); }

/* The run's front (rank 0) as key ranges, ascending: (*keys)[2i] to (*keys)[2i + 1] (malloc'd). */
static int front_ranges(struct store *s, const struct run_dec *rd, long long **keys, long long *n, struct dse_err *e)
{
    sqlite3_stmt *st;
    long long cap = 64;
    *n = 0;
    if (!(*keys = malloc(sizeof **keys * (size_t)cap * 2)))
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    if (sqlite3_prepare_v2(s->db, "SELECT key, last FROM point_ranks WHERE key >= ?1 AND key < ?2 AND rank = 0"
                                  " ORDER BY key", -1, &st, NULL) != SQLITE_OK)
        return db_err(s, e, "ranks");
    sqlite3_bind_int64(st, 1, rd->base);
    sqlite3_bind_int64(st, 2, rd->end);
    int step = SQLITE_DONE, rc = DSE_OK;
    while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
        if (*n == cap) {
            long long *k = realloc(*keys, sizeof **keys * (size_t)(cap *= 2) * 2);
            if (!k) {
                rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
                break;
            }
            *keys = k;
        }
        (*keys)[2 * *n] = sqlite3_column_int64(st, 0);
        (*keys)[2 * (*n)++ + 1] = sqlite3_column_int64(st, 1);
    }
    if (!rc && step != SQLITE_DONE)
        rc = db_err(s, e, "ranks");
    sqlite3_finalize(st);
    return rc;
}

/* Prepares q (freed) with ?1, ?2 the run's key range. */
static int prepare_range(struct store *s, struct sb *q, const struct run_dec *rd, sqlite3_stmt **st, const char *what,
                         struct dse_err *e)
{
    int rc = prepare_run(s, q, rd->base, st, what, e);
    if (!rc)
        sqlite3_bind_int64(*st, 2, rd->end);
    return rc;
}

/* One statement on a run's points, in either schema: v2 (its ?1, ?2 the run's key range) on a run of
 * version 2, else v1 (its ?1 the run's id) on the points table or view. */
static int prepare_for_run(struct store *s, long long run_id, const char *v2, const char *v1, sqlite3_stmt **st,
                           const char *what, struct dse_err *e)
{
    long long base = 0, end = 0;
    int kind, rc = run_range(s, run_id, &base, &end, &kind, e);
    if (rc)
        return rc;
    if (sqlite3_prepare_v2(s->db, kind == 1 ? v2 : v1, -1, st, NULL) != SQLITE_OK)
        return db_err(s, e, what);
    sqlite3_bind_int64(*st, 1, kind == 1 ? base : run_id);
    if (kind == 1)
        sqlite3_bind_int64(*st, 2, end);
    return DSE_OK;
}

static void forget_reasons(struct store *s)
{
    if (s->reasons)
        memset(s->reasons, 0, sizeof *s->reasons * REASON_SLOTS);
}

/* The id of reason text in reasons (added when new), through the cache. */
static int reason_id(struct store *s, const char *text, long long *id, struct dse_err *e)
{
    size_t len = strlen(text);
    unsigned long long h = dse_fnv1a64(text, len);
    struct reason_slot *sl = &s->reasons[h % REASON_SLOTS];
    if (sl->id && sl->hash == h && memcmp(sl->text, text, len + 1) == 0) {
        *id = sl->id;
        return DSE_OK;
    }
    sqlite3_bind_text(s->reason_get, 1, text, (int)len, SQLITE_STATIC);
    int step = sqlite3_step(s->reason_get);
    if (step == SQLITE_ROW)
        *id = sqlite3_column_int64(s->reason_get, 0);
    sqlite3_reset(s->reason_get);
    if (step == SQLITE_DONE) {
        sqlite3_bind_text(s->reason_put, 1, text, (int)len, SQLITE_STATIC);
        step = sqlite3_step(s->reason_put);
        sqlite3_reset(s->reason_put);
        if (step != SQLITE_DONE)
            return db_err(s, e, "insert point");
        *id = sqlite3_last_insert_rowid(s->db);
    } else if (step != SQLITE_ROW) {
        return db_err(s, e, "insert point");
    }
    if (len < REASON_LEN) {
        sl->hash = h;
        sl->id = *id;
        memcpy(sl->text, text, len + 1);
    }
    return DSE_OK;
}

/* Binds held row h as the row at parameter offset off of st: the key as NULL when it is the one SQLite
 * gives (the largest key + 1), so the row is appended without a search. */
static int bind_row(struct store *s, sqlite3_stmt *st, int off, const struct held_row *h, struct dse_err *e)
{
    if (h->key == s->next_auto)
        sqlite3_bind_null(st, off + 1);
    else
        sqlite3_bind_int64(st, off + 1, h->key);
    if (h->key >= s->next_auto)
        s->next_auto = h->key + 1;
    sqlite3_bind_int(st, off + 2, h->feasible);
    if (h->feasible || !h->reason) {
        sqlite3_bind_null(st, off + 3);
    } else {
        long long id = 0;
        int rc = reason_id(s, h->reason, &id, e);
        if (rc)
            return rc;
        sqlite3_bind_int64(st, off + 3, id);
    }
    sqlite3_bind_int64(st, off + 4, h->metrics);
    return DSE_OK;
}

/* A metrics row: its id is always the next one, so it is bound as NULL (appended). */
static void bind_metrics(struct store *s, sqlite3_stmt *st, int off, const struct held_metrics *h)
{
    sqlite3_bind_null(st, off + 1);
    for (int i = 0; i < s->n_cols; i++) {
        if (isfinite(h->v[i]))
            sqlite3_bind_double(st, off + 2 + i, h->v[i]);
        else
            sqlite3_bind_null(st, off + 2 + i);
    }
}

/* Steps an insert whose last row has key last: SQLite must have given it that key. */
static int step(struct store *s, sqlite3_stmt *st, long long last, struct dse_err *e)
{
    int ok = sqlite3_step(st) == SQLITE_DONE;
    sqlite3_reset(st);
    if (!ok)
        return db_err(s, e, "insert point");
    if (sqlite3_last_insert_rowid(s->db) != last)
        return dse_err_set(e, DSE_ERUNTIME, s->path, NULL, "internal error: key %lld stored as %lld", last,
                           (long long)sqlite3_last_insert_rowid(s->db));
    return DSE_OK;
}

static int flush_metrics(struct store *s, struct dse_err *e)
{
    int rc = DSE_OK;
    if (s->n_hm == INSERT_ROWS) {
        for (int r = 0; r < INSERT_ROWS; r++)
            bind_metrics(s, s->mins_many, r * (1 + s->n_cols), &s->hm[r]);
        rc = step(s, s->mins_many, s->hm[INSERT_ROWS - 1].id, e);
    } else {
        for (int r = 0; r < s->n_hm && !rc; r++) {
            bind_metrics(s, s->mins, 0, &s->hm[r]);
            rc = step(s, s->mins, s->hm[r].id, e);
        }
    }
    s->n_hm = 0;
    return rc;
}

/* The held rows into the tables: one multi-row INSERT when full, else one INSERT each. */
static int flush_held(struct store *s, struct dse_err *e)
{
    int rc = s->n_hm ? flush_metrics(s, e) : DSE_OK;
    if (!rc && s->n_held == INSERT_ROWS) {
        for (int r = 0; r < INSERT_ROWS && !rc; r++)
            rc = bind_row(s, s->ins_many, r * 4, &s->held[r], e);
        if (!rc)
            rc = step(s, s->ins_many, s->held[INSERT_ROWS - 1].key, e);
    } else {
        for (int r = 0; r < s->n_held && !rc; r++)
            if (!(rc = bind_row(s, s->ins, 0, &s->held[r], e)))
                rc = step(s, s->ins, s->held[r].key, e);
    }
    s->n_held = 0;
    if (rc) /* what the transaction holds is no longer known: the reasons' ids are read again */
        forget_reasons(s);
    return rc;
}

/* A write transaction at once (BEGIN IMMEDIATE): no other writer between it and reading the tables'
 * largest keys, which the next rows' keys are given from. */
int store_tx_begin(struct store *s, struct dse_err *e)
{
    int rc = exec(s, "BEGIN IMMEDIATE", e);
    if (!rc && (query_int(s, "SELECT coalesce(max(key), 0) + 1 FROM point_rows", &s->next_auto) != SQLITE_OK ||
                query_int(s, "SELECT coalesce(max(id), 0) + 1 FROM point_metrics", &s->next_mid) != SQLITE_OK))
        rc = db_err(s, e, "insert point");
    s->have_last = 0;
    return rc;
}

int store_tx_commit(struct store *s, struct dse_err *e)
{
    int rc = s->n_held || s->n_hm ? flush_held(s, e) : DSE_OK;
    if (!rc)
        rc = exec(s, "COMMIT", e);
    if (rc) /* the transaction may be rolled back: its reasons' ids with it */
        forget_reasons(s);
    return rc;
}

/* A point's stored metrics go to point_metrics once for a run of points that have the same ones (the
 * memory sizes of one design, which change only feasibility: 50 points a row in the benchmark); the
 * point's row names them by id. Equal means the same bits. */
int store_insert(struct store *s, long long run_id, long long point, const double *metrics, int feasible,
                 const char *reason, struct dse_err *e)
{
    int rc = s->kb_run == run_id ? DSE_OK : run_keys(s, run_id, e);
    if (rc)
        return rc;
    if (point < 0 || point >= s->kb_end - s->kb_base)
        return dse_err_set(e, DSE_ERUNTIME, s->path, NULL, "internal error: point %lld outside run %lld's space",
                           point, run_id);
    double v[MAX_COLS];
    for (int i = 0; i < s->n_cols; i++)
        v[i] = metrics[s->col_metric[i]];
    if (!s->have_last || memcmp(v, s->last_m, sizeof *v * (size_t)s->n_cols)) {
        struct held_metrics *m = &s->hm[s->n_hm++];
        m->id = s->last_mid = s->next_mid++;
        memcpy(m->v, v, sizeof *v * (size_t)s->n_cols);
        memcpy(s->last_m, v, sizeof *v * (size_t)s->n_cols);
        s->have_last = 1;
        if (s->n_hm == INSERT_ROWS && (rc = flush_metrics(s, e)))
            return rc;
    }
    struct held_row *h = &s->held[s->n_held++];
    h->key = s->kb_base + point;
    h->metrics = s->last_mid;
    h->feasible = feasible;
    h->reason = reason;
    return s->n_held == INSERT_ROWS ? flush_held(s, e) : DSE_OK;
}

int store_load(struct store *s, long long run_id, const char *const *cols, int n_cols,
               void (*fn)(void *ctx, long long point, int feasible, const char *reason, const double *values),
               void *ctx, struct dse_err *e)
{
    struct sb q = {0};
    struct run_dec rd;
    sqlite3_stmt *st;
    int v2, src[STORE_MAX_COLS], r;
    if (n_cols > STORE_MAX_COLS)
        return dse_err_set(e, DSE_ERUNTIME, s->path, NULL, "too many columns");
    if ((r = dec_load(s, run_id, &rd, &v2, e)))
        return r;
    int fast = v2 && dec_plan(s, &rd, cols, n_cols, src);
    for (int i = 0; fast && i < n_cols; i++)
        fast = src[i] == -1;
    if (fast) {
        sb_add(&q, "SELECT d.key - ?1, d.feasible, rs.text");
        add_cols(&q, cols, n_cols, ", m.", "");
        sb_add(&q, " FROM point_rows d JOIN point_metrics m ON m.id = d.metrics LEFT JOIN reasons rs ON rs.id ="
                   " d.reason WHERE d.key >= ?1 AND d.key < ?2 ORDER BY d.key");
        r = prepare_range(s, &q, &rd, &st, "load points", e);
    } else {
        sb_add(&q, "SELECT point, feasible, reason");
        add_cols(&q, cols, n_cols, ", ", "");
        sb_add(&q, " FROM points WHERE run_id = ?1 ORDER BY point");
        r = prepare_run(s, &q, run_id, &st, "load points", e);
    }
    dec_free(&rd);
    if (r != DSE_OK)
        return r;
    double v[STORE_MAX_COLS];
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        for (int i = 0; i < n_cols; i++)
            v[i] = col_num(st, 3 + i);
        fn(ctx, sqlite3_column_int64(st, 0), sqlite3_column_int(st, 1), (const char *)sqlite3_column_text(st, 2), v);
    }
    sqlite3_finalize(st);
    return r == SQLITE_DONE ? DSE_OK : db_err(s, e, "load points");
}

struct ranked {
    long long key;
    int rank;
    long long last;
};

static int by_key(const void *a, const void *b)
{
    long long x = ((const struct ranked *)a)->key, y = ((const struct ranked *)b)->key;
    return (x > y) - (x < y);
}

#define RANK_ROWS 64

/* The run's ranks replace any it had (a run whose ranking failed is ranked again by --resume). A row of
 * point_ranks gives a rank to the feasible points of a key range: with complete (points holds every
 * feasible point of the run), the neighbours in key order that have the same rank share one row (the
 * feasible memory sizes of a design, 40 in the benchmark); else each point has its own. RANK_ROWS
 * rows to an INSERT. */
int store_set_ranks(struct store *s, long long run_id, const long long *points, const int *rank, long long n,
                    int complete, struct dse_err *e)
{
    sqlite3_stmt *del = NULL, *many = NULL, *one = NULL;
    long long m = 0;
    int rc = run_keys(s, run_id, e);
    if (rc)
        return rc;
    struct ranked *rk = malloc(sizeof *rk * (size_t)(n > 0 ? n : 1));
    if (!rk)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    for (long long i = 0; i < n; i++)
        if (rank[i] >= 0 || complete) /* an unranked point (-1) ends a range */
            rk[m++] = (struct ranked){s->kb_base + points[i], rank[i], s->kb_base + points[i]};
    qsort(rk, (size_t)m, sizeof *rk, by_key);
    long long w = 0; /* ranges, in place */
    for (long long i = 0; i < m; i++) {
        if (rk[i].rank < 0)
            continue;
        if (complete && w > 0 && rk[w - 1].rank == rk[i].rank && i > 0 && rk[i - 1].rank == rk[i].rank)
            rk[w - 1].last = rk[i].key;
        else
            rk[w++] = rk[i];
    }
    m = w;
    char sql[RANK_ROWS * 12 + 64];
    size_t k = (size_t)snprintf(sql, sizeof sql, "INSERT INTO point_ranks (key, last, rank) VALUES (?, ?, ?)");
    for (int r = 1; r < RANK_ROWS; r++)
        k += (size_t)snprintf(sql + k, sizeof sql - k, ", (?, ?, ?)");
    if ((rc = exec(s, "BEGIN", e)))
        goto out;
    if (sqlite3_prepare_v2(s->db, "DELETE FROM point_ranks WHERE key >= ?1 AND key < ?2", -1, &del, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(s->db, sql, -1, &many, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(s->db, "INSERT INTO point_ranks (key, last, rank) VALUES (?, ?, ?)", -1, &one, NULL) !=
            SQLITE_OK) {
        rc = db_err(s, e, "ranks");
        goto out;
    }
    sqlite3_bind_int64(del, 1, s->kb_base);
    sqlite3_bind_int64(del, 2, s->kb_end);
    if (sqlite3_step(del) != SQLITE_DONE)
        rc = db_err(s, e, "ranks");
    for (long long i = 0; i < m && !rc;) {
        sqlite3_stmt *st = m - i >= RANK_ROWS ? many : one;
        int rows = st == many ? RANK_ROWS : 1;
        for (int r = 0; r < rows; r++) {
            sqlite3_bind_int64(st, 3 * r + 1, rk[i + r].key);
            sqlite3_bind_int64(st, 3 * r + 2, rk[i + r].last);
            sqlite3_bind_int(st, 3 * r + 3, rk[i + r].rank);
        }
        if (sqlite3_step(st) != SQLITE_DONE)
            rc = db_err(s, e, "ranks");
        sqlite3_reset(st);
        i += rows;
    }
    if (!rc)
        rc = exec(s, "COMMIT", e);
out:
    if (rc)
        rollback(s);
    sqlite3_finalize(del);
    sqlite3_finalize(many);
    sqlite3_finalize(one);
    free(rk);
    return rc;
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

/* A WAL database is read through a -shm file beside it, which a read-only connection creates when the
 * folder lets it. In a folder it may not write (a read-only mount, another user's results) and with no
 * -wal file, the database file is all there is: it is opened immutable (no -shm, no locks), which is
 * exact because nothing can be writing it there. With a -wal file but no -shm, its committed rows
 * cannot be read without one: refused, saying how to read them. */
static int open_read_only(struct store *s, const char *path, struct dse_err *e)
{
    if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
        return dse_err_set(e, DSE_ERUNTIME, path, NULL, "cannot open database: %s",
                           s->db ? sqlite3_errmsg(s->db) : "out of memory");
    long long probe;
    int q = query_int(s, "PRAGMA schema_version", &probe) & 0xff;
    if (q != SQLITE_CANTOPEN && q != SQLITE_READONLY)
        return DSE_OK; /* read, or failed for a reason identify() words better */
    char dir[DSE_PATH_LEN], side[DSE_PATH_LEN + 8];
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) + (slash == path) : 1, slash ? path : ".");
    struct stat st;
    snprintf(side, sizeof side, "%s-wal", path);
    int wal = stat(side, &st) == 0 && st.st_size > 0;
    snprintf(side, sizeof side, "%s-shm", path);
    int shm = stat(side, &st) == 0;
    if (access(dir, W_OK) == 0 || shm) /* not the read-only folder case: SQLite's own answer stands */
        return DSE_OK;
    if (wal)
        return dse_err_set(e, DSE_EINPUT, path, NULL, "cannot be read here: its write-ahead log (%s-wal) holds rows "
                           "that need a -shm file beside it, and folder %s is not writable; copy the database and its "
                           "-wal file to a writable folder", path, dir);
    struct sb uri = {0}; /* file:PATH?immutable=1, with the characters a URI gives meaning to escaped */
    sb_add(&uri, "file:");
    for (const char *c = path; *c; c++)
        if (*c == '%' || *c == '?' || *c == '#')
            sb_add(&uri, "%%%02X", (unsigned char)*c);
        else
            sb_put(&uri, c, 1);
    sb_add(&uri, "?immutable=1");
    sqlite3_close(s->db);
    s->db = NULL;
    int ok = !uri.oom && sqlite3_open_v2(sb_str(&uri), &s->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI |
                                                                 SQLITE_OPEN_NOMUTEX, NULL) == SQLITE_OK;
    free(uri.s);
    if (!ok)
        return dse_err_set(e, DSE_ERUNTIME, path, NULL, "cannot open database: %s",
                           s->db ? sqlite3_errmsg(s->db) : "out of memory");
    return DSE_OK;
}

int store_open_read(const char *path, struct store **out, struct dse_err *e)
{
    struct stat sb;
    int rc, kind = 0;
    *out = NULL;
    if ((rc = dse_path_check(path, NULL, e)))
        return rc;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) /* never created by a reader */
        return dse_err_set(e, DSE_EINPUT, path, NULL, "no such database");
    struct store *s = calloc(1, sizeof *s);
    if (!s)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    dse_strlcpy(s->path, path, sizeof s->path);
    if ((rc = open_read_only(s, path, e)))
        goto fail;
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

int store_count(struct store *s, const struct store_run *run, long long *n, long long *feasible, long long *pareto,
                struct dse_err *e)
{
    sqlite3_stmt *st;
    long long run_id = run->id;
    int rc = prepare_for_run(s, run_id,
                             "SELECT count(*), total(feasible = 1), (SELECT total((SELECT count(*) FROM point_rows f"
                             " WHERE f.key BETWEEN k.key AND k.last AND f.feasible = 1)) FROM point_ranks k WHERE"
                             " k.key >= ?1 AND k.key < ?2 AND k.rank = 0) FROM point_rows WHERE key >= ?1 AND key < ?2",
                             "SELECT count(*), total(feasible = 1), total(pareto = 1) FROM points WHERE run_id = ?1",
                             &st, "count points", e);
    if (rc)
        return rc;
    int ok = sqlite3_step(st) == SQLITE_ROW;
    if (ok) {
        *n = sqlite3_column_int64(st, 0);
        *feasible = (long long)sqlite3_column_double(st, 1);
        *pareto = (long long)sqlite3_column_double(st, 2);
    }
    sqlite3_finalize(st);
    if (!ok)
        return db_err(s, e, "count points");
    const char *why = run->points_total < 1                           ? "plans fewer than one point"
                      : *n > run->points_total                        ? "holds more points than it planned"
                      : *feasible > *n || *pareto > *feasible          ? "counts more front or feasible points than points"
                      : isfinite(run->hypervolume) && *pareto == 0     ? "has a hypervolume but no front point"
                      : run->status && !strcmp(run->status, "complete") && *feasible > 0 && *pareto == 0
                          ? "is complete with feasible points but no front"
                          : NULL;
    if (why)
        return dse_err_set(e, DSE_EINPUT, s->path, "runs", "a damaged dse database: run %lld %s (%lld planned, %lld "
                           "stored, %lld feasible, %lld on the front): its rows and its runs entry disagree", run_id,
                           why, run->points_total, *n, *feasible, *pareto);
    return DSE_OK;
}

int store_reasons(struct store *s, long long run_id, void (*fn)(void *ctx, const char *reason, long long n), void *ctx,
                  struct dse_err *e)
{
    sqlite3_stmt *st;
    /* grouped by SQLite first: far fewer texts than points reach the caller */
    int rc = prepare_for_run(s, run_id,
                             "SELECT coalesce(rs.text, ''), count(*) FROM point_rows d LEFT JOIN reasons rs ON rs.id ="
                             " d.reason WHERE d.key >= ?1 AND d.key < ?2 AND d.feasible = 0 GROUP BY d.reason"
                             " ORDER BY min(d.key)",
                             "SELECT coalesce(reason, ''), count(*) FROM points WHERE run_id = ?1 AND feasible = 0"
                             " GROUP BY reason ORDER BY min(point)",
                             &st, "reasons", e);
    if (rc)
        return rc;
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW)
        fn(ctx, (const char *)sqlite3_column_text(st, 0), sqlite3_column_int64(st, 1));
    sqlite3_finalize(st);
    return step == SQLITE_DONE ? DSE_OK : db_err(s, e, "reasons");
}

/* store_scan_feasible of a version-2 run whose columns rd answers (src: dec_plan's). */
static int scan_v2(struct store *s, const struct run_dec *rd, const char *const *num, int n_num, const int *src,
                   int all_num, const char *const *txt, int n_txt,
                   void (*fn)(void *ctx, long long point, int pareto, const double *num, const char *const *txt),
                   void *ctx, struct dse_err *e)
{
    struct sb q = {0};
    sqlite3_stmt *st;
    long long *front = NULL, n_front = 0, f = 0;
    int rc = front_ranges(s, rd, &front, &n_front, e);
    if (rc) {
        free(front);
        return rc;
    }
    sb_add(&q, "SELECT d.key");
    for (int i = 0; i < n_num + n_txt; i++)
        if (src[i] == -1)
            add_cols(&q, i < n_num ? num + i : txt + i - n_num, 1, ", m.", "");
    sb_add(&q, " FROM point_rows d JOIN point_metrics m ON m.id = d.metrics WHERE d.key >= ?1 AND d.key < ?2 AND"
               " d.feasible = 1");
    for (int i = 0; all_num && i < n_num; i++)
        if (src[i] == -1)
            add_cols(&q, num + i, 1, " AND m.", " IS NOT NULL");
    sb_add(&q, " ORDER BY d.key");
    if ((rc = prepare_range(s, &q, rd, &st, "read points", e))) {
        free(front);
        return rc;
    }
    double v[STORE_MAX_COLS];
    const char *t[STORE_MAX_COLS];
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        long long key = sqlite3_column_int64(st, 0), point = key - rd->base;
        for (int i = 0, c = 1; i < n_num + n_txt; i++) {
            const struct dec_axis *x = src[i] >= 0 ? &rd->ax[src[i]] : NULL;
            if (i < n_num)
                v[i] = x ? x->num[dec_code(x, point)] : col_num(st, c);
            else
                t[i - n_num] = x ? x->txt[dec_code(x, point)] : col_txt(st, c);
            c += !x;
        }
        while (f < n_front && front[2 * f + 1] < key)
            f++;
        fn(ctx, point, f < n_front && front[2 * f] <= key, v, t);
    }
    sqlite3_finalize(st);
    free(front);
    return step == SQLITE_DONE ? DSE_OK : db_err(s, e, "read points");
}

int store_scan_feasible(struct store *s, long long run_id, const char *const *num, int n_num, int all_num,
                        const char *const *txt, int n_txt,
                        void (*fn)(void *ctx, long long point, int pareto, const double *num, const char *const *txt),
                        void *ctx, struct dse_err *e)
{
    if (n_num + n_txt > STORE_MAX_COLS)
        return dse_err_set(e, DSE_ERUNTIME, s->path, NULL, "too many columns");
    struct run_dec rd;
    int v2, src[128], step = dec_load(s, run_id, &rd, &v2, e);
    if (step)
        return step;
    if (v2 && dec_plan(s, &rd, num, n_num, src) && dec_plan(s, &rd, txt, n_txt, src + n_num)) {
        step = scan_v2(s, &rd, num, n_num, src, all_num, txt, n_txt, fn, ctx, e);
        dec_free(&rd);
        return step;
    }
    dec_free(&rd);
    struct sb q = {0};
    sqlite3_stmt *st;
    sb_add(&q, "SELECT point, pareto");
    add_cols(&q, num, n_num, ", ", "");
    add_cols(&q, txt, n_txt, ", CAST(", " AS TEXT)");
    sb_add(&q, " FROM points WHERE run_id = ?1 AND feasible = 1");
    add_cols(&q, num, all_num ? n_num : 0, " AND ", " IS NOT NULL");
    sb_add(&q, " ORDER BY point");
    step = prepare_run(s, &q, run_id, &st, "read points", e);
    if (step != DSE_OK)
        return step;
    double v[STORE_MAX_COLS];
    const char *t[STORE_MAX_COLS];
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
    /* one pass: sum(1 AND a IS NOT NULL AND ...) counts the rows with every value, count(a) those with a;
     * in a version-2 run an axis always has a value */
    struct run_dec rd;
    struct sb q = {0};
    sqlite3_stmt *st;
    int v2, src[STORE_MAX_COLS], rc;
    if (n_cols > STORE_MAX_COLS)
        return dse_err_set(e, DSE_ERUNTIME, s->path, NULL, "too many columns");
    if ((rc = dec_load(s, run_id, &rd, &v2, e)))
        return rc;
    int fast = v2 && dec_plan(s, &rd, cols, n_cols, src);
    sb_add(&q, "SELECT coalesce(sum(1");
    const char *p = fast ? "m." : "";
    for (int i = 0; i < n_cols; i++)
        if (!fast || src[i] == -1)
            add_cols(&q, cols + i, 1, fast ? " AND m." : " AND ", " IS NOT NULL");
    sb_add(&q, "), 0)");
    for (int i = 0; present && i < n_cols; i++) {
        if (!fast || src[i] == -1) {
            sb_add(&q, ", count(%s", p);
            add_cols(&q, cols + i, 1, "", ")");
        } else {
            sb_add(&q, ", count(*)");
        }
    }
    if (fast) {
        sb_add(&q, " FROM point_rows d JOIN point_metrics m ON m.id = d.metrics WHERE d.key >= ?1 AND d.key < ?2"
                   " AND d.feasible = 1");
        rc = prepare_range(s, &q, &rd, &st, "count points", e);
    } else {
        sb_add(&q, " FROM points WHERE run_id = ?1 AND feasible = 1");
        rc = prepare_run(s, &q, run_id, &st, "count points", e);
    }
    dec_free(&rd);
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
