/* serve_sim.c -- the event-driven, iteration-level serving simulation (serve.h, docs/serving.md).
 *
 * Time advances one scheduler iteration at a time; an iteration's length is serve_iter_s of the
 * tokens it runs. The KV cache is paged (cfg.block_tokens a block; static batching reserves each
 * batch's padded length whole): a sequence holds ceil(cached tokens / block) blocks, a prefill is
 * admitted only when its blocks (and the first decode token's) are free, and when a decode step finds
 * too few blocks the most recently admitted sequences are preempted (vLLM's recompute: their blocks
 * freed, the prompt and the tokens generated so far prefilled again later, which then emits their next
 * token). Arrivals are dealt round-robin to the replicas (dp), each simulated on its own.
 *
 * Per request: TTFT = first token - arrival, TPOT = (last token - first token) / (output - 1) (requests
 * of one output token have none), end-to-end = last token - arrival. Percentiles are nearest-rank.
 *
 * The clock is relative: a replica's time t counts from its epoch t0, the arrival that opened its busy
 * period (re-based each time the replica is empty), and a request's times count from its own arrival
 * (d: its arrival - t0). An absolute clock in a double absorbs an iteration's milliseconds once the
 * arrivals reach some 1e13 s (rate 1e-13): a busy period's length, not the arrivals' magnitude, now
 * bounds the rounding. A decode pool's requests (disaggregation) arrive at their original arrival plus
 * an offset (their TTFT and the cache's transfer), kept in two parts for the same reason.
 *
 * The KV blocks: free_blocks changes only through kv_take and kv_give, which check 0 <= free <= total
 * at every change; a breach is reported as an internal error, never clamped. The shared prefix's cached
 * blocks are evictable (vLLM counts cached blocks no sequence references as free and evicts them when
 * it allocates): when a sequence that does not use the prefix needs blocks that are not free and no
 * running sequence uses it, its blocks are freed and the next carrier computes it again. */
#include "serve.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const serve_sched_names[SCHED_COUNT + 1] = {"static", "continuous", "chunked", "inflight", NULL};
const char *const serve_preempt_names[PREEMPT_COUNT + 1] = {"recompute", "swap", NULL};
const char *const serve_admit_names[ADMIT_COUNT + 1] = {"default", "on-demand", "reserve", NULL};
const char *const serve_too_long_names[TOO_LONG_COUNT + 1] = {"error", "skip", "truncate", NULL};

struct rs {                /* a request's state */
    double t_first, t_done; /* since its arrival */
    double d;              /* its arrival (the base part) - the replica's epoch, set when it arrives */
    int64_t pre_total;     /* tokens its current prefill covers (prompt + tokens generated before a preemption) */
    int64_t pre_done;      /* of them, prefilled */
    int64_t ctx;           /* tokens in its KV cache */
    int64_t blocks;        /* its own; the shared prefix's blocks are the cache's */
    int64_t shared;        /* of ctx, tokens in the shared prefix's blocks */
    int32_t gen;           /* tokens generated */
    int decoding;          /* 0 prefilling, 1 decoding, 2 admitted with its cache resident: decodes from the
                              next iteration */
    int resident;          /* waiting with its KV cache computed: swapped out, or sent by a prefill replica */
    int swapped;           /* of those, in host memory: copied back on admission */
};

struct sim {
    const struct serve_cost *c;
    const struct serve_cfg *cfg;
    const struct serve_req *req;
    const int64_t *ids; /* this replica's requests, in arrival order */
    const double *off;  /* req[i] arrives at req[i].arrival_s + off[i] (NULL: + 0) */
    const int64_t *gid; /* req[i] is request gid[i] of the trace (NULL: i), for the prefix's carriers */
    int64_t n;
    struct rs *st;
    int64_t *wait, wh, wn; /* the waiting queue: a ring of indices into ids */
    int64_t *run, nrun;    /* running, in admission order */
    int64_t free_blocks, total_blocks;
    int64_t dec_reserved; /* of the free blocks, those this iteration's decode tokens will take (reserve_decode) */
    double t0, t;       /* the epoch (an arrival, absolute) and the time since it */
    double ref;         /* the trace's first arrival: the origin of what the run reports */
    double energy_J, kv_area;
    int64_t preemptions, iterations, dec_iters, dec_seqs, done;
    int64_t done_base, n_all; /* for the progress hook: requests of the replicas run before, of all */
    double kv_peak, swap_bytes; /* swap_bytes: copied to or from the host since the last iteration */
    int64_t prefix_cached;      /* tokens of the shared prefix in cached blocks (0: not yet computed) */
    int64_t stuck;              /* a request that can never be scheduled (its index + 1), 0: none */
    int multi_left;             /* decode steps of the current multi-step run still to go (cfg sched_steps) */
    int64_t evictions;          /* of the cached prefix */
    int64_t overdrawn, overdrawn_free; /* the iteration + 1 at which the blocks were first over-committed, and
                                          the free count then (0: never) */
    struct serve_result *res;
};

void serve_cfg_defaults(struct serve_cfg *cfg, int64_t longest)
{
    if (cfg->admit == ADMIT_DEFAULT)
        cfg->admit = cfg->sched == SCHED_INFLIGHT ? ADMIT_RESERVE : ADMIT_ON_DEMAND;
    if (!cfg->max_batch)
        cfg->max_batch = 256;
    if (!cfg->block_tokens)
        cfg->block_tokens = cfg->sched == SCHED_STATIC ? 1 : 16;
    if (!cfg->max_batched_tokens)
        cfg->max_batched_tokens = cfg->sched == SCHED_CHUNKED ? 2048
                                  : cfg->sched == SCHED_STATIC ? longest * cfg->max_batch
                                  : longest > 8192 ? longest : 8192;
}

