/* dpacct — the Rényi divergence of a composition at one order (real or
 * complex): `dpacct renyi --order A SPEC`.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Definition (LT Def 2.2, eq 8; docs/rdp.md, "The Rényi divergence of a composition").  For a dominating pair
 * (P, Q) with privacy loss W = log dP/dQ and a complex order A,
 *     E(A-1) = int P^A Q^{1-A} = E_P[e^{(A-1) W}],
 *     D_A(P||Q) = log E(A-1) / (A - 1),
 * wherever the integral converges absolutely.  The spec's composition is the
 * product of its leaves' dominating pairs (counts included), so
 *     log E(A-1) = sum_i count_i log E_i(A-1),
 * one sum per direction: "remove" is the composed leaf pairs as built
 * (D_A(P||Q)), "add" the composed reversed pairs (D_A(Q||P), from
 * E_rev(z) = E(-1-z), LT eq 7).  Under replace-one adjacency every leaf pair
 * is symmetric and the two coincide.
 *
 * Real orders A > 0: D_A is in [0, +inf].  A = 1 is the KL divergence.  The
 * result carries a certified interval [lower, upper] (the true D_A of the
 * spec's dominating pairs lies in it, round-off included) and a value:
 *   - closed forms (Gaussian/GDP: A mu^2/2; randomized response, pure,
 *     approx, discrete Laplace and subsampled atom pairs: exact log-sum-exp;
 *     Laplace: Mironov 2017 Table 2): value exact up to round-off, interval
 *     as narrow as the round-off, `certified` = `tight` = 1;
 *   - exponential_mechanism (and report_noisy_max with Gumbel noise),
 *     unsampled or Poisson-subsampled: value = upper = the divergence of the
 *     class's dominating (envelope) pair, which no member attains,
 *     `certified` = 1, `tight` = 0; lower = the divergence of the best
 *     two-point member of the epsilon-bounded-range class (a certified lower
 *     bound on the class's largest divergence); under sample, lower 0;
 *   - zcdp, repeat_and_select, laplace_svt, gaussian_svt (a bound, not a
 *     pair; real orders only): value = upper = the leaf's RDP bound as the
 *     rdp method composes it, lower 0 ("upper: the leaf's RDP bound; lower:
 *     0, the leaf is a bound, not a pair");
 *   - A > 1 otherwise (Poisson-subsampled Gaussian/Laplace, sampling without
 *     replacement, subsampled compositions): value = upper = the certified
 *     bound of the RDP module (docs/rdp.md §2), `certified` = 1; lower from
 *     a certified lower quadrature (Poisson-subsampled Gaussian, both
 *     directions, also at A = 1), the binomial expansion where it applies
 *     (remove direction of a Poisson-subsampled closed-form base), else the
 *     trivial 0 (said in note);
 *   - 0 < A <= 1 otherwise: value = a numerical estimate (the phi module's
 *     quadrature, docs/phi.md §2; for sampling without replacement the
 *     series bound below), `certified` = 0; lower from the series of the RDP
 *     module at gamma = A (certified and usually tight; at A = 1 through
 *     KL >= D_{1-1e-3}), upper from D_A <= min(D_b(P||Q), A/(1-A) D_b(Q||P))
 *     at b = 1 + 1e-3 (certified, loose).  Subsampled compositions have no
 *     estimate: value = upper (certified), lower = 0.
 *
 * Complex orders (im != 0, Re A > 0): value only (lower = upper = NAN).  The
 * logarithm is the analytic continuation from the real axis: per leaf,
 *     log E_i(r + it) = log E_i(r) + [continuous change of arg and log|E_i|
 *                       along the vertical segment from r to r + it],
 * r = Re A - 1, the real log at t = 0, and the composition's log E is
 * sum_i count_i log E_i (never the principal log of the product: counts may be
 * 1e15).  Where E_i has no zero in the rectangle between the segment and the
 * real axis this is the unique continuation of the real function log E_i.
 * Gaussian leaves are continued in closed form ((A-1) A mu^2/2, an entire
 * function: D_A = A mu^2/2 exactly); other leaves are evaluated by the phi
 * module (exact sums for atoms, closed forms for Laplace, quadrature for
 * Poisson-subsampled Gaussian/Laplace) and the branch is followed in steps
 * (docs/rdp.md, "The Rényi divergence of a composition").  `certified` = 1 when every leaf is a finite sum or
 * closed form and every step of the branch tracking was certified by a
 * Lipschitz bound; otherwise 0 (an estimate).  im(D_A) is defined modulo
 * nothing: it is this particular continuation.
 *
 * Existence (`exists` = 0, with the reason in note): real A >= 1 and some leaf
 * has mass at loss +inf in that direction (approx with delta > 0, the
 * non-private pair): D_A = +inf (value = lower = upper = +INFINITY); real
 * A < 1 and the composed pair is mutually singular: D_A = +inf; complex A with
 * Re A >= 1 and mass at +inf: E diverges (Re A > 1) or is undefined
 * (Re A = 1), D_A does not exist (value NAN); complex A where E_i vanishes
 * on the path (no continuous logarithm): reported as DPA_ENUMERIC instead
 * (a numerical zero cannot be told from a tiny value).
 *
 * Nothing here keeps global mutable state; the functions are reentrant.
 */
