// kern_cuda_attn.cu -- kern_cuda's fused attention: FlashAttention-style prefill on tensor cores
// (WMMA) and split-key decode, chosen by S (KCUI_FD_MAX_S), plus the host emulation of the prefill
// kernel that the tests run without a GPU.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "kern_cuda_impl.h"

// ---- attention, prefill: FlashAttention-style tiles on tensor cores (WMMA 16x16x16) ----
// A block of 4 warps owns 64 queries of one (batch, head). It keeps Q, the output accumulator O
// (fp32) and the running maximum m and sum l of every query row in shared memory, and walks the keys
// in tiles of BK (64 for D <= 64, else 32): S = Q K^T (WMMA, fp32 accumulators, stored to shared
// memory), then per row the online softmax
//     m' = max(m, max_j s_j / sqrt(D)),  p_j = exp(s_j / sqrt(D) - m'),  alpha = exp(m - m'),
//     l' = alpha l + sum_j p_j,  O' = alpha O + P V  (P rounded to the input type, V from shared memory),
// and finally o = O / l. The S x T scores never leave shared memory. Causal tiles beyond the last
// query's position are skipped, and entries masked inside the diagonal tile. The score and P V
// products go through shared memory (store_matrix_sync / load_matrix_sync), so no code depends on
// the fragments' register layout; each phase between two barriers is a function of (thread or warp,
// count), which lets kcui_attention_emulate run the same code on the host.

namespace wm = nvcuda::wmma;

#define FA_BQ 64
#define FA_THREADS 128
#define FA_WARPS 4

template <class T, int D> struct fa_smem {
    static constexpr int BK = D <= 64 ? 64 : 32;
    T q[FA_BQ * D];
    T k[BK * D];
    T v[BK * D];
    float s[FA_BQ * BK];
    T p[FA_BQ * BK];
    float o[FA_BQ * D];
    float m[FA_BQ], l[FA_BQ], alpha[FA_BQ], mnext[FA_BQ];
    float rmax[2 * FA_BQ], rsum[2 * FA_BQ]; // two threads per row: their partial maxima and sums
};

struct fa_args {
    const void *q, *k, *v;
    void *o;
    int B, H, Hkv, S, T, causal;
    float scale_log2; // log2(e) / sqrt(D): exp(x / sqrt(D)) = exp2(x scale_log2)
};

__host__ __device__ __forceinline__ void copy16(void *d, const void *s)
{
#ifdef __CUDA_ARCH__
    *reinterpret_cast<uint4 *>(d) = *reinterpret_cast<const uint4 *>(s);
#else
    memcpy(d, s, 16);
#endif
}

__host__ __device__ __forceinline__ void zero16(void *d)
{
#ifdef __CUDA_ARCH__
    *reinterpret_cast<uint4 *>(d) = make_uint4(0, 0, 0, 0);
#else
    memset(d, 0, 16);
#endif
}

// The first key index past every key the block's queries see.
__host__ __device__ __forceinline__ int fa_kv_end(const fa_args &a, int q0)
{
    const int last = a.T - a.S + q0 + FA_BQ;
    return a.causal && last < a.T ? last : a.T;
}

// Key j is visible to row r (query q0 + r at position T - S + q0 + r).
__host__ __device__ __forceinline__ bool fa_visible(const fa_args &a, int q0, int r, int j)
{
    return j < a.T && (!a.causal || j <= a.T - a.S + q0 + r);
}

template <class T, int D>
__host__ __device__ void fa_load_q(fa_smem<T, D> *sm, const fa_args &a, int q0, int h, int b, int tid, int nt)
{
    const T *q = (const T *)a.q;
    for (int i = tid; i < FA_BQ * (D / 8); i += nt) {
        const int r = i / (D / 8), c = (i % (D / 8)) * 8, s = q0 + r;
        if (s < a.S)
            copy16(&sm->q[r * D + c], q + (((long long)b * a.S + s) * a.H + h) * D + c);
        else
            zero16(&sm->q[r * D + c]);
    }
    for (int i = tid; i < FA_BQ * D; i += nt)
        sm->o[i] = 0;
    for (int i = tid; i < FA_BQ; i += nt) {
        sm->m[i] = -INFINITY;
        sm->l[i] = 0;
    }
}