int64_t serve_grid_tokens(const struct serve_cfg *cfg)
{
    return cfg->max_batched_tokens < 65536 ? cfg->max_batched_tokens : 65536;
}

static int64_t blocks_for(const struct sim *s, int64_t tokens)
{
    int64_t b = s->cfg->block_tokens;
    return (tokens + b - 1) / b;
}

/* The blocks request k must hold to cache `tokens`: those, or with reservation its whole length, less
 * what the shared prefix's blocks hold for it. */
static int64_t blocks_held(const struct sim *s, int64_t k, int64_t tokens)
{
    const struct serve_req *q = &s->req[s->ids[k]];
    int64_t whole = (int64_t)q->prompt + q->output;
    return blocks_for(s, (s->cfg->admit == ADMIT_RESERVE && whole > tokens ? whole : tokens) - s->st[k].shared);
}

/* Prefix caching: whether request k carries the shared prefix (a share of them, spread evenly by its
 * index: the golden ratio's multiples mod 1), and the whole-block part of it (at least one prompt
 * token is always computed). */
int serve_carries_prefix(const struct serve_cfg *cfg, int64_t i)
{
    if (cfg->prefix_tokens <= 0)
        return 0;
    double x = (double)i * 0.6180339887498949;
    return !(cfg->prefix_share > 0 && x - floor(x) >= cfg->prefix_share);
}

int serve_prefix_check(const struct serve_cfg *cfg, const struct serve_req *req, int64_t n, const char *file,
                       const char *path, struct dse_err *e)
{
    int64_t bad = -1, shortest = 0;
    for (int64_t i = 0; i < n; i++)
        if (serve_carries_prefix(cfg, i)) {
            if (bad < 0 && req[i].prompt <= cfg->prefix_tokens)
                bad = i;
            if (!shortest || req[i].prompt < shortest)
                shortest = req[i].prompt;
        }
    if (bad < 0)
        return DSE_OK;
    return dse_err_set(e, DSE_EINPUT, file, path,
                       "a shared prefix of %lld tokens is not shorter than request %lld's prompt of %d tokens: the "
                       "prefix is part of every prompt that carries it, which computes at least its last token (at "
                       "most %lld here, the shortest such prompt less one)", (long long)cfg->prefix_tokens,
                       (long long)bad + 1, req[bad].prompt, (long long)shortest - 1);
}

static int64_t prefix_of(const struct sim *s, int64_t k)
{
    const struct serve_cfg *c = s->cfg;
    int64_t i = s->ids[k];
    if (!serve_carries_prefix(c, s->gid ? s->gid[i] : i))
        return 0;
    return c->prefix_tokens / c->block_tokens * c->block_tokens; /* shorter than the prompt (serve_prefix_check) */
}

/* Every change of the free blocks, checked (the invariant the simulation must keep). */
static void kv_check(struct sim *s)
{
    if ((s->free_blocks < 0 || s->free_blocks > s->total_blocks) && !s->overdrawn) {
        s->overdrawn = s->iterations + 1;
        s->overdrawn_free = s->free_blocks;
    }
}
static void kv_take(struct sim *s, int64_t b)
{
    s->free_blocks -= b;
    kv_check(s);
}
static void kv_give(struct sim *s, int64_t b)
{
    s->free_blocks += b;
    kv_check(s);
}

/* Whether a running sequence uses the cached prefix's blocks. */
static int prefix_in_use(const struct sim *s)
{
    for (int64_t i = 0; i < s->nrun; i++)
        if (s->st[s->run[i]].shared > 0)
            return 1;
    return 0;
}

/* Frees the cached prefix's blocks when no running sequence uses them. Returns 1 when it did. */
static int evict_prefix(struct sim *s)
{
    if (!s->prefix_cached || prefix_in_use(s))
        return 0;
    kv_give(s, s->prefix_cached / s->cfg->block_tokens);
    s->prefix_cached = 0;
    s->evictions++;
    return 1;
}

/* A fresh prefill of request k begins: with the prefix cached, it starts after it. */
static void prefill_begins(struct sim *s, int64_t k)
{
    struct rs *q = &s->st[k];
    int64_t p = prefix_of(s, k);
    if (p > 0 && s->prefix_cached >= p && q->pre_done < p) {
        q->shared = q->pre_done = q->ctx = p;
    }
}

/* Request k's prefill completed: the first to compute the prefix leaves its blocks to the cache. */
static void prefill_done(struct sim *s, int64_t k)
{
    struct rs *q = &s->st[k];
    int64_t p = prefix_of(s, k);
    if (p > 0 && !s->prefix_cached && !q->shared) {
        s->prefix_cached = p;
        q->shared = p;
        q->blocks -= p / s->cfg->block_tokens; /* now the cache's, never freed */
    }
}

static void wait_push_back(struct sim *s, int64_t k) { s->wait[(s->wh + s->wn++) % s->n] = k; }
static void wait_push_front(struct sim *s, int64_t k)
{
    s->wh = (s->wh + s->n - 1) % s->n;
    s->wait[s->wh] = k;
    s->wn++;
}
static int64_t wait_pop(struct sim *s)
{
    int64_t k = s->wait[s->wh];
    s->wh = (s->wh + 1) % s->n;
    s->wn--;
    return k;
}

static double kv_used(const struct sim *s)
{
    return s->total_blocks ? (double)(s->total_blocks - s->free_blocks) / (double)s->total_blocks : 0;
}

/* After an iteration (its tokens' blocks appended): the peak KV use, and a timeline sample. */
static void sample(struct sim *s)
{
    double use = kv_used(s);
    if (use > s->kv_peak)
        s->kv_peak = use;
    struct serve_result *r = s->res;
    int cap = s->cfg->timeline;
    if (!r || !cap || !r->timeline)
        return;
    if (r->n_timeline == cap) { /* full: keep every other sample (the stride doubles) */
        for (int i = 0; i < cap / 2; i++)
            r->timeline[i] = r->timeline[2 * i];
        r->n_timeline = cap / 2;
    }
    r->timeline[r->n_timeline++] = (struct serve_sample){(s->t0 - s->ref) + s->t, use, (int)s->nrun};
}

