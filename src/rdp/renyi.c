/* The Rényi divergence of a composition at one real or complex order
 * (include/dpacct/renyi.h; docs/rdp.md, "The Rényi divergence of a composition").
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Notation (docs/rdp.md §1).  A leaf's remove pair p = (P, Q), W = log dP/dQ,
 * E_p(theta) = E_P[e^{theta W}] = int P^{1+theta} Q^{-theta}  (LT Def 2.2 / eq 8
 * with q = 1 + theta).  At the order A (theta = A - 1):
 *   remove:  log E = sum_i k_i log E_{p_i}(theta),         D_A = log E / theta
 *   add:     log E = sum_i k_i log E_{p_i}(-1 - theta),    (E_rev(z) = E(-1-z), LT eq 7)
 * so every per-pair computation below is "log E_p at theta'" for the remove
 * pair, theta' = theta (remove) or -1 - theta (add); both directions map
 * orders A in (0, 1) to theta' in (-1, 0).
 *
 * Real orders: per leaf a certified interval of its count-weighted share of
 * D_A and a value (exact closed forms, the RDP module's certified upper
 * bounds, or the phi module's quadrature); shares add.  Complex orders: per
 * leaf log E_p(z) on the documented branch (renyi.h): closed form for the
 * Gaussian, otherwise the phi module's log M(r + it) = log M(r) + i t m(r) +
 * psi(t) with psi's branch followed along t (track_branch below).
 *
 * Nothing here keeps global mutable state.
 */
#include <complex.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dpacct/renyi.h"
#include "model/leaves.h"
#include "event/event_internal.h"
#include "mech/pair.h"
#include "num/num.h"
#include "phi/phi.h"
#include "rdp/rdp.h"

/* C11's CMPLX is missing from some toolchains (clang with older glibc) */
#ifndef CMPLX
#define CMPLX(x, y) __builtin_complex((double)(x), (double)(y))
#endif

#define U DPA_UNIT_ROUNDOFF

/* Allowance on a stored log mass of an atom, per unit of |log mass| + 2:
 * the pair constructors compute each with a few rounded operations (log1p,
 * exp, a subtraction), off by at most ~3u (|l| + 1); the same margin as the
 * RDP module's RDP_ATOM_LOG_ERR (rdp_pair.c). */
#define RENYI_ATOM_LOG_ERR 4.0
/* Error of glibc's lgamma for positive arguments: <= 4 ulp on x86_64 (glibc
 * manual, "Known Maximum Errors"); 16u (|lgamma| + 1) allows a factor 4
 * (the RDP module's RDP_LGAMMA_ERR). */
#define RENYI_LGAMMA_ERR 16.0
/* b - 1 for the certified upper bounds at orders A <= 1 of leaves without a
 * closed form: D_A <= D_1 <= D_b (monotonicity) and
 * D_A(P||Q) <= A/(1-A) D_b(Q||P) (convexity of log E between theta = -1 and
 * theta = -b; docs/rdp.md, "The Rényi divergence of a composition").  D_b
 * exceeds KL by about (b - 1) Var(W)/2, so 1e-3 keeps the bound within 0.1%
 * of a variance of the KL divergence,
 * while the RDP module's absolute round-off near order 1 (a few u (b+1)/(b-1)
 * ~ 1e-12, docs/rdp.md §6) stays negligible. */
#define RENYI_BETA_STEP 1e-3
/* KL lower bound for leaves without a closed form: KL >= D_{1-h}, whose
 * lower bound comes from the series' certified upper bound on log E(-h).
 * log E(-h) = -h KL + h^2 Var/2 + ..., so the bound is within h Var/2 of KL;
 * the series' absolute error (~1e-16 on log E) is amplified by only 1/h. */
#define RENYI_KL_H 1e-3
/* Largest integer order for the binomial-expansion lower bound (n + 1
 * terms, each with three lgamma calls and a closed-form base moment). */
#define RENYI_BINOM_MAX 100000
/* Branch tracking (complex orders).  Cost cap on the evaluations per leaf. */
#define RENYI_TRACK_MAX_STEPS 200000
/* Certified steps are used while the rest of the path takes at most this
 * many of them at the current step length (a cost cap; beyond it the
 * heuristic steps below take over). */
#define RENYI_TRACK_CERTIFIED_STEPS 20000
/* Largest phase change accepted for an uncertified (heuristic) step, on
 * each half of the step: well inside (-pi, pi), so a winding would have to
 * hide between three samples spaced by a step that has already been halved
 * until the phase moves slowly. */
#define RENYI_TRACK_ANGLE (M_PI / 4)
/* Largest estimated absolute error of psi (a relative error of E_i) at which
 * a value is still reported: beyond it the Rényi function is too close to
 * zero, relative to its round-off, for its logarithm (and the branch) to be
 * known. */
#define RENYI_PSI_ERR_MAX 1e-6

/* ------------------------------------------------------------------ small helpers */

static double up(double x, double k) { return dpa_rdp_up(x, k); }
static double dn(double x, double k)
{
    if (!isfinite(x) || x == 0) return x;
    return x - k * U * fabs(x);
}

/* x/theta with the rounding pushed up (dir > 0) or down */
static double div_dir(double x, double theta, int dir)
{
    if (isnan(x)) return x;
    double q = x / theta;
    return dir > 0 ? up(q, 2) : dn(q, 2);
}

static double wrap_pi(double x)
{
    return x - 2 * M_PI * nearbyint(x / (2 * M_PI));
}

static const char *pair_kind_name(const dpa_pair *p)
{
    switch (p->kind) {
    case DPA_PAIR_ATOMS: return "atoms";
    case DPA_PAIR_GAUSSIAN: return "gaussian";
    case DPA_PAIR_LAPLACE: return "laplace";
    case DPA_PAIR_POISSON: return "poisson-subsampled";
    case DPA_PAIR_REVERSE: return "reversed";
    case DPA_PAIR_SYMMETRIZE: return "sample (replace-one symmetrized)";
    case DPA_PAIR_MIXGAUSS: return "gaussian mixture";
    case DPA_PAIR_LABELLED: return "labelled mixture";
    }
    return "unknown";
}

/* ------------------------------------------------------------------ parsing */

/* Length of a decimal number at s (digits with an optional point, at least
 * one digit, optional exponent with at least one digit); 0 if there is none
 * or it is malformed (an exponent without digits). */
static size_t scan_number(const char *s)
{
    size_t i = 0, nd = 0;
    while (isdigit((unsigned char)s[i])) i++, nd++;
    if (s[i] == '.') {
        i++;
        while (isdigit((unsigned char)s[i])) i++, nd++;
    }
    if (nd == 0) return 0;
    if (s[i] == 'e' || s[i] == 'E') {
        size_t j = i + 1;
        if (s[j] == '+' || s[j] == '-') j++;
        if (!isdigit((unsigned char)s[j])) return 0;
        while (isdigit((unsigned char)s[j])) j++;
        i = j;
    }
    return i;
}

/* strtod of the n characters at s, which scan_number accepted */
static int to_double(const char *s, size_t n, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end != s + n) return -1;
    if (!isfinite(v)) return -1; /* overflow */
    *out = v;
    return 0;
}

