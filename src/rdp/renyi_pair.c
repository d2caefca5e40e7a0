/* The Rényi function of one pair or leaf at real orders, for dpa_renyi
 * (src/rdp/renyi.c has the notation): which pair kinds have closed forms,
 * certified bounds or the phi module's quadrature; log E_p in closed form
 * and KL; certified upper and lower bounds on log E_p without closed forms;
 * the phi module's moments; composite leaves through the RDP accountant.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <string.h>
#include "model/leaves.h"
#include "mech/pair.h"
#include "num/num.h"
#include "phi/phi.h"
#include "rdp/rdp.h"
#include "rdp/renyi_internal.h"

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
/* Largest integer order for the binomial-expansion lower bound (n + 1
 * terms, each with three lgamma calls and a closed-form base moment). */
#define RENYI_BINOM_MAX 100000

/* ------------------------------------------------------------------ small helpers */

const char *dpa_renyi_pair_kind_name(const dpa_pair *p)
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

/* ------------------------------------------------------------------ pair classification */

int dpa_renyi_truncated(const dpa_pair *p)
{
    for (; p; p = p->base)
        if (p->slack_hi > 0 || p->slack_lo > 0) return 1;
    return 0;
}

/* 1 if the pair, in direction dir, has mass at loss +inf under its first
 * measure (remove: an atom with w = +inf and A-mass > 0; add: one with
 * w = -inf and B-mass > 0).  Every transform lists its atoms (pair.c). */
int dpa_renyi_pair_inf(const dpa_pair *p, int dir)
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
int dpa_renyi_leaf_inf(const dpa_leaf *l, int dir)
{
    if (l->pair) return dpa_renyi_pair_inf(l->pair, dir);
    if (!l->inner) return 0;
    if (dir && !l->sample) return 0;
    for (size_t i = 0; i < l->inner->n; i++)
        if (dpa_renyi_leaf_inf(&l->inner->v[i], 0)) return 1;
    return 0;
}

/* 1 if log E_p has a closed form here (atoms, Gaussian, Laplace, and their
 * reversals) */
int dpa_renyi_closed_kind(const dpa_pair *p)
{
    switch (p->kind) {
    case DPA_PAIR_ATOMS:
    case DPA_PAIR_GAUSSIAN:
    case DPA_PAIR_LAPLACE: return 1;
    case DPA_PAIR_REVERSE: return dpa_renyi_closed_kind(p->base);
    default: return 0;
    }
}

/* 1 if the phi module evaluates the pair (phi_leaf.c: atoms, Gaussian,
 * Laplace, Poisson over Gaussian/Laplace, reversals of these) */
int dpa_renyi_phi_kind(const dpa_pair *p)
{
    switch (p->kind) {
    case DPA_PAIR_ATOMS:
    case DPA_PAIR_GAUSSIAN:
    case DPA_PAIR_LAPLACE: return 1;
    case DPA_PAIR_POISSON: return p->base->kind == DPA_PAIR_GAUSSIAN || p->base->kind == DPA_PAIR_LAPLACE;
    case DPA_PAIR_REVERSE: return dpa_renyi_phi_kind(p->base);
    default: return 0;
    }
}

/* A pair the RDP module bounds at orders > 1 and whose continuous parts the
 * series/quadrature of this file reach at orders in (0, 1): closed kinds,
 * Poisson over Gaussian/Laplace, their symmetrizations, reversals. */
