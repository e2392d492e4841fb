/* model_systolic.c -- the cycle-approximate tier of a systolic array, after SCALE-Sim v2.
 *
 * Compute (Samajdar et al., arXiv 1811.02883 and ISPASS 2020; SCALE-Sim v2's demand matrices,
 * scalesim/compute/systolic_compute_{os,ws,is}.py at commit 22f88b1). A GEMM (M x K) @ (K x N) (a
 * convolution through im2col: M = output pixels x batch, K = filter height x width x input channels
 * per group, N = filters per group) folds over an R x C array; each fold is a run of demand rows,
 * one per cycle:
 *   OS: Sr = M, Sc = N, T = K, rows per fold L = T + R + C - 2  (operands stream in skewed, outputs drain)
 *   WS: Sr = K, Sc = N, T = M, L = 2R + C + T - 2  (R rows load the weight tile)
 *   IS: Sr = K, Sc = M, T = N, L = 2R + C + T - 2  (R rows load the input tile)
 *   folds F = ceil(Sr / R) x ceil(Sc / C) (column folds outer, row folds inner)
 *   compute cycles = F L - 1   (SCALE-Sim reports the cycle of the last row, counted from 0)
 *   mapping efficiency = Sr Sc / (F R C)   (the mean over folds of the PEs mapped)
 *   compute utilization = mapping x T / L', L' = L for OS and L + C - 1 for WS and IS (its per-fold
 *   span of the weight-tile demand), as SCALE-Sim averages it over folds
 *   with `count` identical arrays (TPU v4: 8 MXUs) the folds are dealt to them: ceil(F / count) L - 1.
 *
 * Memory, by how DRAM feeds the operand SRAMs (hw_array.interface):
 * - A SCALE-Sim .cfg (USER bandwidth): SCALE-Sim's double-buffered scratchpad, replayed by events
 *   rather than by element. Each read SRAM of S words keeps an active half A = ceil(S/2) and a
 *   prefetch half P = S - A, and tracks its operand's prefetch order in sets of e = ceil(S/100)
 *   words; the active window holds nA = ceil(A/e) consecutive sets (cyclically), and a demand for a
 *   word outside it moves the window on by nP = ceil(P/e) sets (fewer when the operand has fewer
 *   sets), as often as needed (a demand behind the window goes round the whole operand again).
 *   Each move fetches ceil(P/bw) lines of bw words back to back from the previous fetch, so the k-th
 *   move's data arrive at cycle -1 + k (ceil(P/bw) + 1) whatever the array is doing; the first
 *   half is fetched before cycle 0. A demand row g that needed move k stalls the array until then:
 *   stall = max(0, max over moves (arrival - 1 - g)) (stalls accumulate, and a later row's cycle is
 *   its index plus the stalls so far). The streamed operands (WS inputs, IS weights, both OS
 *   operands) are prefetched in anti-diagonal order of their fold tiles, as the array skews them,
 *   and demanded one diagonal per row; the stationary ones (WS weights, IS inputs) row by row of each
 *   column tile, and demanded bottom row first in the R rows that load a fold's tile. Outputs go to
 *   a write buffer of S words that starts draining D = S - ceil(S/2) words (ceil(D/bw) lines, one per
 *   cycle) when more than D are waiting and no drain runs, and stalls the array when it is full
 *   while one does. Total cycles = compute cycles + stalls.
 *   The replay costs one step per fold, window move and drain; a layer over MODEL_SA_MAX_STEPS is
 *   refused (OPS_TOO_LARGE) rather than run for seconds. It places words by their position in the
 *   prefetch order where SCALE-Sim matches addresses: a convolution's overlapping windows, which
 *   repeat input addresses, can need fewer window moves in SCALE-Sim (docs/models.md).
 * - A SCALE-Sim .cfg with CALC bandwidth: SCALE-Sim sizes the interfaces so that nothing stalls (the
 *   DRAM traffic, for energy, is the closed form below).
 * - A hwdesc array (shared main memory), a closed form: each operand SRAM is double-buffered, so half
 *   of it holds the working set; an operand matrix that does not fit is fetched again on every
 *   revisit (OS: inputs per column fold, weights per row fold; WS: inputs per column fold and partial
 *   sums per row fold; IS: weights per column fold and partial sums per row fold); transfers overlap
 *   compute: stall cycles = max(0, DRAM bytes / (bytes per cycle) - compute cycles).
 * Grouped convolutions run group by group and attention as QK^T then PV, per batch x head, as
 * SCALE-Sim runs separate layers. Operators that are not GEMMs do not use the array: their cost is
 * the analytical roofline's (the vector unit). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "model.h"

typedef int64_t i64;
#define NEVER INT64_MAX

static i64 cdiv(i64 a, i64 b) { return (a + b - 1) / b; }
static i64 min64(i64 a, i64 b) { return a < b ? a : b; }
static i64 max64(i64 a, i64 b) { return a > b ? a : b; }

/* The array's view of a GEMM: spatial rows and columns, temporal extent, folds. */
static void shape(enum hw_dataflow df, double M, double K, double N, double *Sr, double *Sc, double *T)
{
    switch (df) {
    case DF_WS: *Sr = K; *Sc = N; *T = M; break;
    case DF_IS: *Sr = K; *Sc = M; *T = N; break;
    default: *Sr = M; *Sc = N; *T = K; break;
    }
}