dpa_status dpa_renyi_parse_order(const char *s, double *re, double *im, dpa_error *err)
{
    if (!s || !re || !im) return dpa_error_set(err, DPA_EINVAL, "renyi order: NULL argument");
    const char *bad = "renyi order \"%.64s\": expected a number such as 2, 0.5, 1e3 or a complex order such as "
                      "1.5+2i (no spaces)";
    if (!*s) return dpa_error_set(err, DPA_EINVAL, "renyi order: empty (expected a number such as 2 or 1.5+2i)");
    size_t i = 0;
    double sg = 1, r = 0, m = 0;
    if (s[0] == '+' || s[0] == '-') {
        sg = s[0] == '-' ? -1 : 1;
        i = 1;
    }
    size_t n1 = scan_number(s + i);
    if (n1 == 0) {
        if (s[i] == 'i' && s[i + 1] == '\0') /* "i", "-i" */
            return dpa_error_set(err, DPA_EINVAL,
                                 "renyi order \"%.64s\": the real part must be > 0 (got 0): D_A is defined for "
                                 "Re A > 0 only",
                                 s);
        return dpa_error_set(err, DPA_EINVAL, bad, s);
    }
    double v1;
    if (to_double(s + i, n1, &v1)) return dpa_error_set(err, DPA_EINVAL, "renyi order \"%.64s\": out of range", s);
    const char *rest = s + i + n1;
    if (*rest == '\0') {
        r = sg * v1;
    } else if (rest[0] == 'i' && rest[1] == '\0') {
        /* pure imaginary: Re A = 0 */
        return dpa_error_set(err, DPA_EINVAL,
                             "renyi order \"%.64s\": the real part must be > 0 (got 0): D_A is defined for "
                             "Re A > 0 only",
                             s);
    } else if (rest[0] == '+' || rest[0] == '-') {
        double sg2 = rest[0] == '-' ? -1 : 1;
        const char *t = rest + 1;
        size_t n2 = scan_number(t);
        if (t[n2] != 'i' || t[n2 + 1] != '\0') return dpa_error_set(err, DPA_EINVAL, bad, s);
        double v2 = 1; /* "1.5+i" */
        if (n2 && to_double(t, n2, &v2))
            return dpa_error_set(err, DPA_EINVAL, "renyi order \"%.64s\": out of range", s);
        r = sg * v1;
        m = sg2 * v2;
    } else {
        return dpa_error_set(err, DPA_EINVAL, bad, s);
    }
    if (!(r > 0))
        return dpa_error_set(err, DPA_EINVAL,
                             "renyi order \"%.64s\": the real part must be > 0 (got %g): D_A is defined for "
                             "Re A > 0 only",
                             s, r);
    *re = r;
    *im = m;
    return DPA_OK;
}

/* ------------------------------------------------------------------ pair classification */

static int truncated(const dpa_pair *p)
{
    for (; p; p = p->base)
        if (p->slack_hi > 0 || p->slack_lo > 0) return 1;
    return 0;
}

/* 1 if the pair, in direction dir, has mass at loss +inf under its first
 * measure (remove: an atom with w = +inf and A-mass > 0; add: one with
 * w = -inf and B-mass > 0).  Every transform lists its atoms (pair.c). */
static int pair_inf(const dpa_pair *p, int dir)
{
    for (size_t i = 0; i < p->natoms; i++) {
        const dpa_atom *a = &p->atoms[i];
        if (!dir && a->w == INFINITY && a->la > -INFINITY) return 1;
        if (dir && a->w == -INFINITY && a->lb > -INFINITY) return 1;
    }
    return 0;
}

/* The same for a leaf.  A composite leaf's inner remove pair (the product of
 * the inner leaves' remove pairs) has mass at +inf iff one of them has; its
 * Poisson remove pair (qP + (1-q)Q, Q) keeps q times it, its add pair
 * (Q, qP + (1-q)Q) has none (q < 1), and the symmetrized pair (sample) has
 * it in both directions. */
static int leaf_inf(const dpa_leaf *l, int dir)
{
    if (l->pair) return pair_inf(l->pair, dir);
    if (!l->inner) return 0;
    if (dir && !l->sample) return 0;
    for (size_t i = 0; i < l->inner->n; i++)
        if (leaf_inf(&l->inner->v[i], 0)) return 1;
    return 0;
}

/* 1 if log E_p has a closed form here (atoms, Gaussian, Laplace, and their
 * reversals) */
static int closed_kind(const dpa_pair *p)
{
    switch (p->kind) {
    case DPA_PAIR_ATOMS:
    case DPA_PAIR_GAUSSIAN:
    case DPA_PAIR_LAPLACE: return 1;
    case DPA_PAIR_REVERSE: return closed_kind(p->base);
    default: return 0;
    }
}

/* 1 if the phi module evaluates the pair (phi_leaf.c: atoms, Gaussian,
 * Laplace, Poisson over Gaussian/Laplace, reversals of these) */
static int phi_kind(const dpa_pair *p)
{
    switch (p->kind) {
    case DPA_PAIR_ATOMS:
    case DPA_PAIR_GAUSSIAN:
    case DPA_PAIR_LAPLACE: return 1;
    case DPA_PAIR_POISSON: return p->base->kind == DPA_PAIR_GAUSSIAN || p->base->kind == DPA_PAIR_LAPLACE;
    case DPA_PAIR_REVERSE: return phi_kind(p->base);
    default: return 0;
    }
}

/* A pair the RDP module bounds at orders > 1 and whose continuous parts the
 * series/quadrature of this file reach at orders in (0, 1): closed kinds,
 * Poisson over Gaussian/Laplace, their symmetrizations, reversals. */
static int bounded_kind(const dpa_pair *p)
{
    switch (p->kind) {
    case DPA_PAIR_ATOMS:
    case DPA_PAIR_GAUSSIAN:
    case DPA_PAIR_LAPLACE: return 1;
    case DPA_PAIR_POISSON: return p->base->kind == DPA_PAIR_GAUSSIAN || p->base->kind == DPA_PAIR_LAPLACE;
    case DPA_PAIR_REVERSE: return bounded_kind(p->base);
    case DPA_PAIR_SYMMETRIZE:
        return p->base->symmetric ? bounded_kind(p->base)
                                  : (p->base->kind == DPA_PAIR_POISSON && bounded_kind(p->base));
    case DPA_PAIR_MIXGAUSS: return 0; /* orders > 1 only (Jensen bound, rdp_pair.c) */
    case DPA_PAIR_LABELLED: return 0; /* orders > 1 only (rdp_pair.c) */
    }
    return 0;
}

/* A pair the RDP module bounds (certified, from above) at orders > 1 only:
 * Gaussian mixtures (the Jensen bound of rdp_pair.c, exact for one
 * component and for the subsampled form {0: 1 - q, c: q}), the labelled
 * mixtures of truncated_poisson, Poisson over a mixture, their reversals.
 * Orders in (0, 1] have no certified value for them here. */
static int upper_only_kind(const dpa_pair *p)
{
    switch (p->kind) {
    case DPA_PAIR_MIXGAUSS:
    case DPA_PAIR_LABELLED: return 1;
    case DPA_PAIR_POISSON: return p->base->kind == DPA_PAIR_MIXGAUSS;
    case DPA_PAIR_REVERSE: return bounded_kind(p->base) || upper_only_kind(p->base);
    default: return 0;
    }
}

/* ------------------------------------------------------------------ closed forms (real theta) */

/* log E of the atoms at theta (not 0, -1), with an absolute error bound.
 * An atom at W = +inf (b = 0 < a) makes E infinite for theta > 0 and adds 0
 * for theta < 0; one at W = -inf (a = 0 < b) is infinite for theta < -1 and
 * adds 0 for theta > -1 (LT eq 8). */
