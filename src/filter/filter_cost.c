/* Per-query costs of the scalar filters, from the query's spec.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Each cost is a certified UPPER bound on the quantity the filter sums,
 * obtained by walking the event tree (compose: add; repeat: multiply;
 * subsampling: the amplification theorems cited below) with every
 * floating-point operation rounded up (dpa_f_up after each step, or a named
 * relative margin).  A leaf that has no such bound makes the query
 * unsupported for that filter, with the JSON path and the filter that can
 * take it (DPA_EUNSUPPORTED).  No accountant is built here except for the
 * naive GDP filter's general case (dpa_accountant_gdp_mu) and for RDP (the
 * rdp module's certified divergences), so simple leaves cost microseconds.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "filter/filter_internal.h"
#include "event/event_internal.h"
#include "dpacct/accountant.h"
#include "model/leaves.h"
#include "rdp/rdp.h"
#include "num/num.h"

double dpa_f_up(double x) { return isfinite(x) ? nextafter(x, INFINITY) : x; }
double dpa_f_dn(double x)
{
    if (!isfinite(x)) return x;
    double y = nextafter(x, -INFINITY);
    return (x >= 0 && y < 0) ? 0.0 : y;
}

/* Relative margin for a few chained correctly-rounded operations (exp,
 * log1p, expm1 are faithful to < 1 ulp in glibc): 8 u covers up to ~8
 * operations' errors with room. */
#define OPS_REL (8 * DPA_UNIT_ROUNDOFF)

static double up_rel(double x) { return isfinite(x) ? dpa_f_up(x * (1 + OPS_REL)) : x; }

/* Decimal shorthands (filter_decimal.h): P(x) a parameter as written in
 * the JSON, U(x) a computed double bound, rounded up. */
#define P(x) dpa_dec_param(x)
#define U(x) dpa_dec_from_double((x), 1)
static dpa_dec dec_add_up(dpa_dec a, dpa_dec b) { return dpa_dec_add(a, b, 1); }
static dpa_dec dec_mul_up(dpa_dec a, dpa_dec b) { return dpa_dec_mul(a, b, 1); }
static dpa_dec dec_div_up(dpa_dec a, dpa_dec b) { return dpa_dec_div(a, b, 1); }
/* x^2 / 2^k, rounded up */
static dpa_dec dec_sq_half(dpa_dec x, unsigned k) { return dec_div_up(dec_mul_up(x, x), dpa_dec_int(1ull << k)); }

/* Path of child i of a node at path p, for messages. */
static void child_path(char *dst, size_t n, const char *p, const dpa_event *e, size_t i)
{
    const char *name = dpa_ev_kind_name(e->kind);
    if (e->kind == DPA_EV_COMPOSE)
        snprintf(dst, n, "%s/%s/%zu", p, name, i);
    else
        snprintf(dst, n, "%s/%s/event", p, name);
}

/* Amplification by subsampling of a pure eps (Balle, Barthe, Gaboardi
 * 2018: Thm 8, Poisson with add/remove; Thm 9, without replacement with
 * replace-one): eps' = log(1 + q (e^eps - 1)). */
static dpa_dec amplify(double q, dpa_dec eps)
{
    return U(up_rel(log1p(q * expm1(dpa_dec_to_double(eps, 1)))));
}

/* Checks the neighbouring relation of subsampling, as the accountants do. */
static dpa_status sampling_ok(const dpa_event *e, dpa_neighboring nb, const char *path, dpa_error *err)
{
    if (e->kind == DPA_EV_POISSON && nb == DPA_REPLACE)
        return dpa_error_set(err, DPA_EUNSUPPORTED, "%s/poisson: Poisson subsampling needs add_remove neighbouring", path);
    if (e->kind == DPA_EV_SAMPLE && nb != DPA_REPLACE)
        return dpa_error_set(err, DPA_EUNSUPPORTED, "%s/sample: sampling without replacement needs replace neighbouring", path);
    return DPA_OK;
}

/* ---------------- kinds accounted as another kind ----------------
 * Read through the public accessors (include/dpacct/event.h), so the
 * parameter layout of these kinds stays the event module's business.
 *  permute_and_flip; report_noisy_max with Laplace or exponential noise:
 *      eps-DP (McKenna & Sheldon 2020; Dwork & Roth 2014, Claim 3.9);
 *  exponential_mechanism; report_noisy_max with Gumbel noise (= the
 *      exponential mechanism): eps-bounded range (Durfee & Rogers 2019),
 *      hence eps-DP and eps^2/8-zCDP (Cesar & Rogers 2021);
 *  tree_aggregation: the Gaussian mechanism with
 *      mu = sqrt(ceil(log2(steps + 1))) sensitivity / sigma (Kairouz et al.
 *      2021, App. D; as src/model/leaves.c). */