template <class T, int D>
__host__ __device__ void fa_load_kv(fa_smem<T, D> *sm, const fa_args &a, int t0, int h, int b, int tid, int nt)
{
    constexpr int BK = fa_smem<T, D>::BK;
    const int kvh = h / (a.H / a.Hkv);
    const T *k = (const T *)a.k, *v = (const T *)a.v;
    for (int i = tid; i < BK * (D / 8); i += nt) {
        const int r = i / (D / 8), c = (i % (D / 8)) * 8, t = t0 + r;
        if (t < a.T) {
            const long long at = (((long long)b * a.T + t) * a.Hkv + kvh) * D + c;
            copy16(&sm->k[r * D + c], k + at);
            copy16(&sm->v[r * D + c], v + at);
        } else {
            zero16(&sm->k[r * D + c]);
            zero16(&sm->v[r * D + c]);
        }
    }
}

// S[64][BK] = Q[64][D] K[BK][D]^T: 16x16 output tiles shared out among the warps. K^T is K read
// column-major (element (d, j) at k[j * D + d]).
template <class T, int D> __host__ __device__ void fa_scores(fa_smem<T, D> *sm, int warp, int nw)
{
    constexpr int BK = fa_smem<T, D>::BK;
    for (int f = warp; f < (FA_BQ / 16) * (BK / 16); f += nw) {
        const int fi = f / (BK / 16), fj = f % (BK / 16);
#ifdef __CUDA_ARCH__
        wm::fragment<wm::accumulator, 16, 16, 16, float> acc;
        wm::fill_fragment(acc, 0.0f);
#pragma unroll
        for (int kk = 0; kk < D / 16; kk++) {
            wm::fragment<wm::matrix_a, 16, 16, 16, T, wm::row_major> fa;
            wm::fragment<wm::matrix_b, 16, 16, 16, T, wm::col_major> fb;
            wm::load_matrix_sync(fa, sm->q + fi * 16 * D + kk * 16, D);
            wm::load_matrix_sync(fb, sm->k + fj * 16 * D + kk * 16, D);
            wm::mma_sync(acc, fa, fb, acc);
        }
        wm::store_matrix_sync(sm->s + fi * 16 * BK + fj * 16, acc, BK, wm::mem_row_major);
#else
        for (int i = 0; i < 16; i++)
            for (int jj = 0; jj < 16; jj++) {
                float acc = 0;
                for (int d = 0; d < D; d++)
                    acc += to_f(sm->q[(fi * 16 + i) * D + d]) * to_f(sm->k[(fj * 16 + jj) * D + d]);
                sm->s[(fi * 16 + i) * BK + fj * 16 + jj] = acc;
            }
#endif
    }
}

// Two threads per row, each over half of the tile's columns: partial maxima of the visible scores.
template <class T, int D>
__host__ __device__ void fa_softmax_max(fa_smem<T, D> *sm, const fa_args &a, int q0, int t0, int tid, int nt)
{
    constexpr int BK = fa_smem<T, D>::BK;
    for (int i = tid; i < 2 * FA_BQ; i += nt) {
        const int r = i / 2, c0 = (i % 2) * (BK / 2);
        float mx = -INFINITY;
        for (int c = c0; c < c0 + BK / 2; c++)
            if (fa_visible(a, q0, r, t0 + c))
                mx = fmaxf(mx, sm->s[r * BK + c] * a.scale_log2);
        sm->rmax[i] = mx;
    }
}

// P = exp(S - m') in the input type, partial sums, and the rescaling of O's row by alpha.
template <class T, int D>
__host__ __device__ void fa_softmax_exp(fa_smem<T, D> *sm, const fa_args &a, int q0, int t0, int tid, int nt)
{
    constexpr int BK = fa_smem<T, D>::BK;
    for (int i = tid; i < 2 * FA_BQ; i += nt) {
        const int r = i / 2, half = i % 2, c0 = half * (BK / 2);
        const float mold = sm->m[r], mnew = fmaxf(mold, fmaxf(sm->rmax[2 * r], sm->rmax[2 * r + 1]));
        const bool none = mnew == -INFINITY; // nothing visible yet: keep O and l as they are
        const float alpha = none ? 1.0f : exp2f(mold - mnew);
        float sum = 0;
        for (int c = c0; c < c0 + BK / 2; c++) {
            float p = 0;
            if (!none && fa_visible(a, q0, r, t0 + c))
                p = exp2f(sm->s[r * BK + c] * a.scale_log2 - mnew);
            const T pt = from_f<T>(p);
            sm->p[r * BK + c] = pt;
            sum += to_f(pt); // the sum of what P V multiplies
        }
        sm->rsum[i] = sum;
        for (int d = half * (D / 2); d < (half + 1) * (D / 2); d++)
            sm->o[r * D + d] *= alpha;
        if (!half) {
            sm->alpha[r] = alpha;
            sm->mnext[r] = mnew;
        }
    }
}