/* One iteration of dt (and the swaps it waited for): the clock, energy, KV use. */
static void advance(struct sim *s, double dt, double J)
{
    if (s->swap_bytes > 0) { /* the runtime swaps before the iteration runs */
        dt += s->swap_bytes / s->c->swap_Bps;
        s->swap_bytes = 0;
    }
    double used = kv_used(s);
    s->kv_area += used * dt;
    if (used > s->kv_peak)
        s->kv_peak = used;
    s->t += dt;
    s->energy_J += J;
    s->iterations++;
    if (s->cfg->progress && !(s->iterations & 4095))
        s->cfg->progress(s->cfg->progress_ctx, s->done_base + s->done, s->n_all);
}

static void finish(struct sim *s, int64_t k)
{
    struct rs *q = &s->st[k];
    q->t_done = s->t - q->d;
    kv_give(s, q->blocks);
    q->blocks = 0;
    s->done++;
}

/* A token emitted for request k at the end of the iteration: its first, or its last. Returns 1 when
 * it is done. */
static int emit(struct sim *s, int64_t k)
{
    struct rs *q = &s->st[k];
    if (!q->gen++)
        q->t_first = s->t - q->d;
    if (q->gen >= s->req[s->ids[k]].output) {
        finish(s, k);
        return 1;
    }
    return 0;
}

static void preempt(struct sim *s, int64_t k)
{
    struct rs *q = &s->st[k];
    kv_give(s, q->blocks);
    q->blocks = 0;
    s->preemptions++;
    if (s->cfg->preempt == PREEMPT_SWAP && q->decoding) { /* its cache to the host, kept */
        s->swap_bytes += (double)q->ctx * s->c->kv_token_bytes;
        q->resident = q->swapped = 1;
        q->decoding = 0;
    } else { /* recompute: prefilled again over the prompt and what it generated (after the prefix, if that is
                still cached when it is admitted again: prefill_begins) */
        q->ctx = q->pre_done = q->shared = 0;
        q->pre_total = s->req[s->ids[k]].prompt + q->gen;
        q->decoding = q->resident = q->swapped = 0;
    }
    wait_push_front(s, k);
}

/* Admits waiting request k whose cache is resident: blocks for it and the next token, a swapped one's
 * copied back. It decodes from the next iteration (decoding 2). Returns -1 when the blocks are not free. */
static int admit_resident(struct sim *s, int64_t k)
{
    struct rs *q = &s->st[k];
    if (q->shared > s->prefix_cached) /* swapped out with the prefix, since evicted: it holds all its blocks */
        q->shared = 0;
    int64_t need = blocks_held(s, k, q->ctx + 1);
    if (need > s->free_blocks - s->dec_reserved && !q->shared)
        evict_prefix(s);
    if (need > s->free_blocks - s->dec_reserved)
        return -1;
    kv_take(s, need);
    q->blocks = need;
    if (q->swapped)
        s->swap_bytes += (double)q->ctx * s->c->kv_token_bytes;
    q->resident = q->swapped = 0;
    q->decoding = 2;
    wait_pop(s);
    s->run[s->nrun++] = k;
    return 0;
}

/* The decoding sequences' blocks for their next token, preempting from the back of the running list
 * until they fit; they are kept (dec_reserved) from the prefill chunks that share the iteration, and
 * taken when the tokens are appended. Returns the decoding sequences left. */
static int64_t reserve_decode(struct sim *s)
{
    for (;;) {
        int64_t need = 0, ndec = 0;
        for (int64_t i = 0; i < s->nrun; i++) {
            const struct rs *q = &s->st[s->run[i]];
            if (q->decoding == 1) {
                ndec++;
                int64_t d = blocks_for(s, q->ctx + 1 - q->shared) - q->blocks;
                need += d > 0 ? d : 0;
            }
        }
        if (need <= s->free_blocks) {
            s->dec_reserved = need;
            return ndec;
        }
        if (evict_prefix(s))
            continue;
        if (s->nrun <= 1) { /* cannot happen (one sequence fits the cache: serve_run); kv_take reports it */
            s->dec_reserved = s->free_blocks;
            return ndec;
        }
        preempt(s, s->run[--s->nrun]);
    }
}

/* Request k's arrival, since the epoch. */
static double arrival_at(const struct sim *s, int64_t k)
{
    int64_t i = s->ids[k];
    return (s->req[i].arrival_s - s->t0) + (s->off ? s->off[i] : 0);
}

static void arrivals(struct sim *s, int64_t *ai)
{
    while (*ai < s->n && arrival_at(s, *ai) <= s->t) {
        s->st[*ai].d = s->req[s->ids[*ai]].arrival_s - s->t0;
        wait_push_back(s, (*ai)++);
    }
}

/* The clock to request k's arrival: an empty replica re-bases its epoch there. */
static void wait_for(struct sim *s, int64_t k)
{
    if (!s->nrun && !s->wn) {
        s->t0 = s->req[s->ids[k]].arrival_s;
        s->t = s->off ? s->off[s->ids[k]] : 0;
    } else {
        double a = arrival_at(s, k);
        if (a > s->t)
            s->t = a;
    }
}

/* Continuous batching (vLLM v0), chunked prefill (Sarathi-Serve, vLLM v1) and in-flight batching (Orca,
 * TensorRT-LLM: chunked's loop with whole prompts only) share this loop. */
