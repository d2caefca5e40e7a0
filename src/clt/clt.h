/* The CLT and Berry-Esseen accountants (methods gdp and clt): moment
 * functionals of the privacy loss per leaf, their sums over a composition,
 * the Gaussian-DP approximation and the Berry-Esseen envelope.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Notation (docs/clt.md).  A direction of a composition is a dominating
 * pair (X, Y) with privacy loss W = log dX/dY; its profile is
 * delta_{X|Y}(eps) = H_{e^eps}(X || Y) = sup_t X(W > t) - e^eps Y(W > t).
 * dpacct's remove direction of a leaf is its pair (A, B), the add direction
 * (B, A) (src/model/leaves.h).  The GDP paper's functionals of a symmetric
 * tradeoff function f = T(P, Q) (GDP §3.2) are moments of W under one of
 * the two measures: kl = E_X[W], kappa2 = E_X[W^2], kappa3 = E_X|W|^3,
 * kbar3 = E_X|W - kl|^3, and for symmetric pairs the moments under Y are
 * those of -W under X.  We keep, for each measure, the mean, the variance
 * (kappa2 - kl^2, computed directly, without that cancellation) and the
 * third absolute central moment (kbar3), which is what the Berry-Esseen
 * theorem uses (GDP Appendix D, eq 27).
 *
 * Every moment comes as a point estimate plus a certified enclosure
 * (closed forms: outward rounding; the subsampled Gaussian: Gauss-Legendre
 * panels with Trefethen's error bound, node round-off and truncated tails,
 * clt_moments.c).  The gdp method uses the point estimates; the clt method
 * the enclosures.
 *
 * No global mutable state: everything here is a pure function of its
 * arguments (GSL's Gauss-Legendre table is allocated per call).
 */
#ifndef DPA_CLT_H
#define DPA_CLT_H

#include <stddef.h>
#include "dpacct/status.h"
#include "model/leaves.h"
#include "model/method.h"

/* The Berry-Esseen constant for sums of independent, not necessarily
 * identically distributed summands: sup_x |F_n(x) - Phi(x)| <= C sum rho_i /
 * (sum sigma_i^2)^{3/2} with C = 0.5600 (Shevtsova 2010; the value GDP
 * Theorem D.4 quotes and uses in eq 10). */
#define DPA_CLT_BE_CONST 0.56
/* Sharper constants for identically distributed summands (Shevtsova 2011,
 * "On the absolute constants in the Berry-Esseen type inequalities for
 * identically distributed summands", arXiv:1111.6554, Thm 1 and eq (4)):
 *   sup |F_n - Phi| <= 0.4748 L  and  <= 0.33554 (L + 0.415/sqrt(n)),
 * L = beta_3 / (sigma^3 sqrt(n)) the Lyapunov ratio of n i.i.d. summands.
 * Used by the clt envelope when the non-Gaussian part of the loss is n
 * copies of one leaf (the Gaussian part is exactly normal). */
#define DPA_CLT_BE_IID 0.4748
#define DPA_CLT_BE_IID_A 0.33554
#define DPA_CLT_BE_IID_B 0.415

/* Largest mu = sensitivity/sigma of a subsampled Gaussian leaf: the
 * quadrature's panels must be narrower than ~1/mu (the integrand's strip of
 * analyticity, clt_moments.c), so mu = 100 already needs ~10^4 panels per
 * integral; beyond it such a step is non-private anyway. */
#define DPA_CLT_SUBSAMPLED_MU_MAX 100.0
/* Largest eps0 = sensitivity/scale of a Laplace leaf: its moments are sums of
 * Poisson(c) weights with c <= eps0, which need e^-eps0 as a normal double
 * (and ~eps0 terms). */
#define DPA_CLT_LAPLACE_EPS_MAX 700.0

/* Moments of W under one measure: point estimates and certified bounds. */
typedef struct dpa_clt_side {
    double m, v, r;         /* estimates: mean, variance, third absolute central moment */
    double m_lo, m_hi;      /* m_lo <= E W <= m_hi */
    double v_lo, v_hi;      /* v_lo <= Var W <= v_hi */
    double r_hi;            /* E |W - E W|^3 <= r_hi */
} dpa_clt_side;

