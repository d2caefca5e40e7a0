/* Rényi divergences of dominating pairs: E(theta) = int a^{1+theta} b^{-theta}
 * for every kind of dpa_pair (rdp.h), certified upper bounds.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Formulas (docs/rdp.md §2):
 *  - atoms: sum_i exp((1 + theta) la_i - theta lb_i); an atom with b = 0 < a
 *    (W = +inf) makes E infinite for theta > 0, one with a = 0 < b (W = -inf)
 *    for theta < -1 (LT Def 2.2);
 *  - Gaussian, W ~ N(mu^2/2, mu^2) under A: E = exp(theta (1 + theta) mu^2/2)
 *    (the moment generating function; D_alpha = alpha mu^2/2, LT Thm 2.4);
 *  - Laplace's continuous part (eps0 = s/b, output o in (0, s), loss
 *    (s - 2o)/b): int_0^s a^{1+theta} b^{-theta} do
 *       = e^{theta eps0} (1 - e^{-(1 + 2 theta) eps0}) / (2 (1 + 2 theta)),
 *    plus the two atoms +-eps0 (which reproduces Mironov 2017, Prop 6);
 *  - reversal (B, A): E_rev(theta) = int b^{1+theta} a^{-theta} = E(-1 - theta);
 *  - Poisson (qA + (1-q)B, B): atoms mapped exactly (pair.c); the continuous
 *    part is int beta(x) (1 - q + q e^x)^{1+theta} dx over the base's loss x
 *    (rdp_subsampled.c, rdp_quad.c);
 *  - symmetrization S of R (docs/sampling.md §2): S is R on W > 0, the mirror
 *    image of that part on W < 0 and an atom at 0, so
 *       E_S(theta) = int_{W>0} [a^{1+theta} b^{-theta} + b^{1+theta} a^{-theta}] + m0,
 *    the atoms from S's own list, the continuous part restricted to x > 0.
 */
#include <math.h>
#include "rdp/rdp.h"
#include "num/num.h"

#define U DPA_UNIT_ROUNDOFF

/* Allowance for the log masses of atoms as stored: each is the result of a
 * few rounded operations (log1p, exp, a subtraction: pair constructors), so
 * off by at most ~3u (|l| + 1); we allow 4u (|l| + 2) per log, multiplied by
 * the exponent it carries, plus the rounding of the products and their sum. */
#define RDP_ATOM_LOG_ERR 4.0

static dpa_status truncated(const dpa_pair *p, dpa_error *err)
{
    const dpa_pair *b = p->base ? p->base : p;
    if (p->kind == DPA_PAIR_MIXGAUSS || b->kind == DPA_PAIR_MIXGAUSS)
        return dpa_error_set(err, DPA_EUNSUPPORTED,
                             "Renyi divergence: this Gaussian mixture has components omitted (mass %g, a truncated "
                             "sample_with_replacement, counted at loss +inf by upper bounds): its Renyi divergence "
                             "is not bounded by their mass; use method pld",
                             p->slack_hi + p->slack_lo);
    return dpa_error_set(err, DPA_EUNSUPPORTED,
                         "Renyi divergence: the pair's atom list is truncated (omitted masses %g above, %g "
                         "below, e.g. a discrete_gaussian pair); the omitted atoms' contribution to "
                         "E[e^{(alpha-1) W}] is not bounded by their mass, so no certified value exists "
                         "(a discrete Gaussian leaf can be accounted as zCDP with rho = s^2/(2 sigma^2))",
                         p->slack_hi, p->slack_lo);
}

/* Atoms of p into acc; returns 1 if E is infinite. */
static int atoms_into(const dpa_pair *p, double theta, dpa_rdp_acc *acc)
{
    for (size_t i = 0; i < p->natoms; i++) {
        double la = p->atoms[i].la, lb = p->atoms[i].lb;
        if (la == -INFINITY && lb == -INFINITY) continue;
        if (la == -INFINITY) {
            if (theta < -1) return 1; /* b^{1+...} a^{-(...)} with a = 0 */
            continue;
        }
        if (lb == -INFINITY) {
            if (theta > 0) return 1;
            continue;
        }
        double l = (1 + theta) * la - theta * lb;
        double e = RDP_ATOM_LOG_ERR * U * (fabs(1 + theta) * (fabs(la) + 2) + fabs(theta) * (fabs(lb) + 2)) +
                   3 * U * (fabs((1 + theta) * la) + fabs(theta * lb));
        dpa_rdp_acc_add(acc, l, 1, expm1(e));
    }
    return 0;
}