static double atoms_log_e(const dpa_pair *p, double theta, double *e)
{
    double m = -INFINITY, emax = 0;
    size_t n = 0;
    for (size_t i = 0; i < p->natoms; i++) {
        double la = p->atoms[i].la, lb = p->atoms[i].lb;
        if (la == -INFINITY && lb == -INFINITY) continue;
        if (la == -INFINITY) {
            if (theta < -1) return INFINITY;
            continue;
        }
        if (lb == -INFINITY) {
            if (theta > 0) return INFINITY;
            continue;
        }
        double l = (1 + theta) * la - theta * lb;
        double ei = RENYI_ATOM_LOG_ERR * U * (fabs(1 + theta) * (fabs(la) + 2) + fabs(theta) * (fabs(lb) + 2)) +
                    3 * U * (fabs((1 + theta) * la) + fabs(theta * lb));
        if (l > m) m = l;
        if (ei > emax) emax = ei;
        n++;
    }
    if (m == -INFINITY) {
        *e = 0;
        return -INFINITY;
    }
    double s = 0;
    for (size_t i = 0; i < p->natoms; i++) {
        double la = p->atoms[i].la, lb = p->atoms[i].lb;
        if (la == -INFINITY || lb == -INFINITY) continue;
        s += exp((1 + theta) * la - theta * lb - m);
    }
    double v = m + log(s);
    /* n positive terms: each exp within u (1 + its argument's rounding,
     * whose weighted share x e^{-x} is <= 1/e), the sum within n u, the log
     * and the final addition within u |v| + u */
    *e = emax + (2.0 * (double)n + 4) * U + U * (fabs(v) + fabs(m));
    return v;
}

/* log E of an atoms-only pair (or the atoms of a Laplace pair plus its
 * continuous part: e0 > 0) in the form log1p(E - 1), accurate where E is
 * near 1 (orders near 1, where log-sum-exp keeps only an absolute accuracy
 * of a few u, i.e. a relative accuracy of u/|log E| on D_A).  With phi the
 * exponent and the masses of the first measure (rev = 1: the reversed pair,
 * E_p(theta) = E_rev(-1 - theta), so phi = -1 - theta), and the true masses
 * summing to 1,
 *     E - 1 = sum_i m_i expm1(phi w_i) - m(W = +inf) + C0 expm1(lr),
 * the last term for Laplace's continuous part (C0 = (1 - e^{-e0})/2 its mass,
 * lr = log(C(phi)/C0) = phi e0 + log1p(y) - log1p(2 phi),
 * y = e^{-e0} (1 - e^{-2 phi e0})/(1 - e^{-e0}), from laplace_cont).  Every
 * term is O(phi) with a relative error of a few u, so E - 1 keeps a
 * relative accuracy.  Requires |phi| <= 1/4 (1 + 2 phi > 0) and phi w <= 700
 * (no overflow); returns NAN otherwise.  *e: absolute error bound on log E.
 * Error model per term: m_i = e^{l_m} within RENYI_ATOM_LOG_ERR u (|l_m| + 2)
 * + 2u relative; w_i = la - lb within RENYI_ATOM_LOG_ERR u (|la| + |lb| + 4)
 * + u |w| absolute, which moves m expm1(phi w) by m |phi| e^{phi w} times
 * that; expm1 and the product within 3u relative; the sum within (n + 2) u
 * of the sum of magnitudes. */
static double near1_log_e(const dpa_pair *p, double phi, int rev, double e0, double *e)
{
    if (!(fabs(phi) <= 0.25)) return NAN;
    double s = 0, mag = 0, es = 0;
    size_t n = 0;
    for (size_t i = 0; i < p->natoms; i++) {
        double la = rev ? p->atoms[i].lb : p->atoms[i].la, lb = rev ? p->atoms[i].la : p->atoms[i].lb;
        if (la == -INFINITY) continue; /* no mass in the first measure: adds 0 for phi > -1 */
        double m = exp(la), rm = RENYI_ATOM_LOG_ERR * U * (fabs(la) + 2) + 2 * U;
        if (lb == -INFINITY) { /* W = +inf: e^{phi W} = 0 for phi < 0 (phi > 0 is infinite: not here) */
            if (phi > 0) return NAN;
            s -= m;
            mag += m;
            es += m * rm;
            n++;
            continue;
        }
        double w = la - lb;
        if (phi * w > 700) return NAN;
        double x = expm1(phi * w), t = m * x;
        double ew = RENYI_ATOM_LOG_ERR * U * (fabs(la) + fabs(lb) + 4) + U * fabs(w);
        s += t;
        mag += fabs(t);
        es += fabs(t) * (rm + 3 * U) + m * fabs(phi) * exp(phi * w) * (ew + U * fabs(w));
        n++;
    }
    if (e0 > 0) {
        double c0 = -0.5 * expm1(-e0);
        double y = exp(-e0) * (-expm1(-2 * phi * e0)) / (-expm1(-e0));
        double lr = phi * e0 + log1p(y) - log1p(2 * phi);
        double elr = U * fabs(phi * e0) + 6 * U * fabs(y) / (1 + y) + U * fabs(log1p(y)) + U * fabs(log1p(2 * phi)) +
                     3 * U * fabs(2 * phi) / (1 + 2 * phi) + 3 * U * fabs(lr);
        double x = expm1(lr), t = c0 * x;
        s += t;
        mag += fabs(t);
        es += fabs(t) * 5 * U + c0 * exp(lr) * elr;
        n++;
    }
    es += ((double)n + 2) * U * mag;
    if (!(1 + s - es > 0)) return NAN;
    double v = log1p(s);
    *e = es / (1 + s - es) + 2 * U * fabs(v);
    return v;
}

/* log((1 - e^{-x})/x), any real x (0 at x = 0) */
static double log_ratio(double x)
{
    if (x == 0) return 0.0;
    if (x > 0) return log(-expm1(-x)) - log(x);
    if (-x > 700) return -x + dpa_log1mexp(x) - log(-x);
    return log(expm1(-x)) - log(-x);
}

/* Laplace's continuous part (eps0 = e0): log of
 * e^{theta e0} (1 - e^{-(1+2 theta) e0}) / (2 (1 + 2 theta)) and its
 * absolute error (the formula and allowance of rdp_pair.c) */
static double laplace_cont(double e0, double theta, double *e)
{
    double x = (1 + 2 * theta) * e0;
    double l = -M_LN2 + theta * e0 + log(e0) + log_ratio(x);
    *e = 3 * U * fabs(x) + 4 * U * (M_LN2 + fabs(theta * e0) + fabs(log(e0)) + fabs(log_ratio(x)) + 4);
    return l;
}

/* log E_p(theta) in closed form (closed_kind(p)), theta not 0 or -1, with an
 * absolute error bound *e; +-INFINITY allowed. */
static double closed_log_e(const dpa_pair *p, double theta, double *e)
{
    switch (p->kind) {
    case DPA_PAIR_GAUSSIAN: {
        double v = theta * (1 + theta) * (0.5 * p->par[0] * p->par[0]);
        *e = 5 * U * fabs(v); /* four roundings */
        return v;
    }
    case DPA_PAIR_ATOMS: {
        /* near theta = 0 or -1 (orders near 1, either direction) the E - 1
         * form; elsewhere log-sum-exp */
        double v = NAN;
        if (fabs(theta) <= 0.25) v = near1_log_e(p, theta, 0, 0, e);
        else if (fabs(1 + theta) <= 0.25) v = near1_log_e(p, -1 - theta, 1, 0, e);
        return isnan(v) ? atoms_log_e(p, theta, e) : v;
    }
    case DPA_PAIR_LAPLACE: {
        /* symmetric: E(theta) = E(-1 - theta) */
        double v = NAN;
        if (fabs(theta) <= 0.25) v = near1_log_e(p, theta, 0, p->par[0], e);
        else if (fabs(1 + theta) <= 0.25) v = near1_log_e(p, -1 - theta, 0, p->par[0], e);
        if (!isnan(v)) return v;
        double ea, la = atoms_log_e(p, theta, &ea);
        if (la == INFINITY) return la;
        double ec, lc = laplace_cont(p->par[0], theta, &ec);
        v = dpa_log_add_exp(la, lc);
        *e = fmax(ea, ec) + 3 * U * (fabs(v) + 1);
        return v;
    }
    case DPA_PAIR_REVERSE: return closed_log_e(p->base, -1 - theta, e);
    default: *e = INFINITY; return NAN;
    }
}