enum { ALIAS_NONE, ALIAS_PURE, ALIAS_BR, ALIAS_GAUSS };

static double get_par(const dpa_event *e, const char *name)
{
    double v = NAN;
    if (dpa_event_get_param(e, name, &v) != DPA_OK) return NAN;
    return v;
}

/* depth = ceil(log2(steps + 1)): the smallest d with 2^d >= steps + 1
 * (steps + 1 <= 2^50: exact) */
static double tree_depth(double steps)
{
    double d = 0;
    while (ldexp(1.0, (int)d) < steps + 1) d++;
    return d;
}

/* The class of e's stand-in and its parameter: eps (ALIAS_PURE, ALIAS_BR),
 * or, for ALIAS_GAUSS, sensitivity / sigma in *v and the depth in *depth. */
static int alias_of(const dpa_event *e, double *v, double *depth)
{
    switch (dpa_event_get_kind(e)) {
    case DPA_EV_PERMUTE_AND_FLIP:
        *v = get_par(e, "epsilon");
        return isnan(*v) ? ALIAS_NONE : ALIAS_PURE;
    case DPA_EV_EXPONENTIAL_MECHANISM:
        *v = get_par(e, "epsilon");
        return isnan(*v) ? ALIAS_NONE : ALIAS_BR;
    case DPA_EV_REPORT_NOISY_MAX: {
        double noise = get_par(e, "noise");
        *v = get_par(e, "epsilon");
        if (isnan(*v) || isnan(noise)) return ALIAS_NONE;
        return noise == DPA_RNM_GUMBEL ? ALIAS_BR : ALIAS_PURE;
    }
    case DPA_EV_TREE_AGGREGATION: {
        double sigma = get_par(e, "sigma"), steps = get_par(e, "steps"), sens = get_par(e, "sensitivity");
        if (!(sigma > 0) || !(steps >= 1) || !(sens > 0)) return ALIAS_NONE;
        *v = sens / sigma;
        *depth = tree_depth(steps);
        return ALIAS_GAUSS;
    }
    default:
        return ALIAS_NONE;
    }
}

/* tree_aggregation's mu, rounded up (3 correctly rounded operations) */
static double alias_gauss_mu(double ratio, double depth) { return up_rel(sqrt(depth) * ratio); }

/* ---------------- pure eps ---------------- */
static dpa_status pure_rec(const dpa_event *e, dpa_neighboring nb, const char *path, dpa_dec *out, dpa_error *err)
{
    char cp[400];
    dpa_dec v;
    dpa_status st;
    switch (e->kind) {
    case DPA_EV_PURE:
    case DPA_EV_RANDOMIZED_RESPONSE: /* k-ary RR is eps-DP too */
        *out = P(e->p[0]);
        return DPA_OK;
    case DPA_EV_APPROX:
        if (e->p[1] > 0)
            return dpa_error_set(err, DPA_EUNSUPPORTED,
                                 "%s/approx: delta = %g > 0 is not pure DP (use the \"basic\" filter, or \"natural\" "
                                 "with a delta budget for (0, delta) queries)", path, e->p[1]);
        *out = P(e->p[0]);
        return DPA_OK;
    case DPA_EV_LAPLACE:
    case DPA_EV_DISCRETE_LAPLACE: /* loss bounded by s/b in both directions */
        *out = dec_div_up(P(e->p[1]), P(e->p[0]));
        return DPA_OK;
    case DPA_EV_NO_OP:
        *out = dpa_dec_int(0);
        return DPA_OK;
    case DPA_EV_COMPOSE: {
        dpa_dec s = dpa_dec_int(0);
        for (size_t i = 0; i < e->nchild; i++) {
            child_path(cp, sizeof cp, path, e, i);
            if ((st = pure_rec(e->child[i], nb, cp, &v, err))) return st;
            s = dec_add_up(s, v);
        }
        *out = s;
        return DPA_OK;
    }
    case DPA_EV_REPEAT:
        child_path(cp, sizeof cp, path, e, 0);
        if ((st = pure_rec(e->child[0], nb, cp, &v, err))) return st;
        *out = dec_mul_up(v, P(e->p[0]));
        return DPA_OK;
    case DPA_EV_POISSON:
    case DPA_EV_SAMPLE:
        if ((st = sampling_ok(e, nb, path, err))) return st;
        child_path(cp, sizeof cp, path, e, 0);
        if ((st = pure_rec(e->child[0], nb, cp, &v, err))) return st;
        *out = amplify(e->kind == DPA_EV_POISSON ? e->p[0] : e->p[1] / e->p[0], v);
        return DPA_OK;
    default: {
        double a, d;
        int cls = alias_of(e, &a, &d);
        if (cls == ALIAS_PURE || cls == ALIAS_BR) { /* eps-BR implies eps-DP */
            *out = P(a);
            return DPA_OK;
        }
        if (cls == ALIAS_GAUSS)
            return dpa_error_set(err, DPA_EUNSUPPORTED,
                                 "%s/%s: a Gaussian mechanism (mu = %g) has no finite pure-DP epsilon; use the "
                                 "\"gdp\", \"gdp-residue\", \"natural\" (mu), \"zcdp\" or \"rdp\" filter", path,
                                 dpa_ev_kind_name(e->kind), alias_gauss_mu(a, d));
    }
        return dpa_error_set(err, DPA_EUNSUPPORTED,
                             "%s/%s: no finite pure-DP epsilon (unbounded privacy loss); use the \"gdp\", "
                             "\"gdp-residue\", \"zcdp\" or \"rdp\" filter", path, dpa_ev_kind_name(e->kind));
    }
}