/* log((1 - e^{-x})/x), any real x (0 at x = 0) */
static double log_ratio(double x)
{
    if (x == 0) return 0.0;
    if (x > 0) return log(-expm1(-x)) - log(x);
    if (-x > 700) return -x + dpa_log1mexp(x) - log(-x);
    return log(expm1(-x)) - log(-x);
}

/* Laplace's continuous part (closed form above), log and relative error */
static double laplace_cont(double e0, double theta, double *r)
{
    double x = (1 + 2 * theta) * e0;
    double l = -M_LN2 + theta * e0 + log(e0) + log_ratio(x);
    /* x carries 3u |x|; d log_ratio/dx is in [-1, 0]; the sum of four
     * logs rounds by 4u times their magnitudes */
    double e = 3 * U * fabs(x) + 4 * U * (M_LN2 + fabs(theta * e0) + fabs(log(e0)) + fabs(log_ratio(x)) + 4);
    *r = expm1(e);
    return l;
}

static dpa_status log_e(const dpa_pair *p, double theta, double *out, dpa_error *err);

/* A Gaussian mixture A_c = sum_i w_i N(mu_i, 1) (total W = sum w_i) against
 * B = N(0, 1) (docs/mechanisms.md §2): Jensen's inequality for the convex
 * x^g (g = 1 + theta outside [0, 1], i.e. orders alpha > 1 in both
 * directions), applied to the normalized mixture:
 *   int A_c^g B^{1-g} <= W^g sum_i (w_i / W) int N_i^g B^{1-g}
 *                     = W^{g-1} sum_i w_i e^{g (g-1) mu_i^2 / 2}.
 * Exact for one component; an upper bound (the quasi-convexity of
 * Renyi divergences) otherwise. */
static double mixgauss_log_e(const dpa_pair *p, double theta, double *rel)
{
    size_t n = p->nmix;
    double g = 1 + theta, mx = -INFINITY;
    for (size_t i = 0; i < n; i++) mx = fmax(mx, p->mix[n + i] + theta * g * 0.5 * p->mix[i] * p->mix[i]);
    double s = 0, e = 0;
    for (size_t i = 0; i < n; i++) {
        double l = p->mix[n + i] + theta * g * 0.5 * p->mix[i] * p->mix[i];
        s += exp(l - mx);
        e = fmax(e, 6 * U * (fabs(l) + 1));
    }
    double l = theta * p->lca + mx + log(s);
    *rel = expm1(e + 4 * U * (fabs(theta * p->lca) + fabs(mx) + fabs(log(s)) + 2));
    return l;
}

/* The Poisson-subsampled mixture (q A_c + (1 - q) B, B) (q = 1: the
 * mixture itself) when A_c has total mass 1.  With w_0 the weight of the
 * mu = 0 components, q A_c + (1 - q) B = sum_{mu_i > 0} (w_i / (1 - w_0))
 * (q' N_i + (1 - q') B), q' = q (1 - w_0): a convex combination of
 * subsampled Gaussians at one rate, so by Jensen E <= sum_i (w_i / (1 - w_0))
 * E_i(gamma), each E_i the certified subsampled-Gaussian integral
 * (rdp_quad.c), or e^{gamma (gamma - 1) mu_i^2 / 2} when q' = 1.  Exact for
 * {0: 1 - q, c: q}, which is the subsampled Gaussian. */