void model_systolic_gemm(int rows, int cols, enum hw_dataflow df, double M, double K, double N, struct sa_gemm *o)
{
    double R = rows, C = cols, Sr, Sc, T;
    shape(df, M, K, N, &Sr, &Sc, &T);
    double per = df == DF_OS ? T + R + C - 2 : 2 * R + C + T - 2;
    double rf = ceil(Sr / R), cf = ceil(Sc / C);
    o->folds = rf * cf;
    o->cycles_per_fold = per;
    o->compute_cycles = o->folds * per - 1;
    o->mapping_efficiency = Sr * Sc / (o->folds * R * C);
    o->compute_util = o->mapping_efficiency * T / (df == DF_OS ? per : per + C - 1);
    /* Operand words read from / written to the array's SRAMs (SCALE-Sim's request counts; its OS
     * output count adds R + C per fold). */
    switch (df) {
    case DF_WS:
        o->ifmap_reads = cf * M * K;
        o->filter_reads = K * N;
        o->ofmap_writes = rf * M * N;
        break;
    case DF_IS:
        o->ifmap_reads = M * K;
        o->filter_reads = cf * K * N;
        o->ofmap_writes = rf * M * N;
        break;
    default:
        o->ifmap_reads = cf * M * K;
        o->filter_reads = rf * K * N;
        o->ofmap_writes = M * N + o->folds * (R + C);
        break;
    }
}

/* ---- SCALE-Sim's scratchpad with USER bandwidth, replayed by events ---- */

/* Sum over x = 0..z of min(x, cap) (0 for z < 0). */
static i64 qsum(i64 z, i64 cap)
{
    if (z < 0)
        return 0;
    if (z <= cap)
        return z * (z + 1) / 2;
    return cap * (cap + 1) / 2 + (z - cap) * cap;
}

/* Elements (r, c) with r + c < d, 0 <= r < cap, c0 <= c < c1. */
static i64 tri(i64 d, i64 c0, i64 c1, i64 cap)
{
    if (c1 <= c0 || cap <= 0)
        return 0;
    return qsum(d - c0, cap) - qsum(d - c1, cap);
}

/* The largest d in [0, hi] with f(d) <= p, f nondecreasing and f(0) <= p. */
#define BSEARCH(d, hi, fexpr, p)                                                                    \
    do {                                                                                            \
        i64 lo_ = 0, hi_ = (hi);                                                                    \
        while (lo_ < hi_) {                                                                         \
            i64 mid_ = lo_ + (hi_ - lo_ + 1) / 2;                                                   \
            if ((fexpr(mid_)) <= (p))                                                               \
                lo_ = mid_;                                                                         \
            else                                                                                    \
                hi_ = mid_ - 1;                                                                     \
        }                                                                                           \
        (d) = lo_;                                                                                  \
    } while (0)

enum { RD_DIAG, RD_BLOCK };

/* One read SRAM and the cursor over its operand's demand, fold by fold. */
struct rd {
    int kind, by_col_fold;     /* DIAG: the fold's tile is its column fold (OS weights), else its row fold */
    i64 N, nA, nP, e, a, K;    /* sets, window, move (sets); set size (words); window start; moves */
    i64 n, n0;                 /* lines per move, lines of the first fill */
    /* DIAG: tiles of T rows x W columns stacked (nb of them, the last wl wide), anti-diagonal order */
    i64 T, W, nb, wl, X, r0, off;
    /* BLOCK: column tiles of Sr rows x C words, row-major (the last wl wide) */
    i64 Sr;
    /* cursor */
    i64 f, s, lo, hi, k, g, blk, wb, p1;
    int stage;
    i64 ev_g, ev_X; /* the pending stall event: demand row, arrival - 1 (ev_g NEVER: none left) */
};

struct wr {
    i64 Sw, D, Ld, bw, out, fill, drain_end, acc, start, stop;
    i64 qf[8], qp[8]; /* queued lines: segments of qf full lines then one partial line of qp words */
    int qh, qn;
    i64 f, n; /* cursor: fold, element within the fold */
};