/* KL(P||Q) (rev = 0) or KL(Q||P) in closed form, value and absolute error */
static double closed_kl(const dpa_pair *p, int rev, double *e)
{
    switch (p->kind) {
    case DPA_PAIR_GAUSSIAN: {
        double v = 0.5 * p->par[0] * p->par[0];
        *e = 4 * U * v;
        return v;
    }
    case DPA_PAIR_LAPLACE: {
        /* KL(Lap(0,b) || Lap(s,b)) = e0 + e^{-e0} - 1, both directions */
        double e0 = p->par[0];
        *e = 4 * U * (e0 + 1);
        return e0 + expm1(-e0);
    }
    case DPA_PAIR_REVERSE: return closed_kl(p->base, !rev, e);
    case DPA_PAIR_ATOMS: {
        /* sum over atoms of a (la - lb): each term's relative error is that of
         * e^{la} (4u (|la| + 4)) and of the difference of logs
         * (4u (|la| + |lb| + 8) / |w|), as in rdp_pair.c; the plain sum adds
         * n u of the sum of magnitudes */
        double s = 0, mag = 0, eabs = 0;
        size_t n = 0;
        for (size_t i = 0; i < p->natoms; i++) {
            double la = rev ? p->atoms[i].lb : p->atoms[i].la, lb = rev ? p->atoms[i].la : p->atoms[i].lb;
            if (la == -INFINITY) continue;
            if (lb == -INFINITY) {
                *e = 0;
                return INFINITY;
            }
            double w = la - lb;
            if (w == 0) continue;
            double t = exp(la) * w;
            double r = RENYI_ATOM_LOG_ERR * U * (fabs(la) + 4) +
                       RENYI_ATOM_LOG_ERR * U * (fabs(la) + fabs(lb) + 8) / fabs(w);
            s += t;
            mag += fabs(t);
            eabs += fabs(t) * r;
            n++;
        }
        *e = eabs + ((double)n + 2) * U * mag;
        return s;
    }
    default: *e = INFINITY; return NAN;
    }
}

/* ------------------------------------------------------------------ certified bounds without closed forms */

/* Atoms of p into an RDP accumulator at theta (the RDP module's error model);
 * returns 1 if E is infinite. */
static int atoms_into(const dpa_pair *p, double theta, dpa_rdp_acc *acc)
{
    for (size_t i = 0; i < p->natoms; i++) {
        double la = p->atoms[i].la, lb = p->atoms[i].lb;
        if (la == -INFINITY && lb == -INFINITY) continue;
        if (la == -INFINITY) {
            if (theta < -1) return 1;
            continue;
        }
        if (lb == -INFINITY) {
            if (theta > 0) return 1;
            continue;
        }
        double l = (1 + theta) * la - theta * lb;
        double e = RENYI_ATOM_LOG_ERR * U * (fabs(1 + theta) * (fabs(la) + 2) + fabs(theta) * (fabs(lb) + 2)) +
                   3 * U * (fabs((1 + theta) * la) + fabs(theta * lb));
        dpa_rdp_acc_add(acc, l, 1, expm1(e));
    }
    return 0;
}

/* The continuous part of a Poisson pair r over Gaussian/Laplace base with
 * exponent gamma over base losses (lo, hi), an upper bound on its log */
static dpa_status poisson_cont(const dpa_pair *r, double gamma, double lo, double hi, double *out, dpa_error *err)
{
    const dpa_pair *b = r->base;
    if (b->lcb == -INFINITY) {
        *out = -INFINITY;
        return DPA_OK;
    }
    return dpa_rdp_mix_log_integral(b->kind, b->par[0], r->par[0], gamma, lo, hi, out, err);
}

/* A certified upper bound on log E_p(theta) for theta in (-1, 0) (orders in
 * (0, 1)), for the kinds of bounded_kind.  The RDP module's dpa_rdp_log_e
 * covers theta outside [-1, 0]; inside, the same formulas hold
 * (docs/rdp.md §2: E = int beta(x) (1 - q + q e^x)^{1+theta} dx for the
 * continuous part of a Poisson pair, gamma = 1 + theta in (0, 1), where the
 * MTZ19 series with its Leibniz tail (Gaussian base) or the certified
 * quadrature (Laplace base) applies), and the symmetrization's split of
 * docs/rdp.md §2.6. */
static dpa_status upper_log_e_mid(const dpa_pair *p, double theta, double *out, dpa_error *err)
{
    double e, l;
    dpa_status st = DPA_OK;
    if (closed_kind(p)) {
        l = closed_log_e(p, theta, &e);
        *out = l + e;
        return DPA_OK;
    }
    if (p->kind == DPA_PAIR_REVERSE) return upper_log_e_mid(p->base, -1 - theta, out, err);
    dpa_rdp_acc acc;
    dpa_rdp_acc_init(&acc);
    if (atoms_into(p, theta, &acc)) { /* not reached for theta in (-1, 0) */
        dpa_rdp_acc_free(&acc);
        *out = INFINITY;
        return DPA_OK;
    }
    if (p->kind == DPA_PAIR_POISSON) {
        st = poisson_cont(p, 1 + theta, -INFINITY, INFINITY, &l, err);
        if (!st) dpa_rdp_acc_add(&acc, l, 1, 0.0); /* already an upper bound */
    } else if (p->kind == DPA_PAIR_SYMMETRIZE) {
        const dpa_pair *r = p->base;
        if (r->symmetric) {
            dpa_rdp_acc_free(&acc);
            return upper_log_e_mid(r, theta, out, err);
        }
        double l2;
        /* W_R > 0 exactly when the base loss x > 0 (rdp_pair.c) */
        st = poisson_cont(r, 1 + theta, 0.0, INFINITY, &l, err);
        if (!st) st = poisson_cont(r, -theta, 0.0, INFINITY, &l2, err);
        if (!st) {
            dpa_rdp_acc_add(&acc, l, 1, 0.0);
            dpa_rdp_acc_add(&acc, l2, 1, 0.0);
        }
    } else {
        st = dpa_error_set(err, DPA_EUNSUPPORTED, "renyi: no bound for a %s pair at this order", pair_kind_name(p));
    }
    if (!st) {
        *out = dpa_rdp_acc_log_upper(&acc, -INFINITY);
        if (isnan(*out)) st = dpa_error_set(err, DPA_ENOMEM, "out of memory");
    }
    dpa_rdp_acc_free(&acc);
    return st;
}

/* log C(n, k) and its absolute error (lgamma, RENYI_LGAMMA_ERR) */
static double log_choose(double n, double k, double *e)
{
    int s;
    double a = lgamma_r(n + 1, &s), b = lgamma_r(k + 1, &s), d = lgamma_r(n - k + 1, &s);
    *e = RENYI_LGAMMA_ERR * U * (fabs(a) + fabs(b) + fabs(d) + 3);
    return a - b - d;
}