static dpa_status mixgauss_poisson(const dpa_pair *b, double q, double gamma, double lo, double hi, double *out,
                                   dpa_error *err)
{
    if (b->natoms || !(lo == -INFINITY && hi == INFINITY))
        return dpa_error_set(err, DPA_EUNSUPPORTED,
                             "Renyi divergence: a Gaussian mixture is bounded only with its whole mass in the "
                             "mixture and over the whole line (not under sample's symmetrization, nor with "
                             "components omitted to +inf, e.g. a truncated sample_with_replacement); use method pld");
    size_t n = b->nmix, i0 = b->mix[0] == 0 ? 1 : 0;
    /* log(1 - w_0) as the direct sum of the positive components' weights
     * (1 - w_0 cancels when w_0 is near 1: [0.9999999999999999, 1.5e-16]
     * gave 1.1e-16, and w_0 = 1 in double with a positive weight 1e-300
     * gave q' = 0); with the weights summing to 1, A_c = w_0 B + the rest */
    double l1w0 = 0.0;
    if (i0) {
        l1w0 = -INFINITY;
        for (size_t i = i0; i < n; i++) l1w0 = dpa_log_add_exp(l1w0, b->mix[n + i]);
    }
    double qe = q * exp(l1w0);
    double acc = -INFINITY;
    for (size_t i = i0; i < n; i++) {
        double l, mu = b->mix[i];
        if (qe >= 1) {
            l = dpa_rdp_up(gamma * (gamma - 1) * 0.5 * mu * mu, 4);
        } else {
            dpa_status st = dpa_rdp_mix_log_integral(DPA_PAIR_GAUSSIAN, mu, qe, gamma, lo, hi, &l, err);
            if (st) return st;
        }
        acc = dpa_log_add_exp(acc, b->mix[n + i] - l1w0 + l);
    }
    /* the log-sum and the weights round: 8u relative per term; the rate
     * q' rounds too, which moves E_i by a relative few u times gamma */
    *out = dpa_rdp_up(acc, 8) + 16 * U * ((double)n + fabs(gamma) * (fabs(acc) + 1));
    return DPA_OK;
}

/* The continuous part of a Poisson pair r (kind POISSON over a Gaussian or
 * Laplace base) with exponent gamma, over base losses (lo, hi). */
static dpa_status poisson_cont(const dpa_pair *r, double gamma, double lo, double hi, double *out,
                               dpa_error *err)
{
    const dpa_pair *b = r->base;
    if (b->lcb == -INFINITY) {
        *out = -INFINITY;
        return DPA_OK;
    }
    if (b->kind == DPA_PAIR_MIXGAUSS) return mixgauss_poisson(b, r->par[0], gamma, lo, hi, out, err);
    if (b->kind != DPA_PAIR_GAUSSIAN && b->kind != DPA_PAIR_LAPLACE)
        return dpa_error_set(err, DPA_EUNSUPPORTED,
                             "Renyi divergence: Poisson subsampling of a pair of kind %d with a continuous "
                             "part is not supported (only Gaussian and Laplace bases)", (int)b->kind);
    return dpa_rdp_mix_log_integral(b->kind, b->par[0], r->par[0], gamma, lo, hi, out, err);
}

static dpa_status log_e_acc(const dpa_pair *p, double theta, dpa_rdp_acc *accp, double *out, dpa_error *err);

static dpa_status log_e(const dpa_pair *p, double theta, double *out, dpa_error *err)
{
    dpa_rdp_acc acc;
    dpa_rdp_acc_init(&acc);
    dpa_status st = log_e_acc(p, theta, &acc, out, err);
    dpa_rdp_acc_free(&acc);
    return st;
}