static void run_dynamic(struct sim *s)
{
    const struct serve_cfg *cfg = s->cfg;
    int chunked = cfg->sched == SCHED_CHUNKED || cfg->sched == SCHED_INFLIGHT, whole = cfg->sched == SCHED_INFLIGHT;
    int64_t ai = 0;
    while (s->done < s->n && !s->overdrawn) {
        s->dec_reserved = 0;
        arrivals(s, &ai);
        if (!s->nrun && !s->wn) {
            wait_for(s, ai);
            continue;
        }
        double N = 0, L = 0, C = 0, P = 0;
        int64_t budget = cfg->max_batched_tokens, ndec = 0;
        if (!chunked && s->multi_left > 0 && s->nrun) { /* within a multi-step run: no scheduling */
        } else if (!chunked) { /* whole prefills of waiting requests first, as many as fit */
            s->multi_left = 0;
            int64_t first = s->nrun;
            while (s->wn && s->nrun < cfg->max_batch) {
                int64_t k = s->wait[s->wh];
                struct rs *q = &s->st[k];
                if (q->resident) { /* no prefill: its cache back, decoding with the others */
                    if (admit_resident(s, k))
                        break;
                    continue;
                }
                int64_t keep_done = q->pre_done, keep_shared = q->shared;
                prefill_begins(s, k);
                int64_t qn = q->pre_total - q->pre_done, need = blocks_held(s, k, q->pre_total + 1);
                if (!(qn > budget && s->nrun > first) && need > s->free_blocks && !q->shared)
                    evict_prefix(s);
                if ((qn > budget && s->nrun > first) || need > s->free_blocks) {
                    q->pre_done = q->ctx = keep_done; /* not admitted: as it was */
                    q->shared = keep_shared;
                    break;
                }
                wait_pop(s);
                budget -= qn;
                kv_take(s, need);
                q->blocks = need;
                N += (double)qn;
                P += (double)qn * (double)q->pre_done + (double)qn * (double)(qn + 1) / 2;
                q->pre_done = q->pre_total;
                L += 1;
                s->run[s->nrun++] = k;
            }
            if (N > 0) {
                double J, dt = serve_iter_s(s->c, N, L, 0, P, &J);
                advance(s, dt, J);
                int64_t w = first;
                for (int64_t i = first; i < s->nrun; i++) {
                    int64_t k = s->run[i];
                    struct rs *q = &s->st[k];
                    if (q->decoding == 2) { /* a resident one: decodes from the next iteration */
                        q->decoding = 1;
                        s->run[w++] = k;
                        continue;
                    }
                    q->ctx = q->pre_total;
                    q->decoding = 1;
                    prefill_done(s, k);
                    if (!emit(s, k))
                        s->run[w++] = k;
                }
                s->nrun = w;
                sample(s);
                continue;
            }
            for (int64_t i = first; i < s->nrun; i++) /* only resident ones came in: they decode now */
                s->st[s->run[i]].decoding = 1;
        }
        /* a decode step of every decoding sequence (chunked: and prefill chunks in what is left) */
        ndec = reserve_decode(s);
        for (int64_t i = 0; i < s->nrun; i++) {
            struct rs *q = &s->st[s->run[i]];
            if (q->decoding == 1)
                C += (double)(q->ctx - 1); /* keys beyond the cost's 1-token cache (serve.h) */
        }
        N = L = (double)ndec;
        budget -= ndec;
        if (chunked) { /* partial prefills in order, then new admissions */
            for (int64_t i = 0; i < s->nrun + s->wn && budget > 0; i++) {
                int64_t k;
                if (i < s->nrun) {
                    k = s->run[i];
                    if (s->st[k].decoding)
                        continue;
                } else {
                    if (s->nrun >= cfg->max_batch)
                        break;
                    k = s->wait[s->wh];
                    if (s->st[k].resident) { /* no prefill: it decodes from the next iteration */
                        if (admit_resident(s, k))
                            break;
                        i = s->nrun - 1;
                        continue;
                    }
                }
                struct rs *q = &s->st[k];
                int64_t keep_done = q->pre_done, keep_shared = q->shared;
                if (i >= s->nrun)
                    prefill_begins(s, k);
                int64_t ch = q->pre_total - q->pre_done;
                if (whole && ch > budget && N > 0) {
                    q->pre_done = q->ctx = keep_done;
                    q->shared = keep_shared;
                    break; /* a whole prompt or none (alone, a recomputed one over the budget runs whole, as
                              continuous batching runs it) */
                }
                if (ch > budget && !whole)
                    ch = budget;
                int64_t need = blocks_held(s, k, q->pre_done + ch + (q->pre_done + ch == q->pre_total)) - q->blocks;
                if (need < 0)
                    need = 0;
                if (need > s->free_blocks - s->dec_reserved && !q->shared)
                    evict_prefix(s);
                if (need > s->free_blocks - s->dec_reserved) {
                    q->pre_done = q->ctx = keep_done;
                    q->shared = keep_shared;
                    break;
                }
                if (i >= s->nrun) { /* admitted now */
                    wait_pop(s);
                    s->run[s->nrun++] = k;
                    i = s->nrun - 1;
                }
                kv_take(s, need);
                q->blocks += need;
                N += (double)ch;
                P += (double)ch * (double)q->pre_done + (double)ch * (double)(ch + 1) / 2;
                q->ctx = q->pre_done += ch;
                budget -= ch;
                if (q->pre_done == q->pre_total)
                    L += 1;
            }
        }
        if (N == 0 && s->nrun && s->st[s->run[s->nrun - 1]].decoding == 2) { /* only resident ones came in */
            for (int64_t i = 0; i < s->nrun; i++)
                s->st[s->run[i]].decoding = s->st[s->run[i]].decoding == 2 ? 1 : s->st[s->run[i]].decoding;
            continue;
        }
        if (N == 0) { /* nothing can run: partial prefills hold the blocks a chunk needs; the last gives way */
            if (s->nrun > 1)
                preempt(s, s->run[--s->nrun]);
            else if (ai < s->n && !s->nrun)
                wait_for(s, ai);
            else { /* the head can never run (cannot happen: one request fits the cache, the prefix is evicted) */
                s->stuck = (s->wn ? s->wait[s->wh] : s->nrun ? s->run[0] : 0) + 1;
                break;
            }
            continue;
        }
        double J, dt = serve_iter_s(s->c, N, L, C, P, &J);
        advance(s, dt, J);
        if (ndec) {
            s->dec_iters++;
            s->dec_seqs += ndec;
            /* multi-step: a scheduled decode run goes on for sched_steps steps before the next scheduling */
            s->multi_left = s->multi_left > 0 ? s->multi_left - 1 : cfg->sched_steps > 1 ? cfg->sched_steps - 1 : 0;
        }
        int64_t w = 0;
        for (int64_t i = 0; i < s->nrun; i++) {
            int64_t k = s->run[i];
            struct rs *q = &s->st[k];
            int gone = 0;
            if (q->decoding == 2) { /* admitted resident this iteration: decodes from the next */
                q->decoding = 1;
            } else if (q->decoding) { /* decoded: its token's KV appended (the blocks reserve_decode found) */
                int64_t need = blocks_for(s, q->ctx + 1 - q->shared) - q->blocks;
                if (need < 0)
                    need = 0;
                kv_take(s, need);
                q->blocks += need;
                q->ctx++;
                gone = emit(s, k);
            } else if (q->pre_done == q->pre_total) { /* its prefill completed: the next token */
                q->decoding = 1;
                prefill_done(s, k);
                gone = emit(s, k);
            }
            if (!gone)
                s->run[w++] = k;
        }
        s->nrun = w;
        sample(s);
    }
}