// O[64][D] += P[64][BK] V[BK][D], the accumulators loaded from and stored back to shared memory.
template <class T, int D> __host__ __device__ void fa_pv(fa_smem<T, D> *sm, int warp, int nw)
{
    constexpr int BK = fa_smem<T, D>::BK;
    for (int f = warp; f < (FA_BQ / 16) * (D / 16); f += nw) {
        const int fi = f / (D / 16), fj = f % (D / 16);
#ifdef __CUDA_ARCH__
        wm::fragment<wm::accumulator, 16, 16, 16, float> acc;
        wm::load_matrix_sync(acc, sm->o + fi * 16 * D + fj * 16, D, wm::mem_row_major);
#pragma unroll
        for (int kk = 0; kk < BK / 16; kk++) {
            wm::fragment<wm::matrix_a, 16, 16, 16, T, wm::row_major> fa;
            wm::fragment<wm::matrix_b, 16, 16, 16, T, wm::row_major> fb;
            wm::load_matrix_sync(fa, sm->p + fi * 16 * BK + kk * 16, BK);
            wm::load_matrix_sync(fb, sm->v + kk * 16 * D + fj * 16, D);
            wm::mma_sync(acc, fa, fb, acc);
        }
        wm::store_matrix_sync(sm->o + fi * 16 * D + fj * 16, acc, D, wm::mem_row_major);
#else
        for (int i = 0; i < 16; i++)
            for (int jj = 0; jj < 16; jj++) {
                float acc = sm->o[(fi * 16 + i) * D + fj * 16 + jj];
                for (int c = 0; c < BK; c++)
                    acc += to_f(sm->p[(fi * 16 + i) * BK + c]) * to_f(sm->v[c * D + fj * 16 + jj]);
                sm->o[(fi * 16 + i) * D + fj * 16 + jj] = acc;
            }
#endif
    }
}

// m and l take the tile's values (run in the same phase as fa_pv: it touches neither).
template <class T, int D> __host__ __device__ void fa_commit(fa_smem<T, D> *sm, int tid, int nt)
{
    for (int r = tid; r < FA_BQ; r += nt) {
        sm->l[r] = sm->l[r] * sm->alpha[r] + sm->rsum[2 * r] + sm->rsum[2 * r + 1];
        sm->m[r] = sm->mnext[r];
    }
}

template <class T, int D>
__host__ __device__ void fa_store(fa_smem<T, D> *sm, const fa_args &a, int q0, int h, int b, int tid, int nt)
{
    T *o = (T *)a.o;
    for (int i = tid; i < FA_BQ * D; i += nt) {
        const int r = i / D, c = i % D, s = q0 + r;
        if (s < a.S) {
            const float l = sm->l[r];
            o[(((long long)b * a.S + s) * a.H + h) * D + c] = from_f<T>(l > 0 ? sm->o[i] / l : 0.0f);
        }
    }
}

template <class T, int D> __global__ void __launch_bounds__(FA_THREADS) fa_kernel(fa_args a)
{
    extern __shared__ __align__(128) unsigned char fa_raw[];
    fa_smem<T, D> *sm = reinterpret_cast<fa_smem<T, D> *>(fa_raw);
    constexpr int BK = fa_smem<T, D>::BK;
    const int q0 = blockIdx.x * FA_BQ, h = blockIdx.y, b = blockIdx.z, tid = threadIdx.x, warp = tid >> 5;
    fa_load_q(sm, a, q0, h, b, tid, FA_THREADS);
    const int end = fa_kv_end(a, q0);
    for (int t0 = 0; t0 < end; t0 += BK) {
        __syncthreads();
        fa_load_kv(sm, a, t0, h, b, tid, FA_THREADS);
        __syncthreads();
        fa_scores(sm, warp, FA_WARPS);
        __syncthreads();
        fa_softmax_max(sm, a, q0, t0, tid, FA_THREADS);
        __syncthreads();
        fa_softmax_exp(sm, a, q0, t0, tid, FA_THREADS);
        __syncthreads();
        fa_pv(sm, warp, FA_WARPS);
        fa_commit(sm, tid, FA_THREADS);
    }
    __syncthreads();
    fa_store(sm, a, q0, h, b, tid, FA_THREADS);
}