static dpa_status log_e_acc(const dpa_pair *p, double theta, dpa_rdp_acc *accp, double *out, dpa_error *err)
{
#define acc (*accp)
    dpa_status st;
    /* omitted atoms do not matter when A has mass at +inf and theta > 0:
     * E is then +inf (a truncated discrete Gaussian whose window is cut) */
    if ((p->slack_hi > 0 || p->slack_lo > 0) && p->kind != DPA_PAIR_REVERSE && p->kind != DPA_PAIR_LABELLED &&
        !(p->kind == DPA_PAIR_ATOMS && theta > 0 && dpa_pair_log_inf(p) > -INFINITY))
        return truncated(p, err);
    switch (p->kind) {
    case DPA_PAIR_ATOMS:
        if (atoms_into(p, theta, &acc)) goto infinite;
        break;
    case DPA_PAIR_GAUSSIAN: {
        double mu = p->par[0], l = theta * (1 + theta) * (0.5 * mu * mu);
        /* four roundings: relative 4u */
        dpa_rdp_acc_add(&acc, l, 1, expm1(5 * U * fabs(l)));
        break;
    }
    case DPA_PAIR_LAPLACE: {
        if (atoms_into(p, theta, &acc)) goto infinite;
        double r, l = laplace_cont(p->par[0], theta, &r);
        dpa_rdp_acc_add(&acc, l, 1, r);
        break;
    }
    case DPA_PAIR_MIXGAUSS: {
        if (p->natoms)
            return dpa_error_set(err, DPA_EUNSUPPORTED,
                                 "Renyi divergence: this Gaussian mixture has components omitted to loss +inf (a "
                                 "truncated sample_with_replacement): its Renyi divergence is infinite; use method pld");
        double r = 0, l;
        if (p->natoms == 0 && p->mix[0] == 0) { /* a mu = 0 component: the subsampled form */
            st = mixgauss_poisson(p, 1.0, 1 + theta, -INFINITY, INFINITY, &l, err);
            if (st) return st;
        } else {
            l = mixgauss_log_e(p, theta, &r);
        }
        dpa_rdp_acc_add(&acc, l, 1, r);
        break;
    }
    case DPA_PAIR_REVERSE:
        return log_e(p->base, -1 - theta, out, err);
    case DPA_PAIR_LABELLED:
        /* the labelled mixture (mech/labelled.c): E = sum_i w_i E_i exactly
         * (the parts' atoms are counted through the parts, not the merged list) */
        for (size_t i = 0; i < p->nparts; i++) {
            double l;
            st = log_e(p->parts[i], theta, &l, err);
            if (st) return st;
            if (l == INFINITY) goto infinite;
            /* l is an upper bound; the sum with the log weight rounds */
            dpa_rdp_acc_add(&acc, p->lwpart[i] + l, 1, expm1(4 * U * (fabs(p->lwpart[i]) + fabs(l) + 1)));
        }
        break;
    case DPA_PAIR_POISSON: {
        if (atoms_into(p, theta, &acc)) goto infinite;
        double l;
        st = poisson_cont(p, 1 + theta, -INFINITY, INFINITY, &l, err);
        if (st) return st;
        dpa_rdp_acc_add(&acc, l, 1, 0.0); /* l is already an upper bound */
        break;
    }
    case DPA_PAIR_SYMMETRIZE: {
        const dpa_pair *r = p->base;
        if (r->symmetric) return log_e(r, theta, out, err);
        if (r->kind != DPA_PAIR_POISSON)
            return dpa_error_set(err, DPA_EUNSUPPORTED,
                                 "Renyi divergence: symmetrization of an asymmetric pair of kind %d is only "
                                 "supported for Poisson-subsampled pairs", (int)r->kind);
        if (atoms_into(p, theta, &acc)) goto infinite;
        double l1, l2;
        /* W_R > 0 exactly when the base loss x > 0 (the Poisson map is
         * increasing and maps 0 to 0) */
        st = poisson_cont(r, 1 + theta, 0.0, INFINITY, &l1, err);
        if (st) return st;
        st = poisson_cont(r, -theta, 0.0, INFINITY, &l2, err);
        if (st) return st;
        dpa_rdp_acc_add(&acc, l1, 1, 0.0);
        dpa_rdp_acc_add(&acc, l2, 1, 0.0);
        break;
    }
    default:
        return dpa_error_set(err, DPA_EUNSUPPORTED, "Renyi divergence: unknown pair kind %d", (int)p->kind);
    }
    *out = dpa_rdp_acc_log_upper(&acc, -INFINITY);
    if (isnan(*out)) return dpa_error_set(err, DPA_ENOMEM, "out of memory (Renyi divergence of %zu atoms)", p->natoms);
    return DPA_OK;
infinite:
    *out = INFINITY;
    return DPA_OK;
#undef acc
}