dpa_status dpa_f_pure_eps(const dpa_spec *q, dpa_dec *eps, dpa_error *err)
{
    return pure_rec(q->root, q->nb, "", eps, err);
}

/* ---------------- (eps, delta) by basic composition ---------------- */
/* delta is carried as keep = 1 - delta (rounded down): composition
 * multiplies them (1 - delta = prod (1 - delta_i), the product rule of
 * RF §3), repeat raises to the count. */
static dpa_dec one_minus(dpa_dec d) { return dpa_dec_sub(dpa_dec_int(1), d, 0); }

static dpa_status approx_rec(const dpa_event *e, dpa_neighboring nb, const char *path, dpa_dec *eo, dpa_dec *ko,
                             dpa_error *err)
{
    char cp[400];
    dpa_dec v, l;
    dpa_status st;
    switch (e->kind) {
    case DPA_EV_PURE:
    case DPA_EV_RANDOMIZED_RESPONSE:
        *eo = P(e->p[0]);
        *ko = dpa_dec_int(1);
        return DPA_OK;
    case DPA_EV_APPROX:
        *eo = P(e->p[0]);
        *ko = one_minus(P(e->p[1]));
        return DPA_OK;
    case DPA_EV_LAPLACE:
    case DPA_EV_DISCRETE_LAPLACE:
        *eo = dec_div_up(P(e->p[1]), P(e->p[0]));
        *ko = dpa_dec_int(1);
        return DPA_OK;
    case DPA_EV_NO_OP:
        *eo = dpa_dec_int(0);
        *ko = dpa_dec_int(1);
        return DPA_OK;
    case DPA_EV_COMPOSE: {
        dpa_dec s = dpa_dec_int(0), sk = dpa_dec_int(1);
        for (size_t i = 0; i < e->nchild; i++) {
            child_path(cp, sizeof cp, path, e, i);
            if ((st = approx_rec(e->child[i], nb, cp, &v, &l, err))) return st;
            s = dec_add_up(s, v);
            sk = dpa_dec_mul(sk, l, 0);
        }
        *eo = s;
        *ko = sk;
        return DPA_OK;
    }
    case DPA_EV_REPEAT:
        child_path(cp, sizeof cp, path, e, 0);
        if ((st = approx_rec(e->child[0], nb, cp, &v, &l, err))) return st;
        *eo = dec_mul_up(v, P(e->p[0]));
        *ko = dpa_dec_pow(l, e->p[0], 0);
        return DPA_OK;
    case DPA_EV_POISSON:
    case DPA_EV_SAMPLE: {
        /* Balle, Barthe, Gaboardi 2018, Thms 8 and 9: (eps', q delta) */
        if ((st = sampling_ok(e, nb, path, err))) return st;
        double q = e->kind == DPA_EV_POISSON ? e->p[0] : e->p[1] / e->p[0];
        child_path(cp, sizeof cp, path, e, 0);
        if ((st = approx_rec(e->child[0], nb, cp, &v, &l, err))) return st;
        *eo = amplify(q, v);
        *ko = one_minus(dec_mul_up(U(q), one_minus(l))); /* 1 - q delta, rounded down */
        return DPA_OK;
    }
    case DPA_EV_GAUSSIAN:
    case DPA_EV_GDP:
    case DPA_EV_DISCRETE_GAUSSIAN:
    case DPA_EV_ZCDP:
        return dpa_error_set(err, DPA_EUNSUPPORTED,
                             "%s/%s: a Gaussian-type query has no single (eps, delta) cost (its delta is a policy "
                             "choice); use the \"gdp-residue\", \"gdp\", \"zcdp\" or \"rdp\" filter, or state the "
                             "guarantee you claim as an approx leaf", path, dpa_ev_kind_name(e->kind));
    case DPA_EV_TREE_AGGREGATION:
        return dpa_error_set(err, DPA_EUNSUPPORTED,
                             "%s/%s: a Gaussian-type query has no single (eps, delta) cost (its delta is a policy "
                             "choice); use the \"gdp-residue\", \"gdp\", \"zcdp\" or \"rdp\" filter, or state the "
                             "guarantee you claim as an approx leaf", path, dpa_ev_kind_name(e->kind));
    default: {
        double a, d;
        int cls = alias_of(e, &a, &d);
        if (cls == ALIAS_PURE || cls == ALIAS_BR) {
            *eo = P(a);
            *ko = dpa_dec_int(1);
            return DPA_OK;
        }
    }
        return dpa_error_set(err, DPA_EUNSUPPORTED, "%s/%s: the \"basic\" filter cannot account this event", path,
                             dpa_ev_kind_name(e->kind));
    }
}

