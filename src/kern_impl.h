/* kern_impl.h: loop annotations shared by the native kernels (not part of the kern interface). */
#ifndef DSE_KERN_IMPL_H
#define DSE_KERN_IMPL_H

#ifdef _OPENMP
#define KERN_SIMD _Pragma("omp simd")
#define KERN_PRAGMA(x) _Pragma(#x)
#define KERN_SIMD_SUM(v) KERN_PRAGMA(omp simd reduction(+ : v))
#define KERN_PAR_ROWS _Pragma("omp parallel for num_threads(nt) if (nt > 1) schedule(static)")
#else
#define KERN_SIMD
#define KERN_SIMD_SUM(v)
#define KERN_PAR_ROWS (void)nt;
#endif

/* Hot loops are also compiled for x86-64-v3 (AVX2, FMA) and v4 (AVX-512) and picked at load time
 * (GCC's target_clones, an ifunc), so the project's plain -O2 build still uses the wide vectors. */
#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#define KERN_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define KERN_CLONES
#endif

#endif