int dpa_renyi_bounded_kind(const dpa_pair *p)
{
    switch (p->kind) {
    case DPA_PAIR_ATOMS:
    case DPA_PAIR_GAUSSIAN:
    case DPA_PAIR_LAPLACE: return 1;
    case DPA_PAIR_POISSON: return p->base->kind == DPA_PAIR_GAUSSIAN || p->base->kind == DPA_PAIR_LAPLACE;
    case DPA_PAIR_REVERSE: return dpa_renyi_bounded_kind(p->base);
    case DPA_PAIR_SYMMETRIZE:
        return p->base->symmetric ? dpa_renyi_bounded_kind(p->base)
                                  : (p->base->kind == DPA_PAIR_POISSON && dpa_renyi_bounded_kind(p->base));
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
int dpa_renyi_upper_only_kind(const dpa_pair *p)
{
    switch (p->kind) {
    case DPA_PAIR_MIXGAUSS:
    case DPA_PAIR_LABELLED: return 1;
    case DPA_PAIR_POISSON: return p->base->kind == DPA_PAIR_MIXGAUSS;
    case DPA_PAIR_REVERSE: return dpa_renyi_bounded_kind(p->base) || dpa_renyi_upper_only_kind(p->base);
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

/* log E_p(theta) in closed form (dpa_renyi_closed_kind(p)), theta not 0 or -1, with an
 * absolute error bound *e; +-INFINITY allowed. */
double dpa_renyi_closed_log_e(const dpa_pair *p, double theta, double *e)
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
    case DPA_PAIR_REVERSE: return dpa_renyi_closed_log_e(p->base, -1 - theta, e);
    default: *e = INFINITY; return NAN;
    }
}

/* KL(P||Q) (rev = 0) or KL(Q||P) in closed form, value and absolute error */
double dpa_renyi_closed_kl(const dpa_pair *p, int rev, double *e)
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
    case DPA_PAIR_REVERSE: return dpa_renyi_closed_kl(p->base, !rev, e);
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
 * (0, 1)), for the kinds of dpa_renyi_bounded_kind.  The RDP module's dpa_rdp_log_e
 * covers theta outside [-1, 0]; inside, the same formulas hold
 * (docs/rdp.md §2: E = int beta(x) (1 - q + q e^x)^{1+theta} dx for the
 * continuous part of a Poisson pair, gamma = 1 + theta in (0, 1), where the
 * MTZ19 series with its Leibniz tail (Gaussian base) or the certified
 * quadrature (Laplace base) applies), and the symmetrization's split of
 * docs/rdp.md §2.6. */
dpa_status dpa_renyi_upper_log_e_mid(const dpa_pair *p, double theta, double *out, dpa_error *err)
{
    double e, l;
    dpa_status st = DPA_OK;
    if (dpa_renyi_closed_kind(p)) {
        l = dpa_renyi_closed_log_e(p, theta, &e);
        *out = l + e;
        return DPA_OK;
    }
    if (p->kind == DPA_PAIR_REVERSE) return dpa_renyi_upper_log_e_mid(p->base, -1 - theta, out, err);
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
            return dpa_renyi_upper_log_e_mid(r, theta, out, err);
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
        st = dpa_error_set(err, DPA_EUNSUPPORTED, "renyi: no bound for a %s pair at this order",
                           dpa_renyi_pair_kind_name(p));
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
            double em, lm = dpa_renyi_closed_log_e(b, k - 1, &em);
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
dpa_status dpa_renyi_lower_log_e_out(const dpa_pair *p, double theta, double *out, int *how,
                                     dpa_error *err)
{
    *how = 0;
    if (dpa_renyi_closed_kind(p)) {
        double e, v = dpa_renyi_closed_log_e(p, theta, &e);
        *out = fmax(0.0, v - e);
        return DPA_OK;
    }
    if (p->kind == DPA_PAIR_REVERSE) return dpa_renyi_lower_log_e_out(p->base, -1 - theta, out, how, err);
    *out = 0;
    if (p->kind != DPA_PAIR_POISSON || theta <= 0 || !dpa_renyi_closed_kind(p->base)) return DPA_OK;
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
dpa_status dpa_renyi_phi_moments(const dpa_pair *p, int dir, double r, double *logm, double *mean,
                                 dpa_error *err)
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
dpa_status dpa_renyi_composite_upper(const dpa_leaf *lf, const double *b, size_t n, int dir, double *out,
                                     dpa_error *err)
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

/* ------------------------------------------------------------------ unsupported leaves */

dpa_status dpa_renyi_unsupported_leaf(const dpa_leaf *lf, dpa_error *err)
{
    if (!lf->pair && !lf->inner)
        return dpa_error_set(err, DPA_EUNSUPPORTED,
                             "renyi: a zcdp leaf is a bound on Renyi divergences, not a dominating pair: the "
                             "composition's divergence is not a value (only the rdp method accounts zcdp)");
    if (lf->pair && dpa_renyi_truncated(lf->pair))
        return dpa_error_set(err, DPA_EUNSUPPORTED,
                             "renyi: a leaf with omitted mass (a discrete_gaussian's truncated atom list or a "
                             "truncated sample_with_replacement mixture: omitted masses %g/%g) is not supported: "
                             "the omitted part's share of E[e^{(A-1)W}] is not bounded by its mass",
                             lf->pair->slack_hi, lf->pair->slack_lo);
    return dpa_error_set(err, DPA_EUNSUPPORTED, "renyi: a leaf of kind %s is not supported",
                         lf->pair ? dpa_renyi_pair_kind_name(lf->pair) : "composite");
}