dpa_status dpa_f_approx(const dpa_spec *q, dpa_dec *eps, dpa_dec *keep, dpa_error *err)
{
    return approx_rec(q->root, q->nb, "", eps, keep, err);
}

/* ---------------- zCDP ---------------- */
/* Gaussian: rho = mu^2/2 (Bun-Steinke 2016 Prop 1.6); discrete Gaussian:
 * s^2/(2 sigma^2) (Canonne-Kamath-Steinke 2020 Prop 5); eps-DP: eps^2/2
 * (Bun-Steinke Prop 1.4); composition adds (Bun-Steinke Lemma 1.7). */
static dpa_status zcdp_rec(const dpa_event *e, dpa_neighboring nb, const char *path, dpa_dec *out, dpa_error *err)
{
    char cp[400];
    dpa_dec v;
    dpa_status st;
    switch (e->kind) {
    case DPA_EV_ZCDP:
        if (e->p[1] > 0) /* (xi, rho)-zCDP is not rho'-zCDP for any rho' */
            return dpa_error_set(err, DPA_EUNSUPPORTED,
                                 "%s/zcdp/xi: the zcdp filter budgets rho alone, and a step with xi > 0 is not "
                                 "rho-zCDP for any rho; use the \"rdp\" filter", path);
        *out = P(e->p[0]);
        return DPA_OK;
    case DPA_EV_GAUSSIAN:
    case DPA_EV_DISCRETE_GAUSSIAN: /* s^2 / (2 sigma^2) */
        if (e->kind == DPA_EV_DISCRETE_GAUSSIAN && e->p[2] != DPA_DG_UNTRUNCATED)
            return dpa_error_set(err, DPA_EUNSUPPORTED,
                                 "%s/discrete_gaussian/truncation: a truncated discrete Gaussian is not zCDP (part of "
                                 "its mass has infinite privacy loss, so its Renyi divergences above order 1 are "
                                 "+inf); state the guarantee you claim as an approx leaf", path);
        *out = dec_div_up(dec_sq_half(P(e->p[1]), 1), dec_mul_up(P(e->p[0]), P(e->p[0])));
        return DPA_OK;
    case DPA_EV_GDP:
        *out = dec_sq_half(P(e->p[0]), 1);
        return DPA_OK;
    case DPA_EV_PURE:
    case DPA_EV_RANDOMIZED_RESPONSE:
    case DPA_EV_LAPLACE:
    case DPA_EV_DISCRETE_LAPLACE:
    case DPA_EV_APPROX:
        if ((st = pure_rec(e, nb, path, &v, err))) return st;
        *out = dec_sq_half(v, 1);
        return DPA_OK;
    case DPA_EV_NO_OP:
        *out = dpa_dec_int(0);
        return DPA_OK;
    case DPA_EV_COMPOSE: {
        dpa_dec s = dpa_dec_int(0);
        for (size_t i = 0; i < e->nchild; i++) {
            child_path(cp, sizeof cp, path, e, i);
            if ((st = zcdp_rec(e->child[i], nb, cp, &v, err))) return st;
            s = dec_add_up(s, v);
        }
        *out = s;
        return DPA_OK;
    }
    case DPA_EV_REPEAT:
        child_path(cp, sizeof cp, path, e, 0);
        if ((st = zcdp_rec(e->child[0], nb, cp, &v, err))) return st;
        *out = dec_mul_up(v, P(e->p[0]));
        return DPA_OK;
    case DPA_EV_POISSON:
    case DPA_EV_SAMPLE:
        return dpa_error_set(err, DPA_EUNSUPPORTED,
                             "%s/%s: subsampling has no tight zCDP bound; use the \"rdp\" filter (or \"gdp-residue\")",
                             path, dpa_ev_kind_name(e->kind));
    default: {
        double a, d;
        switch (alias_of(e, &a, &d)) {
        case ALIAS_PURE: /* eps-DP: eps^2/2 (Bun-Steinke Prop 1.4) */
            *out = dec_sq_half(P(a), 1);
            return DPA_OK;
        case ALIAS_BR: /* eps-bounded range: eps^2/8 (Cesar & Rogers 2021) */
            *out = dec_sq_half(P(a), 3);
            return DPA_OK;
        case ALIAS_GAUSS: { /* rho = mu^2/2 = depth (s/sigma)^2 / 2 */
            *out = dec_mul_up(P(d), dec_div_up(dec_sq_half(P(get_par(e, "sensitivity")), 1),
                                               dec_mul_up(P(get_par(e, "sigma")), P(get_par(e, "sigma")))));
            return DPA_OK;
        }
        default:
            break;
        }
    }
        return dpa_error_set(err, DPA_EUNSUPPORTED, "%s/%s: no finite zCDP rho (use the \"gdp-residue\" filter)", path,
                             dpa_ev_kind_name(e->kind));
    }
}