/* A certified lower bound on log E of a Poisson pair p (base with a closed
 * form) at the integer order n = 1 + theta >= 2 (remove direction): the
 * binomial expansion of (qP + (1-q)Q)^n Q^{1-n},
 *   E = sum_{k=0}^n C(n,k) q^k (1-q)^{n-k} M_k,   M_k = E_base(k - 1),
 * M_0 = M_1 = 1 (MTZ19 §3.1; Zhu & Wang 2019 for any base).  As in the RDP
 * module, the k = 0, 1 terms and the 1's of the others sum to 1 exactly, so
 *   E - 1 = sum_{k>=2} C(n,k) q^k (1-q)^{n-k} (M_k - 1),
 * positive terms (M_k >= 1 for k >= 2) summed with relative accuracy even
 * when E is near 1 (small rates), each rounded down; log E = log1p. */
static double binom_lower(const dpa_pair *p, double n)
{
    const dpa_pair *b = p->base;
    double q = p->par[0], lq = log(q), l1q = log1p(-q);
    double m = -INFINITY, emax = 0, s = 0;
    size_t nt = 0;
    /* two passes: the largest term and the largest error, then the sum
     * scaled by the largest term */
    for (int pass = 0; pass < 2; pass++) {
        for (double k = 2; k <= n; k++) {
            double ec, lc = log_choose(n, k, &ec);
            double em, lm = closed_log_e(b, k - 1, &em);
            if (lm == INFINITY) return INFINITY;
            lm -= em; /* a lower bound on log M_k */
            if (!(lm > 0)) continue;
            double lx = lm > 1 ? lm + dpa_log1mexp(-lm) : log(expm1(lm)); /* log(M_k - 1), within 4u */
            double t = lc + k * lq + (n - k) * l1q + lx;
            if (pass == 0) {
                double e = ec + 4 * U * (fabs(lc) + fabs(k * lq) + fabs((n - k) * l1q) + fabs(lx) + 2) +
                           k * U * fabs(lq) + (n - k) * 2 * U * fabs(l1q) + 4 * U * (lm > 1 ? 1 : 1 / lm) * lm;
                if (t > m) m = t;
                if (e > emax) emax = e;
                nt++;
            } else {
                s += exp(t - m);
            }
        }
        if (pass == 0 && m == -INFINITY) return 0.0; /* E >= 1 */
    }
    /* each term within emax + u, the sum within nt u, the log and addition */
    double ls = m + log(s) - emax - ((double)nt + 4) * U - U * (fabs(m) + fabs(log(s)));
    return (ls > 30 ? dpa_log_add_exp(0.0, ls) : log1p(exp(ls))) * (1 - 2 * U);
}

/* A certified lower bound on log E_p(theta) for theta > 0 or < -1 (orders
 * > 1) where one is cheap: closed forms; the remove direction of a Poisson
 * pair over a closed-form base at integer orders (binom_lower), and at
 * fractional orders A > 2 the extension of the chord between the integer
 * orders floor(A) - 1 and floor(A) (log E is convex: a chord extended beyond
 * its interval lies below it), with the lower bound at floor(A) and the RDP
 * module's upper bound at floor(A) - 1.  Otherwise 0 (E >= 1 at these
 * orders: Jensen).  *how: 1 if the binomial expansion was used. */
static dpa_status lower_log_e_out(const dpa_pair *p, double theta, double *out, int *how, dpa_error *err)
{
    *how = 0;
    if (closed_kind(p)) {
        double e, v = closed_log_e(p, theta, &e);
        *out = fmax(0.0, v - e);
        return DPA_OK;
    }
    if (p->kind == DPA_PAIR_REVERSE) return lower_log_e_out(p->base, -1 - theta, out, how, err);
    *out = 0;
    if (p->kind != DPA_PAIR_POISSON || theta <= 0 || !closed_kind(p->base)) return DPA_OK;
    double a = 1 + theta, n1 = floor(a);
    if (n1 < 2 || n1 > RENYI_BINOM_MAX) return DPA_OK;
    double l1 = binom_lower(p, n1);
    if (a == n1) {
        *out = fmax(0.0, l1);
        *how = 1;
        return DPA_OK;
    }
    /* chord through theta0 = n1 - 2 and theta1 = n1 - 1, extended to theta */
    double l0 = 0; /* theta0 = 0: log E(0) = log P(W finite) <= 0 */
    if (n1 - 2 > 0) {
        dpa_status st = dpa_rdp_log_e(p, n1 - 2, &l0, err);
        if (st) return st;
    }
    if (!isfinite(l0) || !isfinite(l1)) return DPA_OK;
    double f = theta - (n1 - 1); /* in (0, 1) */
    double v = (1 + f) * l1 - f * l0;
    v -= 4 * U * ((1 + f) * fabs(l1) + f * fabs(l0) + 1);
    if (v > *out) {
        *out = v;
        *how = 1;
    }
    return DPA_OK;
}

/* ------------------------------------------------------------------ phi estimates */

/* log M(r) and the tilted mean of the pair in direction dir (phi module:
 * the finite part of the first measure, docs/phi.md §1) */
static dpa_status phi_moments(const dpa_pair *p, int dir, double r, double *logm, double *mean, dpa_error *err)
{
    dpa_phi_leaf l;
    dpa_status st = dpa_phi_leaf_init(&l, p, dir, 1.0, err);
    if (st) return st;
    dpa_phi_tilt tl;
    memset(&tl, 0, sizeof tl);
    st = dpa_phi_tilt_prepare(&l, r, 0.0, &tl, err);
    if (!st) {
        *logm = tl.logM;
        *mean = tl.mean;
    }
    dpa_phi_tilt_clear(&tl);
    dpa_phi_leaf_clear(&l);
    return st;
}

/* ------------------------------------------------------------------ composite leaves (RDP module) */

/* Count-weighted upper bounds on D_b of one composite leaf at the orders
 * b[0..n) (> 1, increasing) in direction dir, through the RDP accountant
 * (docs/rdp.md §2.7). */
static dpa_status composite_upper(const dpa_leaf *lf, const double *b, size_t n, int dir, double *out, dpa_error *err)
{
    dpa_rdp *a = dpa_rdp_new(b, n, err);
    if (!a) return err ? err->status : DPA_ENOMEM;
    dpa_leaf one = *lf; /* a shallow copy in a one-leaf set: read only */
    dpa_leafset s;
    memset(&s, 0, sizeof s);
    s.v = &one;
    s.n = 1;
    s.composite = 1;
    s.asymmetric = !lf->sample;
    s.total_count = lf->count;
    dpa_status st = dpa_rdp_add_leafset(a, &s, err);
    if (!st) st = dpa_rdp_curve(a, dir, out, err);
    dpa_rdp_free(a);
    return st;
}

/* ------------------------------------------------------------------ real orders */

enum { CLS_EXACT = 0, CLS_UPPER = 1, CLS_EST = 2 };
/* how a direction's value came about (bits, for the note) */
enum {
    H_CLOSED = 1,    /* closed forms */
    H_RDP = 2,       /* the RDP module's certified upper bound (A > 1) */
    H_BINOM = 4,     /* lower bound from the binomial expansion */
    H_LOW0 = 8,      /* some leaf's lower bound is the trivial 0 */
    H_PHI = 16,      /* the phi module's quadrature estimate */
    H_BETA = 32,     /* upper bound through D_b, b = 1 + RENYI_BETA_STEP */
    H_SERIES = 64,   /* lower bound from the series/quadrature upper bound on log E */
    H_COMP = 128,    /* a composite leaf: value = upper bound */
    H_INF = 256,     /* mass at +inf (A >= 1): D_A = +inf */
    H_SING = 512,    /* E = 0: mutually singular (A < 1) */
    H_SERVAL = 1024, /* value = the series-based bound (no quadrature estimate) */
    H_HEUR = 2048    /* complex: some branch step was heuristic */
};