/* One leaf's functionals in its remove direction (A, B): x under A, y under
 * B.  The add direction's are those of -W with the measures exchanged. */
typedef struct dpa_clt_leaf {
    dpa_clt_side x, y;
    double delta;  /* the leaf is (its continuous part) (x) f_{0,delta} (GDP eq 11): approx leaves */
    int gaussian;  /* W is exactly normal under both measures (Gaussian/GDP leaves) */
    int symmetric; /* y is x mirrored (every leaf but the Poisson-subsampled Gaussian) */
    int poisson_gauss; /* a Poisson-subsampled Gaussian (q < 1): rate and mu below */
    int sample_gauss;  /* a sampled (without replacement) Gaussian, C_q(G_mu) */
    double q, mu;
} dpa_clt_leaf;

/* Closed forms. */
void dpa_clt_leaf_gaussian(double mu, double mu_rel, dpa_clt_leaf *out);    /* W ~ N(mu^2/2, mu^2) */
void dpa_clt_leaf_rr(double eps, double delta, dpa_clt_leaf *out);           /* GDP Lemma D.8 */
dpa_status dpa_clt_leaf_laplace(double eps0, dpa_clt_leaf *out, dpa_error *err);
/* Quadrature: Poisson subsampling at rate q of a Gaussian with mu (the
 * add/remove pair (q N(mu,1) + (1-q) N(0,1), N(0,1)), asymmetric), and
 * sampling without replacement at rate p (the replace-one pair C_p(G_mu),
 * GDP Lemma 5.5 with the slope -1 segment's term, symmetric). */
dpa_status dpa_clt_leaf_poisson_gaussian(double mu, double q, dpa_clt_leaf *out, dpa_error *err);
dpa_status dpa_clt_leaf_sample_gaussian(double mu, double p, dpa_clt_leaf *out, dpa_error *err);

/* Whether method `method` ("gdp" or "clt") can take leaf l: DPA_OK, or
 * DPA_EUNSUPPORTED with the reason and which method can.  Cheap. */
dpa_status dpa_clt_leaf_supported(const dpa_leaf *l, const char *method, dpa_error *err);
/* The functionals of a supported leaf. */
dpa_status dpa_clt_leaf_of(const dpa_leaf *l, dpa_clt_leaf *out, dpa_error *err);

/* Sums over a composition, one measure of one direction. */
typedef struct dpa_clt_sum {
    double m, v;                 /* estimates */
    double m_lo, m_hi, v_lo, v_hi, r_hi;
    double v_ng_lo, r_ng_hi;     /* the same over the non-Gaussian leaves only */
    double kappa2;               /* GDP's ||kappa2||_1 = sum k (v + m^2) (estimate; reported only) */
    int n_ng;                    /* number of non-Gaussian leaves with non-zero variance */
    double k_ng;                 /* their total count (i.i.d. summands when n_ng == 1) */
} dpa_clt_sum;

/* One direction (X, Y) of a composition. */
typedef struct dpa_clt_dir {
    dpa_clt_sum x, y;
    /* Certified Kolmogorov distances of the laws of W under X and under Y
     * from N(x.m, x.v) and N(y.m, y.v) (Berry-Esseen, plus the uncertainty
     * of the centring moments); +inf when they certify nothing */
    double gamma_x, gamma_y;
    /* the same with Shevtsova's i.i.d. constants where they apply (<= gamma_x,
     * gamma_y): what the clt envelope uses */
    double gamma_env_x, gamma_env_y;
    int gauss;     /* no non-Gaussian leaf: W is normal, N(V/2, V) and N(-V/2, V) */
    int identity;  /* every variance is 0: W = 0 (the pair is the identity) */
} dpa_clt_dir;