dpa_status dpa_f_zcdp(const dpa_spec *q, dpa_dec *rho, dpa_error *err)
{
    return zcdp_rec(q->root, q->nb, "", rho, err);
}

/* ---------------- RDP ---------------- */
/* The rdp module's certified divergences (src/rdp/rdp.h: every value an
 * upper bound, both directions): the composition of the query's leaves,
 * max over the remove and add directions (the filter's guarantee must hold
 * for every ordered pair of neighbours, Feldman-Zrnic 2021). */
dpa_status dpa_f_rdp(const dpa_spec *q, const double *orders, size_t n, dpa_dec *out, dpa_error *err)
{
    dpa_dec s2;
    if (dpa_f_gaussian_sq(q, &s2)) { /* Gaussian: exactly a mu^2 / 2 (Mironov 2017, Prop 7) */
        for (size_t i = 0; i < n; i++) out[i] = dec_mul_up(P(orders[i]), dec_div_up(s2, dpa_dec_int(2)));
        return DPA_OK;
    }
    dpa_leafset ls;
    dpa_status st = dpa_leaves_build(q, &ls, err);
    if (st) return st == DPA_EINVAL ? st : dpa_error_set(err, DPA_EUNSUPPORTED, "rdp filter: %s", err ? err->message : "");
    dpa_rdp *r = dpa_rdp_new(orders, n, err);
    if (!r) {
        dpa_leaves_free(&ls);
        return err ? err->status : DPA_ENOMEM;
    }
    st = dpa_rdp_add_leafset(r, &ls, err);
    for (size_t i = 0; st == DPA_OK && i < n; i++) {
        double a = 0, b = 0;
        st = dpa_rdp_eval(r, orders[i], 0, &a, err);
        if (!st) st = dpa_rdp_eval(r, orders[i], 1, &b, err);
        out[i] = U(fmax(a, b));
        if (!st && isnan(fmax(a, b))) st = dpa_error_set(err, DPA_ENUMERIC, "rdp filter: no bound at order %g", orders[i]);
    }
    dpa_rdp_free(r);
    dpa_leaves_free(&ls);
    if (st == DPA_ENUMERIC || st == DPA_EINVAL) {
        char m[DPA_ERROR_MESSAGE_MAX];
        snprintf(m, sizeof m, "%s", err ? err->message : "");
        return dpa_error_set(err, DPA_EUNSUPPORTED, "rdp filter: the query's RDP could not be bounded: %s", m);
    }
    return st;
}