typedef struct lres {
    double lo, hi, val; /* count-weighted share of D_A */
    int cls;
    int how;
} lres;

static void set_inf(lres *o, int how)
{
    o->lo = o->hi = o->val = INFINITY;
    o->cls = CLS_EXACT;
    o->how = how;
}

static dpa_status unsupported_leaf(const dpa_leaf *lf, dpa_error *err)
{
    if (!lf->pair && !lf->inner)
        return dpa_error_set(err, DPA_EUNSUPPORTED,
                             "renyi: a zcdp leaf is a bound on Renyi divergences, not a dominating pair: the "
                             "composition's divergence is not a value (only the rdp method accounts zcdp)");
    if (lf->pair && truncated(lf->pair))
        return dpa_error_set(err, DPA_EUNSUPPORTED,
                             "renyi: a leaf with omitted mass (a discrete_gaussian's truncated atom list or a "
                             "truncated sample_with_replacement mixture: omitted masses %g/%g) is not supported: "
                             "the omitted part's share of E[e^{(A-1)W}] is not bounded by its mass",
                             lf->pair->slack_hi, lf->pair->slack_lo);
    return dpa_error_set(err, DPA_EUNSUPPORTED, "renyi: a leaf of kind %s is not supported",
                         lf->pair ? pair_kind_name(lf->pair) : "composite");
}

static dpa_status leaf_real(const dpa_leaf *lf, double A, int dir, lres *o, dpa_error *err)
{
    double k = lf->count, theta = A - 1;
    dpa_status st;
    memset(o, 0, sizeof *o);
    if (!lf->pair && !lf->inner) return unsupported_leaf(lf, err);
    if (A >= 1 && leaf_inf(lf, dir)) {
        set_inf(o, H_INF);
        return DPA_OK;
    }
    if (!lf->pair) {
        /* composite leaf (a subsampled composition): certified upper bounds of
         * the RDP accountant, lower bound 0 */
        double b[1] = {A > 1 ? A : 1 + RENYI_BETA_STEP}, ud, uo = INFINITY;
        st = composite_upper(lf, b, 1, dir, &ud, err);
        if (!st && A < 1) st = composite_upper(lf, b, 1, !dir, &uo, err);
        if (st) return st;
        o->lo = 0;
        o->hi = A >= 1 ? ud : fmin(ud, up(A / (1 - A) * uo, 4));
        o->val = o->hi;
        o->cls = CLS_UPPER;
        o->how = H_LOW0 | H_COMP | (A > 1 ? H_RDP : H_BETA);
        return DPA_OK;
    }
    const dpa_pair *p = lf->pair;
    if (truncated(p)) return unsupported_leaf(lf, err);
    if (!bounded_kind(p)) {
        if (!upper_only_kind(p)) return unsupported_leaf(lf, err);
        if (!(A > 1))
            return dpa_error_set(err, DPA_EUNSUPPORTED,
                                 "renyi: a leaf of kind %s is supported at orders A > 1 only (the RDP module's "
                                 "certified upper bound); order %g has no certified value for it",
                                 pair_kind_name(p), A);
    }
    double lo, hi, val;
    int cls, how;
    if (A == 1) {
        if (closed_kind(p)) {
            double e, v = closed_kl(p, dir, &e);
            lo = fmax(0.0, v - e);
            hi = v + e;
            val = v;
            cls = CLS_EXACT;
            how = H_CLOSED;
        } else {
            /* KL <= D_b; KL >= D_{1-h} >= log E'(-h)/(-h) with the series'
             * upper bound on log E' at theta' = -h (remove) or -1 + h (add) */
            st = dpa_rdp_divergence(p, 1 + RENYI_BETA_STEP, dir, &hi, err);
            if (st) return st;
            double lh;
            st = upper_log_e_mid(p, dir ? -1 + RENYI_KL_H : -RENYI_KL_H, &lh, err);
            if (st) return st;
            lo = fmax(0.0, div_dir(lh, -RENYI_KL_H, -1));
            how = H_BETA | H_SERIES;
            double lm, mean;
            dpa_error e2;
            if (phi_kind(p) && (st = phi_moments(p, dir, 0.0, &lm, &mean, &e2)) != DPA_ENUMERIC) {
                if (st) {
                    if (err) *err = e2;
                    return st;
                }
                val = fmin(fmax(mean, lo), hi);
                cls = CLS_EST;
                how |= H_PHI;
            } else { /* no quadrature, or it could not converge: the bound */
                val = hi;
                cls = CLS_UPPER;
            }
        }
    } else {
        double tp = dir ? -1 - theta : theta; /* theta' of the remove pair */
        if (p->kind == DPA_PAIR_GAUSSIAN) {
            /* D_A = A mu^2/2 in both directions, for every A > 0 (MATH.md §5),
             * without forming theta (1 + theta) (no overflow at huge A) */
            double v = A * (0.5 * p->par[0] * p->par[0]);
            lo = dn(v, 4);
            hi = up(v, 4);
            val = v;
            cls = CLS_EXACT;
            how = H_CLOSED;
        } else if (closed_kind(p)) {
            double e, v = closed_log_e(p, tp, &e);
            if (v == -INFINITY) { /* E = 0 (A < 1): mutually singular */
                set_inf(o, H_SING);
                return DPA_OK;
            }
            if (theta > 0) {
                lo = div_dir(v - e, theta, -1);
                hi = div_dir(v + e, theta, 1);
            } else {
                lo = div_dir(v + e, theta, -1);
                hi = div_dir(v - e, theta, 1);
            }
            lo = fmax(lo, 0.0);
            val = v / theta;
            cls = CLS_EXACT;
            how = H_CLOSED;
        } else if (A > 1) {
            double lh, ll;
            int bin;
            st = dpa_rdp_log_e(p, tp, &lh, err);
            if (!st) st = lower_log_e_out(p, tp, &ll, &bin, err);
            if (st) return st;
            hi = div_dir(lh, theta, 1);
            lo = fmax(0.0, div_dir(ll, theta, -1));
            val = hi;
            cls = CLS_UPPER;
            how = H_RDP | (bin ? H_BINOM : H_LOW0);
        } else {
            /* 0 < A < 1 */
            double lh;
            st = upper_log_e_mid(p, tp, &lh, err);
            if (st) return st;
            if (lh == -INFINITY) {
                set_inf(o, H_SING);
                return DPA_OK;
            }
            lo = fmax(0.0, div_dir(lh, theta, -1));
            double ud, uo;
            st = dpa_rdp_divergence(p, 1 + RENYI_BETA_STEP, dir, &ud, err);
            if (!st) st = dpa_rdp_divergence(p, 1 + RENYI_BETA_STEP, !dir, &uo, err);
            if (st) return st;
            hi = fmin(ud, up(A / (1 - A) * uo, 4));
            how = H_SERIES | H_BETA;
            double lm, mean;
            dpa_error e2;
            if (phi_kind(p) && (st = phi_moments(p, dir, theta, &lm, &mean, &e2)) != DPA_ENUMERIC) {
                if (st) {
                    if (err) *err = e2;
                    return st;
                }
                val = fmin(fmax(lm / theta, lo), hi);
                how |= H_PHI;
            } else {
                /* no quadrature (or it could not converge): the series-based
                 * bound, accurate but a bound from below */
                val = lo;
                how |= H_SERVAL;
            }
            cls = CLS_EST;
        }
    }
    /* counts: one rounding each way */
    o->lo = dn(k * lo, 2);
    o->hi = up(k * hi, 2);
    o->val = k * val;
    o->cls = cls;
    o->how = how;
    return DPA_OK;
}

