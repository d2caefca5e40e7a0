/* Privacy filters: internal layout and the per-query cost and dominance
 * helpers shared by the filter files (docs/filters.md).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef DPA_FILTER_INTERNAL_H
#define DPA_FILTER_INTERNAL_H

#include <stddef.h>
#include "dpacct/filter.h"
#include "dpacct/event.h"
#include "dpacct/status.h"
#include "filter/filter_decimal.h"

typedef enum dpa_filter_kind {
    DPA_F_PURE,
    DPA_F_BASIC,
    DPA_F_RDP,
    DPA_F_ZCDP,
    DPA_F_GDP,
    DPA_F_GDP_RESIDUE,
    DPA_F_NATURAL_GDP,   /* "natural" with {"mu": M} */
    DPA_F_NATURAL_DELTA, /* "natural" with {"delta": D} */
    DPA_F_NATURAL_APPROX,
    DPA_F_ADDITIVE       /* "additive-profile": RF Alg 3 */
} dpa_filter_kind;

struct dpa_filter {
    dpa_filter_kind kind;
    /* ---- configuration ---- */
    double eps, delta, mu;   /* budgets (those the kind uses) */
    size_t norders;          /* rdp: number of orders (>= 1) */
    double *orders, *rho;    /* rdp: orders and per-order budgets; zcdp: rho[0] */
    int rdp_vector;          /* rdp: configured with arrays */
    double report_delta;     /* rdp, zcdp, gdp kinds: delta of "as_epsilon_delta" */
    double max_queries;      /* natural-approx: the capacity k of RF Thm 9 */
    /* the budgets as the decimals the JSON wrote (docs/filters.md, "Exact budgets") */
    dpa_dec d_eps;           /* pure, basic: E */
    dpa_dec d_keep;          /* basic, natural (delta): 1 - D */
    dpa_dec d_mu2;           /* gdp kinds, natural (mu): M^2 */
    dpa_dec *d_rho;          /* rdp (norders), zcdp (1): R */
    /* ---- state (decimals: exact, or rounded toward less budget) ---- */
    double accepted;         /* number of accepted queries */
    dpa_dec spent_eps;       /* pure, basic: sum eps_i, rounded up */
    dpa_dec keep;            /* basic, natural (delta): prod (1 - delta_i), rounded down */
    dpa_dec *spent_rho;      /* rdp (norders), zcdp (1): sums, rounded up */
    int has_res;             /* gdp-residue: the base is mu_res, not the budget */
    double mu_res;           /* gdp-residue: the last residue search's result (a double, exact) */
    struct dpa_f_bcurve *bcurve; /* residue: a budget given as a tradeoff curve (before the first
                              * accepted query the state's budget; then G_mu_res (+) R_{0,delta_res}) */
    dpa_dec delta_res;       /* gdp-residue: the residue's delta d (budget G (+) R_{0,d}), rounded down;
                              * starts at the budget's delta */
    dpa_dec mu2_spent;       /* natural (mu): sum mu_i^2; gdp kinds: sum nu_i^2 charged
                              * since the base (the budget or mu_res); rounded up */
    char **specs;            /* natural-approx: canonical JSON of the accepted queries */
    size_t nspecs, capspecs;
    double last_delta;       /* natural-approx: certified delta(E) of the accepted composition */
    int nb;                  /* natural-approx: the neighbouring relation of the queries (-1 none yet) */
    size_t nlev;             /* additive-profile: the levels n of RF eq (1) */
    double *lev_eps;         /* additive-profile: eps_1..eps_{n-1} */
    dpa_dec *lev_budget;     /* additive-profile: l_1..l_n (RF eq (1), computed rounded down) */
    dpa_dec *lev_spent;      /* additive-profile: the sums of the charged profiles, rounded up */
};

/* ---- JSON texts (filter_json.c): a growing string; on allocation
 * failure bad is set and dpa_f_sb_done returns NULL ---- */