dpa_status dpa_rdp_log_e(const dpa_pair *p, double theta, double *out, dpa_error *err)
{
    if (!p || !out) return dpa_error_set(err, DPA_EINVAL, "Renyi divergence: NULL argument");
    if (!isfinite(theta) || !(theta > 0 || theta < -1))
        return dpa_error_set(err, DPA_EINVAL,
                             "Renyi divergence: theta = %g outside (-inf, -1) u (0, inf) (orders alpha > 1)",
                             theta);
    return log_e(p, theta, out, err);
}

/* KL(A||B) (reverse = 0) or KL(B||A) for the kinds that have it in closed
 * form; an upper bound. */
static dpa_status kl(const dpa_pair *p, int reverse, double *out, dpa_error *err)
{
    switch (p->kind) {
    case DPA_PAIR_GAUSSIAN:
        *out = dpa_rdp_up(0.5 * p->par[0] * p->par[0], 4);
        return DPA_OK;
    case DPA_PAIR_LAPLACE: {
        /* KL(Lap(0,b) || Lap(s,b)) = eps0 + e^{-eps0} - 1, both directions */
        double e0 = p->par[0], v = e0 + expm1(-e0);
        *out = v + 4 * U * (e0 + 1);
        return DPA_OK;
    }
    case DPA_PAIR_REVERSE:
        return kl(p->base, !reverse, out, err);
    case DPA_PAIR_ATOMS: {
        if ((p->slack_hi > 0 || p->slack_lo > 0) && !(dpa_pair_log_inf(p) > -INFINITY))
            return truncated(p, err); /* (mass at +inf: KL is +inf, omitted atoms or not) */
        dpa_rdp_acc acc;
        dpa_rdp_acc_init(&acc);
        for (size_t i = 0; i < p->natoms; i++) {
            double la = p->atoms[i].la, lb = p->atoms[i].lb;
            if (reverse) {
                double t = la;
                la = lb;
                lb = t;
            }
            if (la == -INFINITY) continue;
            if (lb == -INFINITY) {
                dpa_rdp_acc_free(&acc);
                *out = INFINITY;
                return DPA_OK;
            }
            double w = la - lb;
            if (w == 0) continue;
            double e = RDP_ATOM_LOG_ERR * U * (fabs(la) + 4) + RDP_ATOM_LOG_ERR * U * (fabs(la) + fabs(lb) + 8) / fabs(w);
            dpa_rdp_acc_add(&acc, la + log(fabs(w)), w > 0 ? 1 : -1, expm1(e));
        }
        double l = dpa_rdp_acc_log_upper(&acc, -INFINITY);
        dpa_rdp_acc_free(&acc);
        if (isnan(l)) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
        *out = l == -INFINITY ? 0.0 : exp(l) * (1 + 4 * U);
        return DPA_OK;
    }
    default:
        return dpa_error_set(err, DPA_EUNSUPPORTED,
                             "Renyi divergence: the KL divergence (alpha = 1) of a pair of kind %d is not "
                             "available; use an order alpha > 1 (D_alpha is non-decreasing in alpha)", (int)p->kind);
    }
}

dpa_status dpa_rdp_divergence(const dpa_pair *p, double alpha, int reverse, double *out, dpa_error *err)
{
    if (!p || !out) return dpa_error_set(err, DPA_EINVAL, "Renyi divergence: NULL argument");
    if (!(alpha >= 1 && isfinite(alpha)))
        return dpa_error_set(err, DPA_EINVAL, "Renyi divergence: order alpha = %g must be >= 1 and finite", alpha);
    if (alpha == 1) return kl(p, reverse, out, err);
    double l;
    dpa_status st = dpa_rdp_log_e(p, reverse ? -alpha : alpha - 1, &l, err);
    if (st) return st;
    if (l == INFINITY) {
        *out = INFINITY;
        return DPA_OK;
    }
    if (!(l > 0)) {
        *out = 0.0; /* E >= 1 for alpha > 1: the upper bound on D is 0 */
        return DPA_OK;
    }
    /* alpha - 1 and the division round by u each */
    *out = dpa_rdp_up(l / (alpha - 1), 4);
    return DPA_OK;
}

double dpa_rdp_zcdp(double rho, double xi, double alpha)
{
    return dpa_rdp_up(xi + rho * alpha, 4);
}