static void note_real(dpa_renyi_value *v, int how, int cls_max, double A)
{
    char *n = v->note;
    size_t sz = sizeof v->note;
    if (how & H_INF) {
        snprintf(n, sz, "infinite: the composition has mass at loss +inf (e.g. approx with delta > 0), so D_A = +inf "
                        "for A >= 1");
        return;
    }
    if (how & H_SING) {
        snprintf(n, sz, "infinite: the composed pair is mutually singular (E = 0)");
        return;
    }
    if (cls_max == CLS_EXACT) {
        snprintf(n, sz, "exact: closed forms (interval = round-off)");
        return;
    }
    const char *lowmsg = (how & H_LOW0) ? "lower bound 0 for some leaves (none cheap)"
                         : (how & H_BINOM) ? "lower: binomial expansion"
                         : (how & H_SERIES) ? "lower: certified series"
                                            : "lower: closed forms";
    if (cls_max == CLS_UPPER) {
        if (A > 1)
            snprintf(n, sz, "certified upper bound (RDP module); %s", lowmsg);
        else
            snprintf(n, sz, "certified upper bound via D_A <= D_%.4g%s; %s", 1 + RENYI_BETA_STEP,
                     (how & H_COMP) ? " (subsampled composition: no estimate)" : "", lowmsg);
        return;
    }
    if (how & H_PHI)
        snprintf(n, sz, "estimate: numerical quadrature (phi module); bounds certified (%s; upper loose: via D_%.4g)",
                 lowmsg, 1 + RENYI_BETA_STEP);
    else
        snprintf(n, sz, "estimate: the certified series lower bound (no quadrature for this leaf); upper loose: "
                        "via D_%.4g",
                 1 + RENYI_BETA_STEP);
}

static dpa_status eval_real(const dpa_leafset *L, double A, int dir, dpa_renyi_value *v, dpa_error *err)
{
    double slo = 0, shi = 0, sval = 0;
    int how = 0, cls_max = CLS_EXACT;
    for (size_t i = 0; i < L->n; i++) {
        lres r;
        dpa_status st = leaf_real(&L->v[i], A, dir, &r, err);
        if (st) return st;
        how |= r.how;
        if (r.cls > cls_max) cls_max = r.cls;
        slo += r.lo;
        shi += r.hi;
        sval += r.val;
    }
    if (how & (H_INF | H_SING)) {
        v->re = v->lower = v->upper = INFINITY;
        v->log_e_re = A > 1 ? INFINITY : (A < 1 ? -INFINITY : NAN);
        v->log_e_im = 0;
        v->exists = 0;
        v->certified = 1;
        v->tight = 1;
        note_real(v, how, cls_max, A);
        return DPA_OK;
    }
    double nterm = (double)L->n + 2; /* summation of non-negative terms */
    v->lower = fmax(0.0, dn(slo, nterm));
    v->upper = up(shi, nterm);
    /* certified non-exact results report the upper bound itself */
    v->re = cls_max == CLS_UPPER ? v->upper : fmin(fmax(sval, v->lower), v->upper);
    v->im = 0;
    v->log_e_re = A == 1 ? 0.0 : v->re * (A - 1);
    v->log_e_im = 0;
    v->exists = isfinite(v->re);
    v->certified = cls_max != CLS_EST;
    v->tight = v->upper - v->lower <= DPA_RENYI_TIGHT * v->upper;
    note_real(v, how, cls_max, A);
    if (!v->exists)
        snprintf(v->note, sizeof v->note, "no finite bound at this order (a leaf's certified upper bound is +inf)");
    return DPA_OK;
}

/* ------------------------------------------------------------------ complex orders */

/* The continuous branch of psi(t) = log g(t), g(t) = M(r + it) e^{-it m}/M(r)
 * (phi.h), on [0, T], from psi(0) = 0.  dpa_phi_psi returns the principal
 * value; the branch is followed in steps.  A step from t0 is certified when
 * h L <= |g(t0)|/2 with L >= sqrt(Var~ W) >= E~|W - m| >= sup |g'| (the
 * tilted law's variance, Jensen): then |g - g(t0)| <= |g(t0)|/2 on the step, the arg changes by
 * less than pi/6, and the principal difference is the change.  Where g is
 * small that step is tiny, so longer steps are also accepted when the phase
 * changes by at most RENYI_TRACK_ANGLE on each half (a heuristic; *rigorous
 * is then cleared).  The returned value is psi at T on the branch. */
static dpa_status track_branch(const dpa_phi_leaf *l, const dpa_phi_tilt *tl, double T, double complex *out,
                               int *rigorous, dpa_error *err)
{
    double complex cur = 0;
    /* sup |g'| <= E~|W - m| <= sqrt(Var~ W) (Jensen) for the point rule and
     * closed-form part that dpa_phi_psi evaluates; 1e-6 covers the rounding
     * of the computed variance */
    /* (the first uncertified step tried is T/64: a guess, halved until the
     * phase test passes and doubled after each success) */
    double t = 0, hadapt = T / 64, L = sqrt(tl->var) * (1 + 1e-6);
    size_t evals = 0;
    *rigorous = 1;
    while (t < T) {
        if (evals > RENYI_TRACK_MAX_STEPS)
            return dpa_error_set(err, DPA_ENUMERIC,
                                 "renyi: the branch of log E could not be followed to Im(A) = %g within %d "
                                 "evaluations (stopped at %g)",
                                 T, RENYI_TRACK_MAX_STEPS, t);
        double g0 = exp(creal(cur));
        /* |g0| is known within a relative RENYI_PSI_ERR_MAX (checked below);
         * 4x that is taken off */
        double hr = L > 0 ? 0.5 * g0 * (1 - 4 * RENYI_PSI_ERR_MAX) / L : INFINITY;
        /* certified steps while they are affordable at the current rate */
        double h = hr * RENYI_TRACK_CERTIFIED_STEPS >= T - t ? hr : fmax(hr, hadapt);
        int cert = h <= hr; /* decided before t + h is rounded */
        double t1 = h >= T - t ? T : t + h;
        h = t1 - t;
        double e1;
        double complex p1 = dpa_phi_psi(l, tl, t1, &e1);
        evals++;
        if (!(e1 <= RENYI_PSI_ERR_MAX))
            return dpa_error_set(err, DPA_ENUMERIC,
                                 "renyi: E(A-1) is numerically zero near Im(A) = %g (estimated relative error %.2g "
                                 "of a leaf's Renyi function): its logarithm, and the branch, cannot be evaluated",
                                 t1, e1);
        double d = wrap_pi(cimag(p1) - cimag(cur));
        if (!cert) {
            /* heuristic: check the phase at the midpoint */
            double em;
            double complex pm = dpa_phi_psi(l, tl, t + 0.5 * h, &em);
            evals++;
            double d1 = wrap_pi(cimag(pm) - cimag(cur)), d2 = wrap_pi(cimag(p1) - cimag(pm));
            if (!(em <= RENYI_PSI_ERR_MAX) || fabs(d1) > RENYI_TRACK_ANGLE || fabs(d2) > RENYI_TRACK_ANGLE) {
                hadapt = 0.5 * h;
                if (hadapt < hr) hadapt = hr;
                if (hadapt <= 0 || t + hadapt == t)
                    return dpa_error_set(err, DPA_ENUMERIC,
                                         "renyi: the branch of log E turns too fast near Im(A) = %g (a zero of "
                                         "E nearby?)",
                                         t);
                continue;
            }
            d = d1 + d2;
            *rigorous = 0;
            hadapt = 2 * h;
        } else {
            hadapt = fmax(hadapt, 2 * h);
        }
        cur = CMPLX(creal(p1), cimag(cur) + d);
        t = t1;
    }
    *out = cur;
    return DPA_OK;
}

