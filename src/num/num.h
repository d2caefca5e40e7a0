/* Internal numerics: log-space arithmetic, the normal distribution in the far
 * tails, root finding and an FFT wrapper with plan reuse.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * None of these functions touch global mutable state of the library.  Calls
 * into GSL save GSL's error handler, switch it off for the call, and restore
 * it (dpa_gsl_guard), so a caller's handler is never left changed. */
#ifndef DPA_NUM_H
#define DPA_NUM_H

#include <stddef.h>
#include <complex.h>
#include <fftw3.h>
#include <gsl/gsl_errno.h>
#include "dpacct/status.h"

/* Unit round-off of double (2^-53); every error allowance is a multiple. */
#define DPA_UNIT_ROUNDOFF 1.1102230246251565e-16

/* ---------- directed rounding (rounding.c) ----------
 * A long double rounded to the double at or above (dpa_ld_up) / at or below
 * (dpa_ld_dn) it; NaN gives the trivial side (+INFINITY / -INFINITY). */
double dpa_ld_up(long double x);
double dpa_ld_dn(long double x);

/* ---------- log-space arithmetic (log_arith.c) ----------
 * Arguments may be -INFINITY (log 0).  Never return NaN for non-NaN input
 * inside the documented domain. */
double dpa_log_add_exp(double a, double b);   /* log(e^a + e^b) */
/* log(e^a - e^b) for a >= b; -INFINITY when a == b; NaN if a < b (caller bug). */
double dpa_log_sub_exp(double a, double b);
/* log(e^a - e^b), or -INFINITY when b >= a: for differences of tails that
 * are non-negative in exact arithmetic but may not be after round-off. */
double dpa_log_sub_exp_clamped(double a, double b);
double dpa_log1mexp(double a);                /* log(1 - e^a), a <= 0; -INF at 0 */
/* log(sum_i e^{x[i]}) over n values (n = 0: -INFINITY). */
double dpa_log_sum_exp(const double *x, size_t n);

/* ---------- standard normal (normal.c) ---------- */
/* log Phi(x) with relative accuracy ~1e-15 for all finite x, including
 * x -> -inf (asymptotic: -x^2/2 - log(-x) - log(sqrt(2 pi)) + ...). log Phi(+inf) = 0,
 * log Phi(-inf) = -inf. */
double dpa_log_ndtr(double x);
/* log Phibar(x) = log(1 - Phi(x)) = dpa_log_ndtr(-x). */
double dpa_log_ndtr_c(double x);
/* Phi(x), Phibar(x) (plain; underflow to 0 in the far tail). */
double dpa_ndtr(double x);
/* Phi^{-1}(p) for p in (0,1); -inf at 0, +inf at 1; NaN outside [0,1]. */
double dpa_ndtri(double p);
/* Phi^{-1}(e^logp) for logp <= 0, accurate for tiny probabilities
 * (logp down to -1e300 without underflow). */
double dpa_ndtri_log(double logp);

/* ---------- root finding (root.c) ---------- */
typedef double (*dpa_fn)(double x, void *ctx);

/* Bisection on [lo, hi] where f(lo) and f(hi) have opposite signs (or one is
 * zero).  Stops when hi - lo <= xtol_abs + xtol_rel * |x| or after 200 steps.
 * Returns the final bracket in *out_lo, *out_hi (f(out_lo) and f(out_hi)
 * keep the original signs), so the caller chooses the side that is safe.
 * DPA_ENUMERIC if the initial bracket has no sign change or f returns NaN. */
dpa_status dpa_bisect(dpa_fn f, void *ctx, double lo, double hi,
                      double xtol_abs, double xtol_rel,
                      double *out_lo, double *out_hi);

/* Find a sign change of f by scanning from x0 in steps that grow
 * geometrically (step, 2*step, 4*step, ...) in direction dir (+1 or -1),
 * staying within [xmin, xmax].  On success *a, *b (a < b) bracket a sign change
 * with no sign change skipped between x0 and the bracket (scan, then bisect:
 * avoids the spurious roots of a wide bisection where e^eps amplifies
 * round-off, docs/guarantees.md §2.1).
 * DPA_ENUMERIC if no sign change is found before the limit. */
dpa_status dpa_scan_bracket(dpa_fn f, void *ctx, double x0, double step, int dir,
                            double xmin, double xmax, double *a, double *b);

/* ---------- GSL error-handler guard (gsl_guard.c) ---------- */
/* Saved handler.  Usage:
 *   dpa_gsl_guard g = dpa_gsl_guard_begin(); ... GSL calls ...; dpa_gsl_guard_end(g);
 * begin switches GSL's handler off, end restores the caller's.  The handler is
 * stored with its own function-pointer type (a function pointer cannot be
 * converted to void * in strict C11).  GSL's handler is process-global:
 * guards hold a (recursive) lock from begin to end, so the library's worker
 * threads may use them. */
typedef struct { gsl_error_handler_t *saved; } dpa_gsl_guard;
dpa_gsl_guard dpa_gsl_guard_begin(void);
void dpa_gsl_guard_end(dpa_gsl_guard g);

/* ---------- fork-join tasks (parallel.c) ---------- */
/* Most threads dpa_parallel_for runs (worker indices stay below it): the
 * compositions of a PLD build are at most four (two directions, upper and
 * lower), so more would idle, and each costs a composition workspace. */
#define DPA_THREADS_MAX 4
/* Online processors, capped at DPA_THREADS_MAX (at least 1). */
int dpa_threads_default(void);
/* Run fn(ctx, task, worker) for task = 0 .. ntasks-1 on up to nthreads
 * threads (the caller's included; worker in [0, nthreads) names the thread,
 * for per-thread scratch).  Returns when all tasks are done.  If a thread
 * cannot be created the remaining ones do the work. */
void dpa_parallel_for(size_t ntasks, int nthreads, void (*fn)(void *ctx, size_t task, int worker), void *ctx);

/* ---------- FFT with plan reuse (fft.c) ---------- */
/* A plan cache for real-to-complex / complex-to-real transforms of length n.
 * Plans are made with FFTW_ESTIMATE on buffers owned by the cache and reused
 * through fftw's new-array execute functions, so callers must pass arrays from
 * dpa_fft_alloc_* (fftw_malloc alignment).  One per accountant; the
 * threads of one accountant may share it (the cache is locked, and FFTW's
 * new-array execute is thread safe).  FFTW's planner itself is
 * process-global: accountants used from several threads at once need
 * fftw_make_planner_thread_safe (docs/architecture.md). */
typedef struct dpa_fft dpa_fft;
/* cache_dir: the plan cache directory (dpa_options.fft_cache_dir; copied),
 * or NULL. */
dpa_fft *dpa_fft_new(const char *cache_dir);
void dpa_fft_free(dpa_fft *f);
/* Smallest n' >= n of the form 2^a 3^b 5^c 7^d with n' even; 0 if n too large. */
size_t dpa_fft_good_size(size_t n);
double *dpa_fft_alloc_real(size_t n);                 /* fftw_malloc; free with fftw_free */
fftw_complex *dpa_fft_alloc_complex(size_t n);        /* n complex values */
/* out[0..n/2] = sum_m in[m] e^{-2 pi i j m / n}.  in is preserved. */
dpa_status dpa_fft_r2c(dpa_fft *f, size_t n, double *in, fftw_complex *out);
/* out[m] = sum_j in[j] e^{+2 pi i j m / n} over the Hermitian extension
 * (unnormalized: c2r(r2c(x)) = n x).  in is destroyed. */
dpa_status dpa_fft_c2r(dpa_fft *f, size_t n, fftw_complex *in, double *out);

#endif