/* ---------------- GDP ---------------- */
/* Relative margin on nu(eps): for tanh(eps/2) >= SERIES_Z the probability
 * p = 1/(1 + e^-eps) >= 0.5 + 2.5e-4 carries an absolute error <= u, i.e.
 * a relative error <= 4.5e-13 in p - 1/2, which Phi^{-1} passes on with a
 * factor <= 1 near 1/2 and falls to 0 relative elsewhere; dpa_ndtri is
 * Newton-polished to a few ulp.  1e-10 covers both with a factor > 100. */
#define NU_REL 1e-10
/* Below this tanh(eps/2), the inverse-erf series is used (its next term is
 * < 1e-19 relative). */
#define SERIES_Z 1e-3

double dpa_f_nu_pure(double eps)
{
    if (!(eps > 0)) return 0;
    if (!isfinite(eps)) return INFINITY;
    double z = tanh(0.5 * eps), nu;
    if (z < SERIES_Z) {
        /* Phi^{-1}(1/2 + z/2) = sqrt(2) erfinv(z), erfinv(z) = sqrt(pi)/2 (z + pi z^3/12 + 7 pi^2 z^5/480 + ...) */
        double z2 = z * z;
        nu = 2 * sqrt(2.0) * 0.88622692545275801 * z * (1 + z2 * (M_PI / 12 + z2 * 7 * M_PI * M_PI / 480));
    } else {
        nu = 2 * dpa_ndtri_log(-log1p(exp(-eps)));
    }
    return dpa_f_up(nu * (1 + NU_REL));
}

/* mu^2 of a Gaussian-only query: sum of k (s/sigma)^2, in decimal, rounded up. */
static int gauss_rec(const dpa_event *e, dpa_dec mult, dpa_dec *s2)
{
    switch (e->kind) {
    case DPA_EV_GAUSSIAN: {
        dpa_dec m = dec_div_up(dec_mul_up(P(e->p[1]), P(e->p[1])), dec_mul_up(P(e->p[0]), P(e->p[0])));
        *s2 = dec_add_up(*s2, dec_mul_up(mult, m));
        return 1;
    }
    case DPA_EV_GDP:
        *s2 = dec_add_up(*s2, dec_mul_up(mult, dec_mul_up(P(e->p[0]), P(e->p[0]))));
        return 1;
    case DPA_EV_NO_OP:
        return 1;
    case DPA_EV_COMPOSE:
        for (size_t i = 0; i < e->nchild; i++)
            if (!gauss_rec(e->child[i], mult, s2)) return 0;
        return 1;
    case DPA_EV_REPEAT:
        return gauss_rec(e->child[0], dec_mul_up(mult, P(e->p[0])), s2);
    default: {
        double a, d;
        if (alias_of(e, &a, &d) != ALIAS_GAUSS) return 0;
        /* tree_aggregation: mu^2 = depth (s/sigma)^2 */
        double sens = get_par(e, "sensitivity"), sigma = get_par(e, "sigma");
        dpa_dec m = dec_div_up(dec_mul_up(P(sens), P(sens)), dec_mul_up(P(sigma), P(sigma)));
        *s2 = dec_add_up(*s2, dec_mul_up(mult, dec_mul_up(P(d), m)));
        return 1;
    }
    }
}

int dpa_f_gaussian_sq(const dpa_spec *q, dpa_dec *mu2)
{
    dpa_dec s2 = dpa_dec_int(0);
    if (!gauss_rec(q->root, dpa_dec_int(1), &s2)) return 0;
    *mu2 = s2;
    return 1;
}