/* log E of one copy of the leaf at z (direction dir), on the branch of
 * renyi.h; *nonexist: 1 = E diverges/undefined (mass at +inf and
 * Re z >= 0), 2 = E = 0.  *how gets H_CLOSED / H_PHI / H_HEUR bits. */
static dpa_status leaf_complex(const dpa_leaf *lf, double complex z, int dir, double complex *out, int *nonexist,
                               int *how, dpa_error *err)
{
    *nonexist = 0;
    if (!lf->pair && !lf->inner) return unsupported_leaf(lf, err);
    if (!lf->pair)
        return dpa_error_set(err, DPA_EUNSUPPORTED,
                             "renyi: complex orders of a subsampled composition (poisson or sample of a compose/"
                             "repeat) are not supported: no characteristic function for it (use a real order)");
    const dpa_pair *p = lf->pair;
    if (truncated(p)) return unsupported_leaf(lf, err);
    if (!phi_kind(p))
        return dpa_error_set(err, DPA_EUNSUPPORTED,
                             "renyi: complex orders of a %s pair are not supported (the phi module has no "
                             "characteristic function for it; use a real order)",
                             pair_kind_name(p));
    double r = creal(z), t = cimag(z);
    if (r >= 0 && pair_inf(p, dir)) {
        *nonexist = 1;
        return DPA_OK;
    }
    if (p->kind == DPA_PAIR_GAUSSIAN) {
        /* E = e^{z (1 + z) mu^2/2}: the entire function's logarithm, the same
         * in both directions ((-1-z)(-z) = z (1 + z)) */
        *out = z * (1 + z) * (0.5 * p->par[0] * p->par[0]);
        *how |= H_CLOSED;
        return DPA_OK;
    }
    dpa_phi_leaf l;
    dpa_status st = dpa_phi_leaf_init(&l, p, dir, 1.0, err);
    if (st) return st;
    dpa_phi_tilt tl;
    memset(&tl, 0, sizeof tl);
    st = dpa_phi_tilt_prepare(&l, r, fabs(t), &tl, err);
    if (!st) {
        if (tl.logM == -INFINITY) {
            *nonexist = 2;
        } else {
            double complex psi = 0;
            int rig = 0;
            st = track_branch(&l, &tl, fabs(t), &psi, &rig, err);
            if (!st) {
                double complex v = tl.logM + CMPLX(0, fabs(t) * tl.mean) + psi;
                *out = t < 0 ? conj(v) : v; /* M(conj z) = conj M(z) for real measures */
                int quad = l.cont == DPA_PHI_CONT_QUAD_GAUSS || l.cont == DPA_PHI_CONT_QUAD_LAPLACE;
                *how |= quad ? H_PHI : H_CLOSED;
                if (!rig) *how |= H_HEUR;
            }
        }
    }
    dpa_phi_tilt_clear(&tl);
    dpa_phi_leaf_clear(&l);
    return st;
}

static dpa_status eval_complex(const dpa_leafset *L, double complex A, int dir, dpa_renyi_value *v,
                               dpa_error *err)
{
    double complex z = A - 1;
    /* the sum of count * log E_i: counts are exact integers, products are
     * rounded once, and the sum is compensated (Kahan) per component */
    double sr = 0, si = 0, cr = 0, ci = 0;
    int how = 0, nonexist = 0;
    for (size_t i = 0; i < L->n; i++) {
        double complex l = 0;
        int ne;
        dpa_status st = leaf_complex(&L->v[i], z, dir, &l, &ne, &how, err);
        if (st) return st;
        if (ne) {
            if (ne > nonexist) nonexist = ne;
            continue;
        }
        double k = L->v[i].count;
        double y = k * creal(l) - cr, s = sr + y;
        cr = (s - sr) - y;
        sr = s;
        y = k * cimag(l) - ci;
        s = si + y;
        ci = (s - si) - y;
        si = s;
    }
    v->lower = v->upper = NAN;
    if (nonexist) {
        v->re = v->im = v->log_e_re = v->log_e_im = NAN;
        v->exists = 0;
        v->certified = 1;
        v->tight = 0;
        if (nonexist == 2)
            snprintf(v->note, sizeof v->note, "does not exist: E(A-1) = 0 (the composed pair is mutually singular)");
        else
            snprintf(v->note, sizeof v->note,
                     "does not exist: mass at loss +inf and Re A >= 1 (E diverges for Re A > 1, is undefined at "
                     "Re A = 1)");
        return DPA_OK;
    }
    double complex le = CMPLX(sr, si), d = le / z;
    v->log_e_re = sr;
    v->log_e_im = si;
    v->re = creal(d);
    v->im = cimag(d);
    v->exists = isfinite(v->re) && isfinite(v->im);
    v->certified = v->tight = !(how & (H_PHI | H_HEUR));
    if (how & H_PHI)
        snprintf(v->note, sizeof v->note,
                 "estimate: numerical quadrature (phi module); branch: continuation from the real axis along Re A "
                 "= %g%s",
                 creal(A), (how & H_HEUR) ? " (followed numerically)" : "");
    else if (how & H_HEUR)
        snprintf(v->note, sizeof v->note,
                 "closed forms/exact sums; branch: continuation from the real axis along Re A = %g, partly followed "
                 "by uncertified steps",
                 creal(A));
    else
        snprintf(v->note, sizeof v->note,
                 "closed forms/exact sums; branch: continuation from the real axis along Re A = %g (certified steps)",
                 creal(A));
    return DPA_OK;
}

/* ------------------------------------------------------------------ entry point */

dpa_status dpa_renyi(const dpa_spec *spec, double re, double im, dpa_renyi_result *out, dpa_error *err)
{
    if (!spec || !out) return dpa_error_set(err, DPA_EINVAL, "renyi: NULL argument");
    if (!(re > 0 && isfinite(re)) || !isfinite(im))
        return dpa_error_set(err, DPA_EINVAL, "renyi: the order must have a finite real part > 0, got %g%+gi", re, im);
    memset(out, 0, sizeof *out);
    out->order_re = re;
    out->order_im = im;
    dpa_leafset L;
    dpa_status st = dpa_leaves_build(spec, &L, err);
    if (st) return st;
    for (size_t i = 0; i < L.n; i++) {
        if (L.v[i].rdp_only) {
            st = dpa_error_set(err, DPA_EUNSUPPORTED,
                               "renyi: %s: a %s step has a bound on Renyi divergences, not a dominating pair: the "
                               "composition's divergence is not a value (only the rdp method accounts it)",
                               L.zcdp_path, dpa_ev_kind_name((dpa_event_kind)L.v[i].rdp_only));
            dpa_leaves_free(&L);
            return st;
        }
    }
    out->symmetric = !L.asymmetric;
    for (int dir = 0; dir < 2 && !st; dir++) {
        dpa_renyi_value *v = dir ? &out->add : &out->remove;
        if (dir && out->symmetric) {
            *v = out->remove;
            break;
        }
        st = im == 0 ? eval_real(&L, re, dir, v, err) : eval_complex(&L, CMPLX(re, im), dir, v, err);
    }
    dpa_leaves_free(&L);
    if (st) return st;
    /* upper bounds within DPA_RENYI_TIGHT of each other are "both": the
     * difference is below what the bounds certify */
    out->binding = 0;
    double ur = out->remove.upper, ua = out->add.upper;
    if (im == 0 && !out->symmetric && !(ur == ua) && fabs(ur - ua) > DPA_RENYI_TIGHT * fmax(ur, ua))
        out->binding = ur > ua ? 1 : 2;
    return DPA_OK;
}