typedef struct dpa_clt_comp {
    dpa_clt_dir dir[2];   /* 0 remove, 1 add */
    int symmetric;        /* dir[1] equals dir[0] */
    /* delta0 = 1 - prod (1 - delta_i)^{k_i}: the f_{0,delta0} factor (GDP eq 12) */
    double delta0, delta0_lo, delta0_hi;
    /* every leaf is a subsampled or plain Gaussian, at least one subsampled:
     * then the asymptotic mu^2 = sum of k q^2 (e^{mu^2} - 1) (Poisson: Bu,
     * Dong, Long, Su 2020, "Deep learning with Gaussian differential
     * privacy", the CLT for Poisson subsampling, mu = q sqrt(T (e^{1/sigma^2}
     * - 1)), the form other tools use; it is not GDP Cor 5.4),
     * k 2 p^2 chi2+(G_mu) (sampling without replacement, GDP Cor 5.4 and
     * Lemma "chirep": chi2+(G_mu) = e^{mu^2} Phi(3 mu/2) + 3 Phi(-mu/2) - 2),
     * k mu^2 (plain); n_poisson / n_sample count the subsampled leaves */
    int all_poisson_gauss;
    int n_poisson, n_sample;
    double cor54_mu2;
} dpa_clt_comp;

/* Sum the leaves (counts k[i]) and derive the gammas. */
void dpa_clt_compose(const dpa_clt_leaf *lv, const double *k, size_t n, dpa_clt_comp *out);

/* The CLT's mu for a direction: mu = (E_X W - E_Y W) / sqrt((Var_X W + Var_Y W)/2),
 * which for symmetric pairs is GDP's 2 ||kl||_1 / sqrt(||kappa2||_1 - ||kl||_2^2)
 * (the Berry-Esseen theorem's mu, GDP eq 10).  *mu from the estimates,
 * [*lo, *hi] from the enclosures. */
void dpa_clt_mu(const dpa_clt_dir *d, double *mu, double *lo, double *hi);

/* The asymptotic CLT of subsampled Gaussians (p sqrt(T) fixed, T -> inf;
 * GDP Cor 5.4 without replacement, Bu et al. 2020 for Poisson subsampling):
 * mu = sqrt(cor54_mu2); NAN unless comp->all_poisson_gauss. */
double dpa_clt_cor54_mu(const dpa_clt_comp *c);

/* Berry-Esseen envelope of the profile of direction d (continuous part,
 * without delta0): *up >= delta_{X|Y}(eps) >= *lo, certified.  For the
 * Gaussian and identity cases the exact closed form (bracketed). */
void dpa_clt_envelope_delta(const dpa_clt_dir *d, double eps, double *up, double *lo);

/* The envelope on the tradeoff curve f = T(Y, X) of the direction (type I
 * error alpha of testing Y against X; GDP eq 10 with P = Y, Q = X):
 * *lo <= f(alpha) <= *hi, alpha in [0, 1].  For symmetric d,
 * G_mu(alpha + gamma) - gamma and G_mu(alpha - gamma) + gamma (clamped to
 * [0, 1 - alpha]).  Evaluated in double precision (no outward rounding:
 * for tests and plots). */
void dpa_clt_envelope_tradeoff(const dpa_clt_dir *d, double alpha, double *lo, double *hi);

/* delta0 combined with a continuous-part value: delta0 + (1 - delta0) x,
 * increasing in both; dir > 0 rounds up, dir < 0 down. */
double dpa_clt_with_delta0(double delta0, double x, int dir);

/* The CLT regime (docs/clt.md §4): the Berry-Esseen gamma of every
 * direction and measure at most this.  A heuristic threshold, measured: on
 * a sweep of Poisson-subsampled Gaussians (sigma 0.6-2, q 0.001-0.05,
 * 100-10^4 steps, delta 1e-5 and 1e-8) pld's certified eps was 1.01 to
 * 1.40 times method gdp's where gamma <= 0.05, and 1.08 to 15.8 times
 * where gamma > 0.05.  Inside the regime gdp still under-states. */
#define DPA_CLT_REGIME_GAMMA 0.05

/* The largest certified gamma over the directions and measures of c (0 for
 * Gaussian or identity compositions; +inf when Berry-Esseen is vacuous). */
double dpa_clt_gamma_max(const dpa_clt_comp *c);

/* The public CLT quantities (dpacct/accountant.h) of a gdp or clt state. */
void dpa_clt_state_info(const void *state, dpa_clt_info *out);

/* The method tables of the gdp (CLT approximation) and clt (Berry-Esseen)
 * methods (src/clt/clt_method.c), which the accountant dispatches to. */
extern const dpa_method_ops dpa_method_gdp_ops;
extern const dpa_method_ops dpa_method_clt_ops;

#endif