// ---- attention, decode (S <= KCUI_FD_MAX_S): keys split across blocks, fp32 FMA ----
// One block per (key split, group of hb query heads sharing a kv head, query): W warps per head walk
// the split's keys (a warp per key: each lane holds D/32 elements of q, k and v, the dot product is a
// butterfly sum, identical in every lane), with the online softmax per warp. The warps of a head merge
// in shared memory and write the split's unnormalized output, maximum and sum; fd_combine merges the
// splits. The heads of a group read the same K and V rows in one block, so the cache is read once
// per split, and the splits fill the GPU when B x H alone would not.

template <class T, int D>
__global__ void __launch_bounds__(256) fd_split_kernel(fa_args a, float *po, float *pm, float *pl, int splits, int chunk,
                                                      int hb, int W)
{
    constexpr int E = D / 32;
    __shared__ float sacc[8][D], sm[8], sl[8];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = warp / W, w = warp % W;
    const int split = blockIdx.x, z = blockIdx.z, b = z / a.S, s = z % a.S;
    const int h = blockIdx.y * hb + g, kvh = h / (a.H / a.Hkv);
    const int lim = a.causal ? a.T - a.S + s + 1 : a.T, tb = split * chunk, te = tb + chunk < lim ? tb + chunk : lim;
    const T *qp = (const T *)a.q + (((long long)b * a.S + s) * a.H + h) * D + lane * E;
    const long long row = (long long)a.Hkv * D, base = ((long long)b * a.T * a.Hkv + kvh) * D + lane * E;
    const T *kb = (const T *)a.k + base, *vb = (const T *)a.v + base;
    float qv[E], acc[E], m = -INFINITY, l = 0;
#pragma unroll
    for (int e = 0; e < E; e++) {
        qv[e] = to_f(qp[e]) * a.scale_log2;
        acc[e] = 0;
    }
#pragma unroll 4
    for (int t = tb + w; t < te; t += W) {
        const T *kp = kb + t * row, *vp = vb + t * row;
        float d = 0;
#pragma unroll
        for (int e = 0; e < E; e++)
            d += qv[e] * to_f(kp[e]);
        d = warp_sum(d);
        const float mn = fmaxf(m, d), al = exp2f(m - mn), p = exp2f(d - mn);
        l = l * al + p;
#pragma unroll
        for (int e = 0; e < E; e++)
            acc[e] = acc[e] * al + p * to_f(vp[e]);
        m = mn;
    }
#pragma unroll
    for (int e = 0; e < E; e++)
        sacc[warp][lane * E + e] = acc[e];
    if (lane == 0) {
        sm[warp] = m;
        sl[warp] = l;
    }
    __syncthreads();
    if (w)
        return;
    float M = -INFINITY, L = 0, o[E];
    for (int u = 0; u < W; u++)
        M = fmaxf(M, sm[g * W + u]);
#pragma unroll
    for (int e = 0; e < E; e++)
        o[e] = 0;
    for (int u = 0; u < W; u++) {
        const float mu = sm[g * W + u], wt = mu == -INFINITY ? 0.0f : exp2f(mu - M);
        L += sl[g * W + u] * wt;
#pragma unroll
        for (int e = 0; e < E; e++)
            o[e] += sacc[g * W + u][lane * E + e] * wt;
    }
    const long long idx = ((long long)z * a.H + h) * splits + split;
#pragma unroll
    for (int e = 0; e < E; e++)
        po[idx * D + lane * E + e] = o[e];
    if (lane == 0) {
        pm[idx] = M;
        pl[idx] = L;
    }
}

// o = sum_i O_i 2^(m_i - M) / sum_i l_i 2^(m_i - M) over the splits; one thread per output element.
template <class T, int D>
__global__ void fd_combine_kernel(const float *po, const float *pm, const float *pl, T *o, int H, int splits)
{
    const int h = blockIdx.x, z = blockIdx.y, d = threadIdx.x;
    const long long base = ((long long)z * H + h) * splits;
    float M = -INFINITY, L = 0, acc = 0;
    for (int i = 0; i < splits; i++)
        M = fmaxf(M, pm[base + i]);
    for (int i = 0; i < splits; i++) {
        const float mi = pm[base + i];
        if (mi == -INFINITY)
            continue;
        const float wt = exp2f(mi - M);
        L += pl[base + i] * wt;
        acc += po[(base + i) * D + d] * wt;
    }
    o[((long long)z * H + h) * D + d] = from_f<T>(L > 0 ? acc / L : 0.0f);
}