struct sim {
    enum hw_dataflow df;
    i64 R, C, T, Sr, Sc, rf, cf, F, L;
    i64 S; /* stall cycles so far */
    struct rd rd[2];
    struct wr w;
};

static i64 diag_pos(const struct rd *r, i64 d) /* valid words on anti-diagonals before d */
{
    return tri(d, 0, r->W, r->X) - tri(d - r->r0, r->wl, r->W, r->X - r->r0);
}

/* Valid words (row, col) of rows >= lo with row + col < d. */
static i64 diag_pos_from(const struct rd *r, i64 d, i64 lo)
{
    return tri(d - lo, 0, r->W, r->X - lo) - tri(d - r->r0, r->wl, r->W, r->X - r->r0);
}

/* Words before the end of tile b's part of diagonal d: a diagonal lists its rows from the highest,
 * so the later tiles' words come first and tile b's end where its row bT is. */
static i64 diag_end_of_tile(const struct rd *r, i64 d)
{
    i64 lo = r->blk * r->T;
    return diag_pos(r, d) + diag_pos_from(r, d + 1, lo) - diag_pos_from(r, d, lo);
}

/* A demand for set s at row g: moves the window until it holds s; records the stall event. */
static int rd_touch(struct rd *r, i64 s, i64 g)
{
    i64 u = ((s - r->a) % r->N + r->N) % r->N;
    if (u < r->nA)
        return 0;
    i64 j = cdiv(u - r->nA + 1, r->nP);
    r->K += j;
    r->a = (r->a + j * r->nP) % r->N;
    r->ev_g = g;
    r->ev_X = r->K * (r->n + 1) - 2;
    return 1;
}

/* The first set after s (held by the window) that the window does not hold. */
static i64 rd_next_out(const struct rd *r, i64 s)
{
    i64 u = ((s - r->a) % r->N + r->N) % r->N;
    return s + (r->nA - u);
}

static int rd_holds(const struct rd *r, i64 s) { return ((s - r->a) % r->N + r->N) % r->N < r->nA; }

/* Advances r to its next stall event (ev_g = NEVER when the demand is over). */
static void rd_next(struct rd *r, const struct sim *m)
{
    r->ev_g = NEVER;
    if (r->nP == 0) /* the whole operand fits in the active half */
        return;
    while (r->f < m->F) {
        i64 fc = r->f / m->rf, fr = r->f % m->rf, g0 = r->f * m->L;
        if (r->kind == RD_DIAG) {
            if (r->stage == 0) { /* the fold starts on the first word of its tile */
                r->blk = r->by_col_fold ? fc : fr;
                r->wb = r->blk == r->nb - 1 ? r->wl : r->W;
                r->p1 = diag_end_of_tile(r, r->blk * r->T + r->T + r->wb - 2) - 1;
                r->s = diag_pos(r, r->blk * r->T) / r->e;
                r->stage = 1;
                if (rd_touch(r, r->s, g0 + r->off))
                    return;
            }
            i64 s = rd_next_out(r, r->s);
            if (s > r->p1 / r->e) {
                r->f++;
                r->stage = 0;
                continue;
            }
            r->s = s;
            /* the row of the first word of this tile at or after the set's start */
            i64 d;
#define DE(x) diag_end_of_tile(r, x)
            BSEARCH(d, r->X + r->W - 1, DE, s * r->e);
#undef DE
            i64 local = min64(max64(d + 1 - r->blk * r->T, 0), r->T + r->wb - 2);
            rd_touch(r, s, g0 + r->off + local);
            return;
        }
        /* BLOCK: rows k of the tile, top row first, each row's words left to right */
        i64 h = min64(m->R, r->Sr - fr * m->R), w = fc == m->cf - 1 ? r->wl : m->C, base = fc * r->Sr * m->C;
        if (r->stage == 0) {
            r->k = fr * m->R + h - 1;
            r->stage = 1;
        }
        if (r->stage == 1) { /* a row's first set */
            i64 x = base + r->k * w;
            r->lo = x / r->e;
            r->hi = (x + w - 1) / r->e;
            r->g = g0 + m->R - 1 - (r->k - fr * m->R);
            r->s = r->lo;
            r->stage = 2;
            if (rd_touch(r, r->lo, r->g))
                return;
        }
        if (r->stage == 2) { /* the rest of the row */
            i64 s = rd_next_out(r, r->s);
            if (s <= r->hi) {
                r->s = s;
                rd_touch(r, s, r->g);
                return;
            }
            r->stage = 3;
        }
        /* the next row that demands a set not yet demanded, or this row's first set again */
        i64 next;
        if (rd_holds(r, r->lo))
            next = r->lo * r->e - 1 < base + fr * m->R * w ? -1 : (r->lo * r->e - 1 - base) / w;
        else
            next = r->k - 1 >= fr * m->R ? r->k - 1 : -1;
        if (next < 0) {
            r->f++;
            r->stage = 0;
            continue;
        }
        r->k = next;
        r->stage = 1;
    }
}