/* Static batching: a batch of up to max_batch waiting requests, admitted when the last batch is done,
 * runs padded to its longest prompt and output; its KV cache is reserved whole. */
static void run_static(struct sim *s)
{
    const struct serve_cfg *cfg = s->cfg;
    int64_t ai = 0;
    while (s->done < s->n && !s->overdrawn) {
        arrivals(s, &ai);
        if (!s->wn) {
            wait_for(s, ai);
            continue;
        }
        int64_t B = 0, maxP = 0, maxO = 0;
        while (s->wn && B < cfg->max_batch) {
            const struct serve_req *rq = &s->req[s->ids[s->wait[s->wh]]];
            int64_t p = rq->prompt > maxP ? rq->prompt : maxP, o = rq->output > maxO ? rq->output : maxO;
            if (B && (B + 1) * blocks_for(s, p + o) > s->total_blocks)
                break;
            maxP = p;
            maxO = o;
            s->run[B++] = wait_pop(s);
        }
        s->nrun = B;
        s->free_blocks = s->total_blocks - B * blocks_for(s, maxP + maxO);
        kv_check(s);
        double b = (double)B, J, dt = serve_iter_s(s->c, b * (double)maxP, b, 0, b * (double)maxP * (double)(maxP + 1) / 2, &J);
        advance(s, dt, J);
        for (int64_t i = 0; i < B; i++)
            emit(s, s->run[i]);
        sample(s);
        for (int64_t step = 1; step < maxO; step++) {
            dt = serve_iter_s(s->c, b, b, b * (double)(maxP + step - 2), 0, &J);
            advance(s, dt, J);
            s->dec_iters++;
            s->dec_seqs += B;
            for (int64_t i = 0; i < B; i++)
                if (s->st[s->run[i]].gen < s->req[s->ids[s->run[i]]].output)
                    emit(s, s->run[i]);
            sample(s);
        }
        s->free_blocks = s->total_blocks;
        s->nrun = 0;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void pct_of(double *v, int64_t n, struct serve_pct *p)
{
    memset(p, 0, sizeof *p);
    if (!n) {
        p->mean = p->p50 = p->p90 = p->p99 = p->max = NAN;
        return;
    }
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    double sum = 0;
    for (int64_t i = 0; i < n; i++)
        sum += v[i];
    p->mean = sum / (double)n;
    static const double q[3] = {0.5, 0.9, 0.99};
    double *out[3] = {&p->p50, &p->p90, &p->p99};
    for (int k = 0; k < 3; k++) {
        int64_t r = (int64_t)ceil(q[k] * (double)n) - 1;
        *out[k] = v[r < 0 ? 0 : r];
    }
    p->max = v[n - 1];
}

void serve_result_free(struct serve_result *res)
{
    free(res->timeline);
    free(res->ttft_all);
    free(res->tpot_all);
    free(res->e2e_all);
    memset(res, 0, sizeof *res);
}

/* What the replicas' runs add up to. */
struct pool_acc {
    double t_end, kv_area, span_area, kv_peak, dyn_J; /* t_end: since the trace's first arrival */
    int64_t dec_iters, dec_seqs, preemptions, iterations, evictions;
    int64_t stuck; /* a request no replica could schedule (its index + 1), 0: none */
    int64_t overdrawn, overdrawn_free; /* the first replica's breach of the KV blocks (sim.overdrawn) */
};

/* Runs req[0..n) (by arrival: req[i].arrival_s + off[i], off NULL: 0) on R replicas, request i on replica
 * i mod R, each with its own clock and KV cache; t_first[i], t_done[i] receive each request's times
 * since req[i].arrival_s. resident: the requests arrive with their prompt's cache (a decode pool's),
 * their first token already emitted. gid: the requests' indices in the trace (NULL: i). ref: the trace's
 * first arrival. The timeline (res, may be NULL) is the first replica's. */
static void run_pool(struct sim *s, const struct serve_cost *c, const struct serve_cfg *cfg, const struct serve_req *req,
                     const double *off, const int64_t *gid, int64_t n, int R, int resident, double ref, int64_t *ids,
                     double *t_first, double *t_done, struct serve_result *res, struct pool_acc *acc)
{
    int64_t total_blocks = (int64_t)floor(c->kv_capacity_tokens / cfg->block_tokens), base = 0;
    for (int r = 0; r < R; r++, base += n / R + (r <= n % R)) {
        int64_t m = 0;
        for (int64_t i = r; i < n; i += R)
            ids[m++] = i;
        if (!m)
            continue;
        memset(s->st, 0, sizeof *s->st * (size_t)m);
        for (int64_t k = 0; k < m; k++) {
            struct rs *q = &s->st[k];
            q->pre_total = req[ids[k]].prompt;
            if (resident) {
                q->pre_done = q->ctx = q->pre_total;
                q->gen = 1;
                q->resident = 1;
            }
        }
        s->c = c;
        s->cfg = cfg;
        s->req = req;
        s->ids = ids;
        s->off = off;
        s->gid = gid;
        s->n = m;
        s->wh = s->wn = s->nrun = 0;
        s->total_blocks = s->free_blocks = total_blocks;
        s->ref = ref;
        s->t0 = req[ids[0]].arrival_s;
        s->t = off ? off[ids[0]] : 0;
        double start = (s->t0 - ref) + s->t;
        s->energy_J = s->kv_area = s->kv_peak = s->swap_bytes = 0;
        s->prefix_cached = s->stuck = s->evictions = s->overdrawn = s->overdrawn_free = 0;
        s->done = s->preemptions = s->iterations = s->dec_iters = s->dec_seqs = 0;
        s->done_base = base;
        s->n_all = n;
        s->res = r == 0 ? res : NULL; /* the timeline is the first replica's */
        if (cfg->sched == SCHED_STATIC)
            run_static(s);
        else
            run_dynamic(s);
        if (s->stuck && !acc->stuck)
            acc->stuck = ids[s->stuck - 1] + 1;
        if (s->overdrawn && !acc->overdrawn) {
            acc->overdrawn = acc->iterations + s->overdrawn;
            acc->overdrawn_free = s->overdrawn_free;
        }
        for (int64_t k = 0; k < m; k++) {
            t_first[ids[k]] = s->st[k].t_first;
            t_done[ids[k]] = s->st[k].t_done;
        }
        double end = (s->t0 - ref) + s->t;
        if (end > acc->t_end)
            acc->t_end = end;
        acc->kv_area += s->kv_area;
        acc->span_area += end - start;
        if (s->kv_peak > acc->kv_peak)
            acc->kv_peak = s->kv_peak;
        acc->dyn_J += s->energy_J;
        acc->dec_iters += s->dec_iters;
        acc->dec_seqs += s->dec_seqs;
        acc->preemptions += s->preemptions;
        acc->iterations += s->iterations;
        acc->evictions += s->evictions;
    }
}

/* Orders request indices by when their cache reaches a decode replica: arrival + (first token since it +
 * transfer), the two parts compared apart (as the clock keeps them); ties by index (a stable merge sort). */
struct sort_ctx {
    const double *t_first; /* since each request's arrival */
    const struct serve_req *req;
    double s_per_token; /* the KV cache's transfer time per prompt token */
};

static double ready_after(const struct sort_ctx *c, int64_t k) { return c->t_first[k] + c->req[k].prompt * c->s_per_token; }
static int ready_before(const struct sort_ctx *c, int64_t a, int64_t b)
{
    return (c->req[a].arrival_s - c->req[b].arrival_s) + (ready_after(c, a) - ready_after(c, b)) < 0;
}

static void sort_by_arrival(int64_t *v, int64_t n, const struct sort_ctx *c)
{
    int64_t *tmp = malloc(sizeof *tmp * (size_t)n);
    if (!tmp) { /* out of memory: insertion sort, slow but correct */
        for (int64_t i = 1; i < n; i++)
            for (int64_t j = i; j > 0 && ready_before(c, v[j], v[j - 1]); j--) {
                int64_t t = v[j];
                v[j] = v[j - 1];
                v[j - 1] = t;
            }
        return;
    }
    for (int64_t w = 1; w < n; w *= 2) { /* bottom-up merge sort: stable */
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n, a = lo, b = mid, k = lo;
            while (a < mid && b < hi)
                tmp[k++] = ready_before(c, v[b], v[a]) ? v[b++] : v[a++];
            while (a < mid)
                tmp[k++] = v[a++];
            while (b < hi)
                tmp[k++] = v[b++];
        }
        memcpy(v, tmp, sizeof *v * (size_t)n);
    }
    free(tmp);
}

int serve_run(const struct serve_cost *c, const struct serve_cfg *cfg, const struct serve_req *req, int64_t n,
              int keep_all, struct serve_result *res, struct dse_err *e)
{
    memset(res, 0, sizeof *res);
    if (n < 1)
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "no requests to serve");
    if (cfg->max_batch < 1 || cfg->max_batched_tokens < 1 || cfg->block_tokens < 1)
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "max batch, token budget and block size must be positive");
    int64_t total_blocks = (int64_t)floor(c->kv_capacity_tokens / cfg->block_tokens);
    for (int64_t i = 0; i < n; i++) { /* what could never be served */
        const struct serve_req *q = &req[i];
        int64_t len = (int64_t)q->prompt + q->output;
        if (!isfinite(q->arrival_s))
            return dse_err_set(e, DSE_EINPUT, NULL, NULL, "request %lld arrives at %g s: not a finite time (a rate too "
                               "low for its arrivals to be represented)", (long long)i + 1, q->arrival_s);
        if (i && q->arrival_s < req[i - 1].arrival_s)
            return dse_err_set(e, DSE_EINPUT, NULL, NULL, "request %lld arrives before request %lld: arrivals must not "
                               "decrease", (long long)i + 1, (long long)i);
        if (q->prompt < 1 || q->output < 1)
            return dse_err_set(e, DSE_EINPUT, NULL, NULL, "request %lld: prompt %d and output %d tokens (each at "
                               "least 1)", (long long)i + 1, q->prompt, q->output);
        if ((len + cfg->block_tokens - 1) / cfg->block_tokens > total_blocks)
            return dse_err_set(e, DSE_EINPUT, NULL, NULL,
                               "request %lld (prompt %d + output %d tokens) needs more KV cache than the %lld tokens the "
                               "device's memory holds (%lld blocks of %d)", (long long)i + 1, q->prompt, q->output,
                               (long long)(total_blocks * cfg->block_tokens), (long long)total_blocks, cfg->block_tokens);
        if ((cfg->sched == SCHED_CONTINUOUS || cfg->sched == SCHED_INFLIGHT) && q->prompt > cfg->max_batched_tokens)
            return dse_err_set(e, DSE_EINPUT, NULL, NULL,
                               "request %lld's prompt of %d tokens exceeds the iteration budget of %lld tokens "
                               "(max batched tokens; chunked prefill splits it)", (long long)i + 1, q->prompt,
                               (long long)cfg->max_batched_tokens);
    }
    int rc = serve_prefix_check(cfg, req, n, NULL, NULL, e);
    if (rc)
        return rc;
    int R = c->replicas > 0 ? c->replicas : 1, P = cfg->prefill_replicas;
    if (P < 0 || (P > 0 && (P >= R || cfg->sched == SCHED_STATIC)))
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "disaggregation: %d prefill replicas of %d (at least one must "
                           "decode; static batching cannot split)", P, R);
    if (P > 0 && !(c->xfer_Bps > 0))
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "disaggregation sends the KV cache between replicas: the system "
                           "has no topology to send it over");
    if (cfg->prefix_tokens > 0 && cfg->sched == SCHED_STATIC)
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "prefix caching needs paged KV blocks: static batching has none");
    if (cfg->preempt == PREEMPT_SWAP && !(c->swap_Bps > 0))
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "swap preemption copies caches to the host: the system has no "
                           "CPU linked to the device");
    struct sim s;
    memset(&s, 0, sizeof s);
    s.st = malloc(sizeof *s.st * (size_t)n);
    s.wait = malloc(sizeof *s.wait * (size_t)n);
    s.run = malloc(sizeof *s.run * (size_t)n);
    int64_t *ids = malloc(sizeof *ids * (size_t)n);
    double *ttft = malloc(sizeof *ttft * (size_t)n), *tpot = malloc(sizeof *tpot * (size_t)n),
           *e2e = malloc(sizeof *e2e * (size_t)n), *tf = malloc(sizeof *tf * (size_t)n),
           *td = malloc(sizeof *td * (size_t)n);
    struct serve_req *dreq = P ? malloc(sizeof *dreq * (size_t)n) : NULL;
    int64_t *order = P ? malloc(sizeof *order * (size_t)n) : NULL;
    double *doff = P ? malloc(sizeof *doff * (size_t)n) : NULL;
    if (cfg->timeline > 0)
        res->timeline = malloc(sizeof *res->timeline * (size_t)cfg->timeline);
    if (!s.st || !s.wait || !s.run || !ids || !ttft || !tpot || !e2e || !tf || !td || (P && (!dreq || !order || !doff)) ||
        (cfg->timeline > 0 && !res->timeline)) {
        rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto done;
    }
    struct pool_acc acc;
    memset(&acc, 0, sizeof acc);
    double ref = req[0].arrival_s;
    if (!P) {
        run_pool(&s, c, cfg, req, NULL, NULL, n, R, 0, ref, ids, tf, td, res, &acc);
    } else { /* prefill replicas emit each first token; decode replicas take the cache after its transfer */
        struct serve_req *pre = dreq;
        for (int64_t i = 0; i < n; i++)
            pre[i] = (struct serve_req){req[i].arrival_s, req[i].prompt, 1};
        run_pool(&s, c, cfg, pre, NULL, NULL, n, P, 0, ref, ids, tf, td, res, &acc);
        int64_t n2 = 0; /* requests of one output token are done at their prefill */
        for (int64_t i = 0; i < n; i++)
            if (req[i].output > 1)
                order[n2++] = i;
        struct sort_ctx sc = {tf, req, c->kv_token_bytes / c->xfer_Bps};
        sort_by_arrival(order, n2, &sc);
        for (int64_t i = 0; i < n2; i++) {
            int64_t k = order[i];
            dreq[i] = (struct serve_req){req[k].arrival_s, req[k].prompt, req[k].output};
            doff[i] = ready_after(&sc, k);
        }
        double *tf2 = ttft, *td2 = e2e; /* scratch: the decode pool's times, by position in order */
        if (n2 && !acc.overdrawn)
            run_pool(&s, c, cfg, dreq, doff, order, n2, R - P, 1, ref, ids, tf2, td2, NULL, &acc);
        for (int64_t i = 0; i < n2; i++)
            td[order[i]] = td2[i];
    }
    if (acc.overdrawn) {
        rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "serving simulation: the KV blocks were over-committed at "
                         "iteration %lld (%lld free of %lld): an internal error, please report it",
                         (long long)acc.overdrawn, (long long)acc.overdrawn_free, (long long)total_blocks);
        goto done;
    }
    if (acc.stuck) {
        rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "serving simulation: request %lld can never be scheduled: an "
                         "internal error, please report it", (long long)acc.stuck);
        goto done;
    }
    int64_t nt = 0, np = 0, ok = 0, out_tokens = 0;
    for (int64_t i = 0; i < n; i++) { /* the times are since each request's arrival */
        const struct serve_req *rq = &req[i];
        double a = tf[i] + cfg->per_request_s, d = td[i] + cfg->per_request_s, tp = NAN;
        ttft[nt] = a;
        e2e[nt++] = d;
        out_tokens += rq->output;
        if (rq->output > 1)
            tpot[np++] = tp = (d - a) / (rq->output - 1);
        ok += (!(cfg->slo_ttft_s > 0) || a <= cfg->slo_ttft_s) && (!(cfg->slo_e2e_s > 0) || d <= cfg->slo_e2e_s) &&
              (!(cfg->slo_tpot_s > 0) || isnan(tp) || tp <= cfg->slo_tpot_s);
    }
    double kv_area = acc.kv_area, span_area = acc.span_area, kv_peak = acc.kv_peak, dyn_J = acc.dyn_J;
    int64_t dec_iters = acc.dec_iters, dec_seqs = acc.dec_seqs;
    res->preemptions = acc.preemptions;
    res->iterations = acc.iterations;
    res->prefix_evictions = acc.evictions;
    res->requests = n;
    res->completed = nt;
    res->output_tokens = out_tokens;
    res->makespan_s = acc.t_end;
    double span = res->makespan_s > 0 ? res->makespan_s : NAN;
    res->throughput_rps = (double)nt / span;
    res->output_tokens_per_s = (double)out_tokens / span;
    res->goodput_rps = (double)ok / span;
    res->slo_attainment = (double)ok / (double)nt;
    res->kv_use_mean = span_area > 0 ? kv_area / span_area : 0;
    res->kv_use_peak = kv_peak;
    res->batch_mean = dec_iters ? (double)dec_seqs / (double)dec_iters : 0;
    res->energy_J = dyn_J + c->idle_W * res->makespan_s;
    res->energy_per_token_J = res->energy_J / (double)out_tokens;
    res->cost_per_Mtoken_USD = (c->usd_per_s * res->makespan_s + res->energy_J * c->usd_per_J) / (double)out_tokens * 1e6;
    pct_of(ttft, nt, &res->ttft_s);
    pct_of(tpot, np, &res->tpot_s);
    pct_of(e2e, nt, &res->e2e_s);
    if (keep_all) {
        res->ttft_all = ttft;
        res->tpot_all = tpot;
        res->e2e_all = e2e;
        ttft = tpot = e2e = NULL;
    }