static fa_args attn_args(const struct kcui_job *j)
{
    const struct kcu_case *c = j->c;
    fa_args a;
    a.q = j->buf[0];
    a.k = j->buf[1];
    a.v = j->buf[2];
    a.o = j->buf[3];
    a.B = (int)c->attn.B;
    a.H = (int)c->attn.H;
    a.Hkv = (int)(c->attn.Hkv ? c->attn.Hkv : c->attn.H);
    a.S = (int)c->attn.S;
    a.T = (int)(c->attn.T ? c->attn.T : c->attn.S);
    a.causal = (int)c->attn.causal;
    a.scale_log2 = (float)(1.4426950408889634 / sqrt((double)c->attn.D));
    return a;
}

// Heads per decode block: the largest divisor of the group size H / Hkv up to 8; warps per head W
// make up to 8 warps.
static void fd_shape(const fa_args &a, int *hb, int *W)
{
    const int G = a.H / a.Hkv;
    *hb = 1;
    for (int d = 8; d >= 1; d--)
        if (G % d == 0) {
            *hb = d;
            break;
        }
    *W = 8 / *hb > 1 ? 8 / *hb : 1;
}

// Setup (launch == 0: shared memory attribute, splits, impl) or one run.
template <class T, int D> static int attn_do(struct kcui_job *j, int launch)
{
    const fa_args a = attn_args(j);
    const char *tn = j->c->prec == KCU_BF16 ? "bf16" : "fp16";
    if (a.S > KCUI_FD_MAX_S) {
        const size_t smem = sizeof(fa_smem<T, D>);
        const dim3 grid((unsigned)((a.S + FA_BQ - 1) / FA_BQ), (unsigned)a.H, (unsigned)a.B);
        if (launch) {
            fa_kernel<T, D><<<grid, FA_THREADS, smem, j->st>>>(a);
            return 0;
        }
        if ((int)smem > j->smem_optin)
            return kcui_skip(j, "attention D = %d needs %zu bytes of shared memory per block; this GPU allows %d", D, smem,
                             j->smem_optin);
        TRY(kcui_cuda(j, cudaFuncSetAttribute(fa_kernel<T, D>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem),
                      "cudaFuncSetAttribute (attention shared memory)"));
        snprintf(j->impl, sizeof j->impl, "kcu flash attention %s (wmma 16x16x16; %dx%d tiles)", tn, FA_BQ,
                 fa_smem<T, D>::BK);
        return 0;
    }
    int hb, W;
    fd_shape(a, &hb, &W);
    float *po = (float *)j->ws, *pm = po + (size_t)a.B * a.S * a.H * j->splits * D, *pl = pm + (size_t)a.B * a.S * a.H * j->splits;
    if (launch) {
        fd_split_kernel<T, D><<<dim3((unsigned)j->splits, (unsigned)(a.H / hb), (unsigned)(a.B * a.S)), hb * W * 32, 0,
                                j->st>>>(a, po, pm, pl, j->splits, j->chunk, hb, W);
        fd_combine_kernel<T, D><<<dim3((unsigned)a.H, (unsigned)(a.B * a.S)), D, 0, j->st>>>(po, pm, pl, (T *)a.o, a.H,
                                                                                          j->splits);
        return 0;
    }
    // Enough splits for about two blocks per SM, none shorter than KCUI_FD_CHUNK_MIN keys.
    const long long blocks = (long long)a.B * a.S * (a.H / hb), most = (a.T + KCUI_FD_CHUNK_MIN - 1) / KCUI_FD_CHUNK_MIN;
    long long want = (2LL * j->sms + blocks - 1) / blocks;
    want = std::max(1LL, std::min(want, std::min<long long>(most, KCUI_FD_MAX_SPLITS)));
    j->chunk = (int)((a.T + want - 1) / want);
    j->splits = (a.T + j->chunk - 1) / j->chunk;
    snprintf(j->impl, sizeof j->impl, "kcu split-key decode %s (fp32 FMA; %d splits)", tn, j->splits);
    return 0;
}