/* Sets up the read SRAM of S words for an operand of V valid words (Nf with padding). */
static void rd_init(struct rd *r, i64 S, i64 bw, i64 V, i64 Nf)
{
    i64 A = cdiv(S, 2), P = S - A;
    r->e = cdiv(S, 100);
    r->N = V / r->e + 1;
    r->nA = min64(cdiv(A, r->e), r->N);
    r->nP = min64(cdiv(P, r->e), r->N - r->nA);
    r->a = r->K = 0;
    r->n = cdiv(P, bw);
    r->n0 = min64(cdiv(A, bw), cdiv(Nf, bw));
    r->f = r->stage = 0;
}

static void rd_apply(struct sim *m, i64 gmax) /* applies the read stalls of rows <= gmax */
{
    for (int i = 0; i < 2; i++)
        while (m->rd[i].ev_g <= gmax) {
            m->S = max64(m->S, m->rd[i].ev_X - m->rd[i].ev_g);
            rd_next(&m->rd[i], m);
        }
}

/* ---- the output write buffer ---- */

static void wq_push(struct wr *w, i64 full, i64 part)
{
    int last = (w->qh + w->qn - 1) & 7;
    if (full > 0) {
        if (w->qn > 0 && w->qp[last] == 0)
            w->qf[last] += full;
        else if (w->qn < 8) {
            last = (w->qh + w->qn++) & 7;
            w->qf[last] = full;
            w->qp[last] = 0;
        } else /* never reached: a drain pops at least the lines one push adds */
            w->qf[last] += full;
    }
    if (part > 0) {
        last = (w->qh + w->qn - 1) & 7;
        if (w->qn > 0 && w->qp[last] == 0)
            w->qp[last] = part;
        else if (w->qn < 8) {
            last = (w->qh + w->qn++) & 7;
            w->qf[last] = 0;
            w->qp[last] = part;
        } else
            w->qf[last]++;
    }
}

static void wr_store(struct wr *w, i64 words)
{
    w->out += words;
    i64 t = w->fill + words;
    wq_push(w, t / w->bw, 0);
    w->fill = t % w->bw;
}

/* Starts a drain at cycle c: the open line closes, up to ceil(D/bw) lines go, one per cycle. The
 * space freed is lines x bw less the empty slots of the last line only (SCALE-Sim's count). */
static void wr_drain(struct wr *w, i64 c)
{
    if (w->fill > 0) {
        wq_push(w, 0, w->fill);
        w->fill = 0;
    }
    i64 lines = 0, credit = 0;
    while (lines < w->Ld && w->qn > 0) {
        int h = w->qh;
        i64 take = min64(w->qf[h], w->Ld - lines);
        lines += take;
        credit += take * w->bw;
        w->qf[h] -= take;
        if (w->qf[h] > 0)
            break;
        if (w->qp[h] > 0) {
            if (lines == w->Ld)
                break;
            lines++; /* a partial line: its empty slots count as freed unless it is the last line */
            credit += lines == w->Ld || w->qn == 1 ? w->qp[h] : w->bw;
            w->qp[h] = 0;
        }
        w->qh = (w->qh + 1) & 7;
        w->qn--;
    }
    if (lines == 0)
        return;
    w->out -= credit;
    w->acc += credit;
    if (w->start < 0)
        w->start = c;
    w->drain_end = w->stop = c + lines - 1;
}

/* The output tile of fold f: Tw x ww words written along anti-diagonals from local row off. */
static void wr_fold(const struct sim *m, i64 f, i64 *Tw, i64 *ww, i64 *off)
{
    i64 fc = f / m->rf, fr = f % m->rf;
    *ww = min64(m->C, m->Sc - fc * m->C);
    if (m->df == DF_OS) {
        i64 h = min64(m->R, m->Sr - fr * m->R);
        *Tw = h;
        *off = m->T - 1 + m->R - h;
    } else {
        *Tw = m->T;
        *off = 2 * m->R - 1;
    }
}