#ifndef DPACCT_RENYI_H
#define DPACCT_RENYI_H

#include "event.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Parse an order: a real decimal number ("2", "0.5", "1e3", ".5", "+2") or
 * a complex one written re+imi or re-imi ("1.5+2i", "1.5-2i", "1.5+i",
 * "1.5+2.5e-1i"); no whitespace, no "inf"/"nan"/hexadecimal forms.  A pure
 * imaginary order ("2i") has Re A = 0 and is refused, as is any Re A <= 0
 * (the divergence is defined for Re A > 0 only; LT §3, Fig. on the region of
 * convergence excludes Re A = 0).  "2+0i" is the real order 2.
 * On success *re, *im are set (im = 0 for a real order).  Errors: DPA_EINVAL
 * with a message quoting the text (NULL arguments, empty string, malformed
 * number, trailing characters, a value that overflows, Re A <= 0); *re and
 * *im are then left unchanged. */
dpa_status dpa_renyi_parse_order(const char *s, double *re, double *im, dpa_error *err);

/* One direction of the result. */
typedef struct dpa_renyi_value {
    /* D_A: re + i im (im = 0 for real orders).  Real orders: +INFINITY when
     * D_A = +inf; complex orders: NAN when D_A does not exist. */
    double re, im;
    /* log E(A-1) = (A-1) D_A in the documented branch (the quantity that
     * composes additively); +INFINITY/-INFINITY or NAN like re. */
    double log_e_re, log_e_im;
    /* Real orders: certified lower <= D_A <= upper (lower = 0 and
     * upper = +INFINITY when nothing better is known).  Complex: NAN. */
    double lower, upper;
    int exists;    /* 1: D_A is finite (real) / E converges and is nonzero (complex) */
    int certified; /* 1: re is proven: exact up to round-off, or (real A > 1,
                    * and A <= 1 for subsampled compositions) re = upper, a certified
                    * upper bound.  0: re is a numerical estimate (quadrature);
                    * lower/upper are still certified */
    int tight;     /* 1: upper - lower <= DPA_RENYI_TIGHT * upper (real orders), or
                    * the complex value is exact up to round-off */
    char note[160];/* how the value was obtained, or why it does not exist */
} dpa_renyi_value;

/* Relative width of [lower, upper] below which a real result is "tight":
 * far above the round-off allowances of the closed forms (~1e-15 relative)
 * and of the binomial/series bounds (~1e-12), far below any difference that
 * matters for a privacy claim. */
#define DPA_RENYI_TIGHT 1e-9

typedef struct dpa_renyi_result {
    double order_re, order_im; /* the order A */
    int symmetric;             /* 1: every leaf pair is symmetric, add == remove */
    dpa_renyi_value remove;    /* D_A(P||Q) of the composed remove pairs */
    dpa_renyi_value add;       /* D_A(Q||P) */
    /* Real orders: the direction with the larger upper bound, numbered like
     * dpa_direction (accountant.h): 0 both (symmetric, or upper bounds within
     * DPA_RENYI_TIGHT relative of each other, including both +inf), 1 remove,
     * 2 add.  Complex orders: 0. */
    int binding;
} dpa_renyi_result;

/* The Rényi divergence of order A = re + i im of the spec's composition, both
 * directions (see the top of this file for the definition, the branch, what
 * is certified and the existence conditions).
 * Domain: spec non-NULL, re > 0 and finite, im finite (0 for a real order).
 * The spec is read, not kept; *out is the caller's and is fully written on
 * success (on error its content is unspecified).
 * Errors (err may be NULL):
 *   DPA_EINVAL       NULL spec/out, order outside the domain, a total count
 *                    above DPA_MAX_COUNT;
 *   DPA_EUNSUPPORTED a leaf the module cannot evaluate at this order, with the
 *                    reason naming it: zcdp leaves (a Rényi bound, not a pair),
 *                    discrete_gaussian (truncated atom list: the omitted atoms'
 *                    share of E is unbounded for A > 1), subsampled
 *                    compositions and sampling without replacement at complex
 *                    orders (no characteristic function), Poisson subsampling
 *                    of bases other than Gaussian/Laplace/atoms, orders above
 *                    the RDP module's limits for subsampled compositions;
 *   DPA_ENUMERIC     a quadrature or series could not produce a value, or the
 *                    complex Rényi function is numerically zero on the path
 *                    (its logarithm, hence the branch, cannot be followed);
 *   DPA_ENOMEM. */
dpa_status dpa_renyi(const dpa_spec *spec, double re, double im, dpa_renyi_result *out, dpa_error *err);

#ifdef __cplusplus
}
#endif
#endif