done:
    free(s.st);
    free(s.wait);
    free(s.run);
    free(ids);
    free(ttft);
    free(tpot);
    free(e2e);
    free(tf);
    free(td);
    free(dreq);
    free(order);
    free(doff);
    if (rc)
        serve_result_free(res);
    return rc;
}

/* The search: the bracket's top is 1.25 x the drain rate (every request at t = 0), its floor
 * SERVE_CAPACITY_FLOOR of that; the top is tried first (met: the capacity is at least the top), then
 * bisection between floor and top until the bracket is within tol of its top. If no rate tried met the
 * SLOs, the floor itself is tried: met, it is the capacity; not met, no rate in the range meets them. */
int serve_capacity(const struct serve_cost *c, const struct serve_cfg *cfg, const struct serve_req *unit, int64_t n,
                   double attainment, double tol, struct serve_capacity_result *cap, struct serve_result *at,
                   struct dse_err *e)
{
    memset(cap, 0, sizeof *cap);
    memset(at, 0, sizeof *at);
    if (!(attainment > 0 && attainment <= 1) || !(tol > 0 && tol < 1))
        return dse_err_set(e, DSE_EINPUT, NULL, "--attainment", "capacity: attainment in (0, 1] and tolerance in (0, 1), "
                           "got %g and %g", attainment, tol);
    if (!(cfg->slo_ttft_s > 0 || cfg->slo_tpot_s > 0 || cfg->slo_e2e_s > 0))
        return dse_err_set(e, DSE_EINPUT, NULL, "--slo", "capacity needs at least one SLO (ttft_ms, tpot_ms, e2e_ms)");
    if (n < 1)
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "no requests to serve");
    struct serve_req *v = malloc(sizeof *v * (size_t)n);
    if (!v)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    memcpy(v, unit, sizeof *v * (size_t)n);
    struct serve_cfg q = *cfg;
    q.timeline = 0;
    struct serve_result r;
    int rc, found = 0;
    for (int64_t i = 0; i < n; i++)
        v[i].arrival_s = 0;
    if ((rc = serve_run(c, &q, v, n, 0, &r, e)))
        goto out;
    cap->evals++;
    double hi = 1.25 * r.throughput_rps, lo = hi * SERVE_CAPACITY_FLOOR;
    serve_result_free(&r);
    if (!(hi > 0 && isfinite(hi))) { /* every request at t = 0 finishes at t = 0: no rate to search */
        rc = dse_err_set(e, DSE_EINPUT, NULL, NULL, "capacity: the requests take no time to serve at once (drain rate "
                         "%g requests/s): there is no rate to search", hi / 1.25);
        goto out;
    }
    cap->top_rps = hi;
    cap->lower_bound_rps = lo;
    for (int it = 0; it < 64 && (it == 0 || (hi - lo) > tol * hi); it++) {
        double mid = it == 0 ? hi : (lo + hi) / 2;
        for (int64_t i = 0; i < n; i++)
            v[i].arrival_s = unit[i].arrival_s / mid;
        if ((rc = serve_run(c, &q, v, n, 0, &r, e)))
            goto out;
        cap->evals++;
        if (r.slo_attainment >= attainment) {
            lo = mid;
            found = 1;
            serve_result_free(at);
            *at = r;
            if (it == 0)
                break; /* met even at the top */
        } else {
            hi = mid;
            serve_result_free(&r);
        }
    }
    if (!found) { /* the floor, never tried */
        for (int64_t i = 0; i < n; i++)
            v[i].arrival_s = unit[i].arrival_s / lo;
        if ((rc = serve_run(c, &q, v, n, 0, &r, e)))
            goto out;
        cap->evals++;
        found = r.slo_attainment >= attainment;
        *at = r;
    }
    cap->feasible = found;
    cap->rate_rps = found ? lo : 0;
out:
    free(v);
    return rc;
}