typedef struct dpa_f_sb {
    char *s;
    size_t n, cap;
    int bad;
} dpa_f_sb;
void dpa_f_sb_add(dpa_f_sb *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* a double: %.17g if finite (0 for -0), else a string */
void dpa_f_sb_num(dpa_f_sb *b, double x);
/* a decimal as a JSON string: ,"key":"0.75", or an array element when key
 * is "" or "," */
void dpa_f_sb_dec(dpa_f_sb *b, const char *key, dpa_dec a);
char *dpa_f_sb_done(dpa_f_sb *b);

/* ---- rounding helpers (every result on the named safe side) ---- */
double dpa_f_up(double x); /* the next double above x (x finite) */
double dpa_f_dn(double x); /* the next double below x, never below 0 for x >= 0 */

/* ---- per-query costs (filter_cost.c); each returns DPA_OK and the
 * value, or DPA_EUNSUPPORTED with a reason naming the offending JSON path ---- */
/* Costs are decimals: exact at the parameters the JSON wrote where the
 * mathematics is rational (sums, products, quotients), else a certified
 * double bound rounded up (docs/filters.md, "Exact budgets"). */
/* Certified upper bound on eps with the query eps-DP (delta = 0). */
dpa_status dpa_f_pure_eps(const dpa_spec *q, dpa_dec *eps, dpa_error *err);
/* (eps, delta) of the query by basic composition of its leaves' parameters;
 * delta as keep = 1 - delta, rounded down (more delta). */
dpa_status dpa_f_approx(const dpa_spec *q, dpa_dec *eps, dpa_dec *keep, dpa_error *err);
/* zCDP rho (Bun-Steinke 2016): certified upper bound. */
dpa_status dpa_f_zcdp(const dpa_spec *q, dpa_dec *rho, dpa_error *err);
/* RDP (max over both directions) at n orders: certified upper bounds. */
dpa_status dpa_f_rdp(const dpa_spec *q, const double *orders, size_t n, dpa_dec *out, dpa_error *err);
/* Smallest GDP parameter of the query, squared: a certified upper bound
 * nu^2 (naive GDP filter); *how gets a short remark. */
dpa_status dpa_f_gdp_nu(const dpa_spec *q, dpa_dec *nu2, char *how, size_t howlen, dpa_error *err);
/* nu(eps) = 2 Phi^{-1}(1/(1+e^-eps)), rounded up (the exact smallest mu of
 * randomized response RR_eps, GDP eq 4 / RF §5). */
double dpa_f_nu_pure(double eps);
/* The query is a composition of Gaussian/GDP leaves only (no sampling):
 * 1 and an upper bound on its mu^2 (exact for decimal parameters); 0
 * otherwise. */
int dpa_f_gaussian_sq(const dpa_spec *q, dpa_dec *mu2);
/* The query is a composition of (0, delta) leaves only (approx with
 * epsilon 0, no_op): 1 and 1 - delta rounded down; 0 otherwise. */
int dpa_f_zero_eps_delta(const dpa_spec *q, dpa_dec *keep);

/* ---- GDP dominance (filter_dominance.c) ---- */
/* A query prepared for checks G_m (+) L <= G_M: its Gaussian part (mu0,
 * possibly from subsampled Gaussians, which G_mu0 dominates) and the law of
 * the rest (atoms, per direction).  Opaque. */
typedef struct dpa_f_query dpa_f_query;
dpa_status dpa_f_query_new(const dpa_spec *q, dpa_f_query **out, char *remark, size_t remlen, dpa_error *err);
void dpa_f_query_free(dpa_f_query *fq);
/* 1 if the query has no non-Gaussian part (then mu0 is all). */
int dpa_f_query_is_gaussian(const dpa_f_query *fq, double *mu0_up);
/* The budget of a dominance test: G_M (+) R_{0,D}, or the curve cv
 * (filter_bcurve.h) when not NULL, against G_m (+) R_{0,d} (+) L. */
struct dpa_f_bcurve;
typedef struct dpa_f_bspec {
    double M, D, d;
    const struct dpa_f_bcurve *cv;
} dpa_f_bspec;
/* Certified test, both directions, whole curve, of G_m (+) R_{0,d} (+) R <=
 * the budget b, R the query's non-Gaussian rest (Id if none), m the whole
 * Gaussian part: 1 proven, 0 not proven (including out of memory). */
int dpa_f_rest_ok(const dpa_f_query *fq, double m, const dpa_f_bspec *b);
/* The rest's largest mass at +inf over its directions (an upper bound: the
 * query's own delta, L <= X (+) R_{0,a}) and its largest finite |loss|. */
double dpa_f_query_rest_inf(const dpa_f_query *fq);
double dpa_f_query_rest_eps(const dpa_f_query *fq);
/* 1 if the offset c0 = 1 - a - (1 - D)/(1 - d) of b's test is certified >= 0. */
int dpa_f_bspec_offset_ok(const dpa_f_bspec *b, double a);

/* ---- residue updates (filter_residue.c) ---- */
/* Certified test of G_{mu'} (+) L <= G_M (both directions, whole curve):
 * 1 proven, 0 not proven (including out of memory). */
int dpa_f_residue_ok(const dpa_f_query *fq, double mu_prime, double M);
/* The GDP residue update (RF Thm 5), for the approximate-GDP budget
 * B = G_M (+) R_{0,D} (D = 0: G_M): *accepted = L <= B (certified); then the
 * residue G_mu_new (+) R_{0,d_new} (+) L <= B, with d_new the budget's
 * delta left after the query's own (its laws' mass at +inf, a:
 * (1 - d_new)(1 - a) >= 1 - D; d_new = D when a = 0) and mu_new the largest
 * mu' found (bisection, rounded down).  docs/filters.md, "Approximate GDP
 * budgets". */
dpa_status dpa_f_residue_update(const dpa_f_query *fq, double M, double D, int *accepted, double *mu_new,
                                double *d_new, dpa_error *err);

/* The general residue filter's first step (RF Thm 1, Alg 1) under a budget
 * given as a tradeoff curve B (filter_bcurve.h): *accepted = the residue
 * G_0 (+) R_{0,d} passes, i.e. R_{0,d} (+) L <= B; then *mu_new = the largest
 * mu' found with G_mu' (+) R_{0,d_new} (+) L <= B (certified), d_new half of
 * the budget's mass at +inf that the query leaves (0 if only that passes). */
dpa_status dpa_f_residue_update_curve(const dpa_f_query *fq, const struct dpa_f_bcurve *cv, int *accepted,
                                      double *mu_new, double *d_new, dpa_error *err);

/* gdp, gdp-residue: the remaining mu^2 = base^2 - mu2_spent, rounded down
 * (base: the budget's decimal, or mu_res) (filter_gdp.c) */
dpa_dec dpa_f_gdp_rem2(const dpa_filter *f);

/* ---- filter kinds ---- */
dpa_status dpa_f_request_scalar(dpa_filter *f, const dpa_spec *q, dpa_filter_decision *out, dpa_error *err);
dpa_status dpa_f_request_gdp(dpa_filter *f, const dpa_spec *q, dpa_filter_decision *out, dpa_error *err);
dpa_status dpa_f_request_natural(dpa_filter *f, const dpa_spec *q, dpa_filter_decision *out, dpa_error *err);
/* DPA_EUNSUPPORTED naming the filter if the query's PLD is not symmetric
 * (filter_natural.c). */
dpa_status dpa_f_symmetric_query(const dpa_spec *q, const char *filter, dpa_error *err);
/* RF Alg 3 (filter_additive.c): the levels and budgets of RF eq (1) from
 * eps, delta and max_queries; the request. */
dpa_status dpa_f_additive_setup(dpa_filter *f, dpa_error *err);
dpa_status dpa_f_request_additive(dpa_filter *f, const dpa_spec *q, dpa_filter_decision *out, dpa_error *err);
/* RF Thm 9 with the explicit constants of its proof (Thms 14, 15): the
 * natural (eps, delta) filter with capacity k is (eps', delta')-DP. */
void dpa_f_thm9(double eps, double delta, double k, double *eps_out, double *delta_out, double *n_out);

#endif