static int zero_rec(const dpa_event *e, dpa_dec *keep)
{
    dpa_dec l;
    switch (e->kind) {
    case DPA_EV_APPROX:
        if (e->p[0] != 0) return 0;
        *keep = one_minus(P(e->p[1]));
        return 1;
    case DPA_EV_NO_OP:
    case DPA_EV_PURE:
    case DPA_EV_RANDOMIZED_RESPONSE:
        if (e->kind != DPA_EV_NO_OP && e->p[0] != 0) return 0;
        *keep = dpa_dec_int(1);
        return 1;
    case DPA_EV_COMPOSE: {
        dpa_dec s = dpa_dec_int(1);
        for (size_t i = 0; i < e->nchild; i++) {
            if (!zero_rec(e->child[i], &l)) return 0;
            s = dpa_dec_mul(s, l, 0);
        }
        *keep = s;
        return 1;
    }
    case DPA_EV_REPEAT:
        if (!zero_rec(e->child[0], &l)) return 0;
        *keep = dpa_dec_pow(l, e->p[0], 0);
        return 1;
    default: { /* a selection mechanism with epsilon 0 reveals nothing */
        double a, d;
        int cls = alias_of(e, &a, &d);
        if ((cls != ALIAS_PURE && cls != ALIAS_BR) || a != 0) return 0;
        *keep = dpa_dec_int(1);
        return 1;
    }
    }
}

int dpa_f_zero_eps_delta(const dpa_spec *q, dpa_dec *keep) { return zero_rec(q->root, keep); }

/* A single eps-DP leaf (pure, binary or k-ary randomized response, approx
 * with delta 0), unsampled, count 1: its PLD is dominated by RR_eps, whose
 * smallest GDP parameter is nu(eps). */
static int single_pure(const dpa_event *e, double *eps)
{
    while (e->kind == DPA_EV_REPEAT && e->p[0] == 1) e = e->child[0];
    while (e->kind == DPA_EV_COMPOSE && e->nchild == 1) e = e->child[0];
    if (e->kind == DPA_EV_PURE || e->kind == DPA_EV_RANDOMIZED_RESPONSE ||
        (e->kind == DPA_EV_APPROX && e->p[1] == 0)) {
        *eps = e->p[0];
        return 1;
    }
    /* permute_and_flip, report_noisy_max (Laplace/exponential noise): eps-DP.
     * The exponential mechanism (eps-BR) is left to the general path, which
     * takes the smaller of the accountant's certified mu and nu(eps). */
    double a, d;
    if (alias_of(e, &a, &d) == ALIAS_PURE) {
        *eps = a;
        return 1;
    }
    return 0;
}

dpa_status dpa_f_gdp_nu(const dpa_spec *q, dpa_dec *nu2, char *how, size_t howlen, dpa_error *err)
{
    double v;
    if (dpa_f_gaussian_sq(q, nu2)) {
        snprintf(how, howlen, "Gaussian query: nu = sqrt(sum mu_i^2) (GDP Cor 3.3)");
        return DPA_OK;
    }
    if (single_pure(q->root, &v)) {
        dpa_dec n = U(dpa_f_nu_pure(v));
        *nu2 = dec_mul_up(n, n);
        snprintf(how, howlen, "eps-DP query: nu = 2 Phi^-1(1/(1+e^-eps))");
        return DPA_OK;
    }
    /* general: the accountant's certified bracket of mu* */
    dpa_accountant *a = dpa_accountant_new(q, NULL, err);
    if (!a) return err ? (err->status == DPA_EINVAL ? DPA_EINVAL : DPA_EUNSUPPORTED) : DPA_EUNSUPPORTED;
    dpa_gdp_mu g;
    dpa_status st = dpa_accountant_gdp_mu(a, &g, err);
    dpa_accountant_free(a);
    if (st) return st;
    dpa_dec pe;
    dpa_error e2;
    if (dpa_f_pure_eps(q, &pe, &e2) == DPA_OK) {
        double n2 = dpa_f_nu_pure(dpa_dec_to_double(pe, 1));
        if (!g.certified_upper || n2 < g.upper) {
            g.upper = n2;
            g.certified_upper = 1;
            snprintf(g.note, sizeof g.note, "eps-DP query (eps <= %.6g): nu(eps)", dpa_dec_to_double(pe, 1));
        }
    }
    if (!g.certified_upper || !isfinite(g.upper))
        return dpa_error_set(err, DPA_EUNSUPPORTED,
                             "gdp filter: the query has no certified finite GDP parameter (%s); the \"gdp-residue\" "
                             "filter accounts subsampled Gaussians, the \"basic\" filter approx queries", g.note);
    dpa_dec n = U(g.upper);
    *nu2 = dec_mul_up(n, n);
    snprintf(how, howlen, "nu from the accountant: %s", g.note);
    return DPA_OK;
}