/* Runs the writes of rows < G (applying the read stalls in row order). */
static void wr_advance(struct sim *m, i64 G)
{
    struct wr *w = &m->w;
    while (w->f < m->F) {
        i64 Tw, ww, off, g0 = w->f * m->L;
        wr_fold(m, w->f, &Tw, &ww, &off);
        i64 E = Tw * ww;
        if (w->n >= E) {
            w->f++;
            w->n = 0;
            continue;
        }
#define WC(x) tri(x, 0, ww, Tw)
        /* first element at global row >= g, and the row of element j */
#define FIRST_AT(g) ((g) - g0 - off <= 0 ? 0 : (g) - g0 - off >= Tw + ww - 1 ? E : WC((g) - g0 - off))
        i64 d;
        BSEARCH(d, Tw + ww - 2, WC, w->n);
        i64 g = g0 + off + d;
        if (g >= G)
            return;
        rd_apply(m, g - 1);
        i64 mG = G == NEVER ? E : min64(E, FIRST_AT(G));
        if (g + m->S >= w->drain_end) { /* no drain running: the word that puts more than D waiting starts one */
            i64 mt = w->n + max64(0, w->D - w->out);
            if (mt >= mG) {
                wr_store(w, mG - w->n);
                w->n = mG;
                continue;
            }
            wr_store(w, mt - w->n + 1);
            BSEARCH(d, Tw + ww - 2, WC, mt);
            rd_apply(m, g0 + off + d - 1);
            wr_drain(w, g0 + off + d + m->S);
            w->n = mt + 1;
            continue;
        }
        /* a drain runs until drain_end: the word that fills the buffer before then stalls the array */
        i64 ms = w->n + max64(0, w->Sw - w->out - 1);
        i64 md = FIRST_AT(w->drain_end - m->S);
        i64 gr = min64(m->rd[0].ev_g, m->rd[1].ev_g);
        i64 mh = gr == NEVER ? E : FIRST_AT(gr + 1);
        i64 lim = min64(min64(md, mh), mG);
        if (ms < lim) {
            wr_store(w, ms - w->n + 1);
            BSEARCH(d, Tw + ww - 2, WC, ms);
            m->S = max64(m->S, w->drain_end - (g0 + off + d));
            w->n = ms + 1;
            continue;
        }
        wr_store(w, lim - w->n);
        w->n = lim;
#undef FIRST_AT
#undef WC
    }
}

/* SCALE-Sim's first and last demand rows of an operand (global rows), for its access report. */
static void sram_rows(const struct sim *m, int which, i64 *first, i64 *last)
{
    i64 R = m->R, hl = m->Sr - (m->rf - 1) * R, wl = m->Sc - (m->cf - 1) * m->C, h0 = min64(R, m->Sr);
    i64 gl = (m->F - 1) * m->L;
    int stationary = (m->df == DF_WS && which == 1) || (m->df == DF_IS && which == 0);
    if (which == 2) {
        *first = m->df == DF_OS ? m->T - 1 + R - h0 : 2 * R - 1;
        *last = gl + (m->df == DF_OS ? m->T - 1 + R - 1 : 2 * R - 1 + m->T - 1) + wl - 1;
    } else if (stationary) {
        *first = R - h0;
        *last = gl + R - 1;
    } else if (m->df == DF_OS) {
        *first = 0;
        *last = gl + m->T - 1 + (which == 0 ? hl : wl) - 1;
    } else {
        *first = R;
        *last = gl + R + m->T - 1 + hl - 1;
    }
}

/* Replays SCALE-Sim's scratchpad for one GEMM with USER bandwidth bw words per cycle per interface
 * and SRAMs of Si, Sf, So words: stall cycles and the access report. */