template <class T> static int attn_dispatch(struct kcui_job *j, int launch)
{
    switch (j->c->attn.D) {
    case 32: return attn_do<T, 32>(j, launch);
    case 64: return attn_do<T, 64>(j, launch);
    case 96: return attn_do<T, 96>(j, launch);
    default: return attn_do<T, 128>(j, launch);
    }
}

int kcui_attn_setup(struct kcui_job *j)
{
    return j->c->prec == KCU_BF16 ? attn_dispatch<__nv_bfloat16>(j, 0) : attn_dispatch<__half>(j, 0);
}

int kcui_attn_launch(struct kcui_job *j)
{
    return j->c->prec == KCU_BF16 ? attn_dispatch<__nv_bfloat16>(j, 1) : attn_dispatch<__half>(j, 1);
}

// ---- the prefill kernel on the host ----
// The block's threads and warps run one phase at a time, in the order of fa_kernel's barriers.

template <class T, int D> static int fa_emulate(const fa_args &a0, const float *q, const float *k, const float *v, float *o)
{
    constexpr int BK = fa_smem<T, D>::BK;
    const size_t nq = (size_t)a0.B * a0.S * a0.H * D, nkv = (size_t)a0.B * a0.T * a0.Hkv * D;
    std::vector<T> qh(nq), kh(nkv), vh(nkv), oh(nq);
    for (size_t i = 0; i < nq; i++)
        qh[i] = from_f<T>(q[i]);
    for (size_t i = 0; i < nkv; i++) {
        kh[i] = from_f<T>(k[i]);
        vh[i] = from_f<T>(v[i]);
    }
    fa_args a = a0;
    a.q = qh.data();
    a.k = kh.data();
    a.v = vh.data();
    a.o = oh.data();
    std::vector<fa_smem<T, D>> smv(1);
    fa_smem<T, D> *sm = smv.data();
    for (int b = 0; b < a.B; b++)
        for (int h = 0; h < a.H; h++)
            for (int q0 = 0; q0 < a.S; q0 += FA_BQ) {
                for (int t = 0; t < FA_THREADS; t++)
                    fa_load_q(sm, a, q0, h, b, t, FA_THREADS);
                const int end = fa_kv_end(a, q0);
                for (int t0 = 0; t0 < end; t0 += BK) {
                    for (int t = 0; t < FA_THREADS; t++)
                        fa_load_kv(sm, a, t0, h, b, t, FA_THREADS);
                    for (int w = 0; w < FA_WARPS; w++)
                        fa_scores(sm, w, FA_WARPS);
                    for (int t = 0; t < FA_THREADS; t++)
                        fa_softmax_max(sm, a, q0, t0, t, FA_THREADS);
                    for (int t = 0; t < FA_THREADS; t++)
                        fa_softmax_exp(sm, a, q0, t0, t, FA_THREADS);
                    for (int w = 0; w < FA_WARPS; w++)
                        fa_pv(sm, w, FA_WARPS);
                    for (int t = 0; t < FA_THREADS; t++)
                        fa_commit(sm, t, FA_THREADS);
                }
                for (int t = 0; t < FA_THREADS; t++)
                    fa_store(sm, a, q0, h, b, t, FA_THREADS);
            }
    for (size_t i = 0; i < nq; i++)
        o[i] = to_f(oh[i]);
    return 0;
}

template <class T> static int fa_emulate_d(const fa_args &a, int D, const float *q, const float *k, const float *v, float *o)
{
    switch (D) {
    case 32: return fa_emulate<T, 32>(a, q, k, v, o);
    case 64: return fa_emulate<T, 64>(a, q, k, v, o);
    case 96: return fa_emulate<T, 96>(a, q, k, v, o);
    case 128: return fa_emulate<T, 128>(a, q, k, v, o);
    default: return -1;
    }
}

extern "C" int kcui_attention_emulate(const struct kcu_case *c, const float *q, const float *k, const float *v, float *o)
{
    if (!c || c->kind != KCU_ATTENTION || kcu_validate(c, nullptr, 0))
        return -1;
    struct kcui_job j;
    memset(&j, 0, sizeof j);
    j.c = c;
    fa_args a = attn_args(&j);
    try {
        return c->prec == KCU_BF16 ? fa_emulate_d<__nv_bfloat16>(a, (int)c->attn.D, q, k, v, o)
                                   : fa_emulate_d<__half>(a, (int)c->attn.D, q, k, v, o);
    } catch (...) { // out of host memory
        return -1;
    }
}