static void user_memory(struct sim *m, i64 Si, i64 Sf, i64 So, i64 bw, struct sa_report *rep)
{
    /* WS inputs, IS weights and both OS operands stream along anti-diagonals; the rest is loaded
     * tile by tile. Operand matrices as SCALE-Sim prefetches them: */
    for (int i = 0; i < 2; i++) {
        struct rd *r = &m->rd[i];
        memset(r, 0, sizeof *r);
        int stationary = (m->df == DF_WS && i == 1) || (m->df == DF_IS && i == 0);
        i64 V, Nf;
        if (stationary) {
            r->kind = RD_BLOCK;
            r->Sr = m->Sr;
            r->wl = m->Sc - (m->cf - 1) * m->C;
            V = m->Sr * m->Sc;
            Nf = m->cf * m->Sr * m->C;
        } else {
            r->kind = RD_DIAG;
            r->by_col_fold = m->df == DF_OS && i == 1;
            r->T = m->T;
            r->W = r->by_col_fold ? m->C : m->R;
            r->nb = r->by_col_fold ? m->cf : m->rf;
            r->wl = r->by_col_fold ? m->Sc - (m->cf - 1) * m->C : m->Sr - (m->rf - 1) * m->R;
            r->X = r->nb * r->T;
            r->r0 = (r->nb - 1) * r->T;
            r->off = m->df == DF_OS ? 0 : m->R;
            V = r->X * r->W - (r->W - r->wl) * r->T;
            Nf = r->X * r->W;
        }
        rd_init(r, i == 0 ? Si : Sf, bw, V, Nf);
        rd_next(r, m);
    }
    struct wr *w = &m->w;
    memset(w, 0, sizeof *w);
    w->Sw = So;
    w->D = So - cdiv(So, 2);
    w->bw = bw;
    w->Ld = cdiv(w->D, bw);
    w->start = -1;
    /* The report's SRAM first and last cycles need the stalls at those rows: visit them in order. */
    i64 probe[6];
    for (int i = 0; i < 3; i++)
        sram_rows(m, i, &probe[2 * i], &probe[2 * i + 1]);
    int order[6] = {0, 1, 2, 3, 4, 5};
    for (int i = 1; i < 6; i++)
        for (int j = i; j > 0 && probe[order[j]] < probe[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    double at[6];
    for (int i = 0; i < 6; i++) {
        i64 g = probe[order[i]];
        wr_advance(m, g + 1);
        rd_apply(m, g);
        at[order[i]] = (double)(g + m->S) + (order[i] < 4 ? 1 : 0); /* reads are served a cycle later */
    }
    wr_advance(m, NEVER);
    rd_apply(m, NEVER - 1);
    i64 total = m->F * m->L - 1 + m->S;
    /* what is left in the write buffer drains after the last row, drain after drain */
    if (w->fill > 0 || w->qn > 0) {
        i64 c = total;
        w->drain_end = 0;
        while (w->fill > 0 || w->qn > 0) {
            wr_drain(w, c);
            c = w->stop + 1;
        }
    }
    rep->stall_cycles = (double)m->S;
    for (int i = 0; i < 3; i++) {
        rep->sram_start[i] = at[2 * i];
        rep->sram_stop[i] = at[2 * i + 1];
    }
    for (int i = 0; i < 2; i++) {
        const struct rd *r = &m->rd[i];
        rep->dram_acc[i] = (double)((r->n0 + r->K * r->n) * bw);
        rep->dram_start[i] = (double)-r->n0;
        rep->dram_stop[i] = (double)(r->K * (r->n + 1) - 1);
    }
    rep->dram_acc[2] = (double)w->acc;
    rep->dram_start[2] = (double)w->start;
    rep->dram_stop[2] = (double)w->stop;
}

/* An upper estimate of the replay's events: fold starts, window moves (each operand's demanded words
 * over a move's words, plus one a fold), a stationary tile's sets, drains and write stalls. */
static double replay_steps(const struct hw_array *a, double M, double K, double N, double eb, const struct sa_gemm *s)
{
    double Sr, Sc, T, R = a->rows, C = a->cols;
    shape(a->dataflow, M, K, N, &Sr, &Sc, &T);
    double rf = ceil(Sr / R), cf = ceil(Sc / C), F = s->folds;
    double half_i = floor(a->ifmap_bytes / eb) / 2, half_f = floor(a->filter_bytes / eb) / 2;
    double half_o = floor(a->ofmap_bytes / eb) / 2, e_i = half_i / 50, e_f = half_f / 50;
    double steps = 3 * F + 2 * s->ofmap_writes / fmax(half_o, 1);
    switch (a->dataflow) {
    case DF_WS: steps += cf * M * K / half_i + K * N / fmax(e_f, 1) + F; break;
    case DF_IS: steps += M * K / fmax(e_i, 1) + cf * K * N / half_f + F; break;
    default: steps += cf * M * K / half_i + rf * K * N / half_f; break;
    }
    return steps;
}

/* Largest layer the event replay takes (words of an operand matrix): keeps int64 sums exact. */
#define SA_MAX_WORDS 1e15

int model_systolic_layer(const struct hw_device *d, double M, double K, double N, double elem_bytes,
                         struct sa_report *rep)
{
    const struct hw_array *a = &d->array;
    struct sa_gemm s;
    memset(rep, 0, sizeof *rep);
    model_systolic_gemm(a->rows, a->cols, a->dataflow, M, K, N, &s);
    rep->compute_cycles = s.compute_cycles;
    rep->mapping_efficiency_pct = 100 * s.mapping_efficiency;
    rep->compute_util_pct = 100 * s.compute_util;
    rep->sram_acc[0] = s.ifmap_reads;
    rep->sram_acc[1] = s.filter_reads;
    rep->sram_acc[2] = s.ofmap_writes;
    if (a->interface == SA_USER) {
        if (M * K > SA_MAX_WORDS || K * N > SA_MAX_WORDS || M * N > SA_MAX_WORDS ||
            replay_steps(a, M, K, N, elem_bytes, &s) > MODEL_SA_MAX_STEPS)
            return -1;
        struct sim m;
        m.df = a->dataflow;
        m.R = a->rows;
        m.C = a->cols;
        double Sr, Sc, T;
        shape(a->dataflow, M, K, N, &Sr, &Sc, &T);
        m.Sr = (i64)Sr;
        m.Sc = (i64)Sc;
        m.T = (i64)T;
        m.rf = cdiv(m.Sr, m.R);
        m.cf = cdiv(m.Sc, m.C);
        m.F = m.rf * m.cf;
        m.L = (i64)s.cycles_per_fold;
        m.S = 0;
        user_memory(&m, (i64)floor(a->ifmap_bytes / elem_bytes), (i64)floor(a->filter_bytes / elem_bytes),
                    (i64)floor(a->ofmap_bytes / elem_bytes), (i64)a->interface_words_per_cycle, rep);
        rep->dram_modelled = 1;
    }
    rep->total_cycles = rep->compute_cycles + rep->stall_cycles;
    rep->overall_util_pct = 100 * M * N * K / (rep->total_cycles * a->rows * a->cols);
    return 0;
}

int model_systolic_gemms(const struct wl_op *op, double dims[2][3], double *times)
{
    *times = op->gbatch;
    dims[0][0] = op->gm;
    dims[0][1] = op->gk;
    dims[0][2] = op->gn;
    if (op->type != OP_ATTENTION)
        return 1;
    /* per batch x head: (S x hd) @ (hd x T), then (S x T) @ (T x hd) */
    dims[1][0] = op->gm;
    dims[1][1] = op->gn;
    dims[1][2] = op->gk;
    return 2;
}

/* DRAM words read and written for one GEMM given the operand SRAMs (half of each usable). An operand
 * held on chip (on[0] input, on[1] weights, on[2] output: the stack's memory plan, or an output only
 * its fused kernel reads) crosses no DRAM: its refetches come from the on-chip buffer. */
static void gemm_dram(const struct hw_array *a, double M, double K, double N, double e, const int on[3], double *rd,
                      double *wr)
{
    double R = a->rows, C = a->cols;
    double in = on[0] ? 0 : M * K * e, w = on[1] ? 0 : K * N * e, out = on[2] ? 0 : M * N * e;
    int in_fits = in <= a->ifmap_bytes / 2, w_fits = w <= a->filter_bytes / 2, out_fits = out <= a->ofmap_bytes / 2;
    double rf, cf;
    switch (a->dataflow) {
    case DF_WS:
        rf = ceil(K / R);
        cf = ceil(N / C);
        *rd = in * (in_fits ? 1 : cf) + w + (out_fits ? 0 : (rf - 1) * out);
        *wr = out * (out_fits ? 1 : rf);
        break;
    case DF_IS:
        rf = ceil(K / R);
        cf = ceil(M / C);
        *rd = in + w * (w_fits ? 1 : cf) + (out_fits ? 0 : (rf - 1) * out);
        *wr = out * (out_fits ? 1 : rf);
        break;
    default:
        rf = ceil(M / R);
        cf = ceil(N / C);
        *rd = in * (in_fits ? 1 : cf) + w * (w_fits ? 1 : rf);
        *wr = out;
        break;
    }
}

enum op_status model_systolic_cycle(const struct hw_device *d, const struct wl_graph *g, const struct wl_op *op,
                                    const struct exec_cfg *x, struct op_cost *c)
{
    if (!op_type_is_gemm(op->type) || !d->array.present) {
        if (!d->array.present && op_type_is_gemm(op->type))
            return OPS_NO_TIER; /* no array geometry to fold over */
        return model_roofline_cost(d, g, op, x, c);
    }
    /* Start from the analytical cost for support, precision and energy per MAC; replace the time. */
    enum op_status st = model_roofline_cost(d, g, op, x, c);
    if (st != OPS_OK)
        return st;
    const struct hw_array *a = &d->array;
    double e = prec_bytes(c->cprec), dims[2][3], times;
    int n = model_systolic_gemms(op, dims, &times);
    double clock = d->boost_Hz;
    for (int i = 0; i < d->n_compute; i++)
        if (d->compute[i].engine == ENG_MATRIX && d->compute[i].prec == c->cprec)
            clock = d->compute[i].clock_Hz;
    const struct hw_mem *dram = &d->mem[d->n_mem - 1];
    double compute = 0, stall = 0, map_w = 0, sram_rd = 0, sram_wr = 0, dram_rd = 0, dram_wr = 0, busy = 0;
    /* What the stack keeps on chip (a matmul's or convolution's input, weights, output); SCALE-Sim's own
     * interfaces (a .cfg) stream every operand as SCALE-Sim does. */
    int on[3] = {0, 0, 0}, last = d->n_mem - 1;
    if (op->type != OP_ATTENTION) {
        int h0 = model_planned_home(x, op->in[0]), h1 = model_planned_home(x, op->in[1]);
        int h2 = model_planned_home(x, op->out[0]);
        on[0] = (h0 >= 0 && h0 < last) || model_in_bytes(g, op, 0, x) == 0;
        on[1] = h1 >= 0 && h1 < last;
        on[2] = (h2 >= 0 && h2 < last) || model_out_bytes(g, op, 0, x) == 0;
    }
    for (int i = 0; i < n; i++) {
        struct sa_gemm s;
        model_systolic_gemm(a->rows, a->cols, a->dataflow, dims[i][0], dims[i][1], dims[i][2], &s);
        double cyc, st1 = 0, rd, wr;
        if (a->interface == SA_SHARED) {
            /* count arrays take a layer's folds in turn */
            cyc = ceil(s.folds / a->count) * s.cycles_per_fold - 1;
            gemm_dram(a, dims[i][0], dims[i][1], dims[i][2], e, on, &rd, &wr);
            rd /= e;
            wr /= e;
        } else {
            struct sa_report rep;
            if (model_systolic_layer(d, dims[i][0], dims[i][1], dims[i][2], e, &rep))
                return OPS_TOO_LARGE;
            cyc = rep.compute_cycles;
            st1 = rep.stall_cycles;
            if (a->interface == SA_USER) { /* SCALE-Sim's DRAM words (whole lines) */
                rd = rep.dram_acc[0] + rep.dram_acc[1];
                wr = rep.dram_acc[2];
            } else { /* CALC: the traffic, for energy, from the refetch closed form */
                gemm_dram(a, dims[i][0], dims[i][1], dims[i][2], e, on, &rd, &wr);
                rd /= e;
                wr /= e;
            }
            /* each interface moves bw words per cycle: the busiest one bounds the memory time */
            if (a->interface == SA_USER)
                busy = fmax(busy, times * fmax(fmax(rep.dram_acc[0], rep.dram_acc[1]), rep.dram_acc[2]) /
                                      a->interface_words_per_cycle);
        }
        compute += times * cyc;
        stall += times * st1;
        map_w += s.mapping_efficiency * cyc;
        sram_rd += times * (s.ifmap_reads + s.filter_reads);
        sram_wr += times * s.ofmap_writes;
        dram_rd += times * rd;
        dram_wr += times * wr;
    }
    double dram_bytes = (dram_rd + dram_wr) * e;
    if (a->interface == SA_SHARED) {
        double bytes_per_cycle = dram->bandwidth_Bps * d->eff_memory / clock;
        stall = fmax(0, dram_bytes / bytes_per_cycle - compute);
        busy = dram_bytes / bytes_per_cycle;
    }
    c->cycles_compute = compute;
    c->cycles_stall = stall;
    c->mapping_efficiency = map_w / (compute / times);
    c->sram_reads = sram_rd;
    c->sram_writes = sram_wr;
    c->dram_reads = dram_rd;
    c->dram_writes = dram_wr;
    c->compute_s = compute / clock;
    c->memory_s = busy / clock;
    c->time_s = (compute + stall) / clock + c->overhead_s;
    c->bound = c->overhead_s > (compute + stall) / clock ? BOUND_OVERHEAD : stall > 0 ? BOUND_MEMORY : BOUND_COMPUTE;
    c->mem_level = d->n_mem - 1;
    c->utilization = op->macs / ((double)a->rows * a->cols * a->count * (compute + stall) + 1e-300);
    if (c->utilization > 1)
        c->utilization = 1;
    /* Traffic per level: the operand SRAMs serve every array request; DRAM the refetches. */
    memset(c->bytes, 0, sizeof c->bytes);
    c->bytes[0] = (c->sram_reads + c->sram_writes) * e;
    c->bytes[d->n_mem - 1] = dram_bytes;
    c->energy_memory_J = c->bytes[0] * d->mem[0].energy_J_per_byte +
                         (d->n_mem > 1 ? dram_bytes * dram->energy_J_per_byte : 0);
    c->energy_static_J = d->idle_W * c->time_s;
    return OPS_OK;
}
