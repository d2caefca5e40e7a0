/* A mixture of Gaussians against one Gaussian (mixture_of_gaussians and
 * sample_with_replacement events, docs/mechanisms.md §2).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A = sum_i w_i N(mu_i, 1) (mu_i >= 0), B = N(0, 1) (sensitivities and
 * noise scaled by sigma).  The privacy loss at output y is
 *     W(y) = log sum_i w_i exp(mu_i y - mu_i^2 / 2),
 * with W'(y) = the w-weighted mean of the mu_i under the posterior >= 0:
 * W is increasing (strictly once some mu_i > 0), from log w_0 (the weight
 * of the mu = 0 components; -inf if none) at y = -inf to +inf.  Hence
 *     A_c(W > t) = sum_i w_i Phibar(y(t) - mu_i),  B(W > t) = Phibar(y(t))
 * with y(t) the root of W(y) = t, found by Newton steps safeguarded by a
 * bracket (bisection whenever a step leaves it) to a few ulps.
 * This is the pair of dp_accounting's MixtureOfGaussiansDpEvent in the
 * remove direction; the add direction is its reversal (LT eq 7).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mech/pair.h"
#include "num/num.h"

/* W(y) and W'(y) (the posterior mean of mu) */
static double loss_at(const dpa_pair *p, double y, double *dw)
{
    size_t n = p->nmix;
    const double *mu = p->mix, *lw = p->mix + n;
    double mx = -INFINITY;
    for (size_t i = 0; i < n; i++) mx = fmax(mx, lw[i] + mu[i] * (y - 0.5 * mu[i]));
    double s = 0, sm = 0;
    for (size_t i = 0; i < n; i++) {
        double e = exp(lw[i] + mu[i] * (y - 0.5 * mu[i]) - mx);
        s += e;
        sm += e * mu[i];
    }
    if (dw) *dw = sm / s;
    return mx + log(s);
}

/* the root y of W(y) = t, for t above the infimum par[0] */
static double root_y(const dpa_pair *p, double t)
{
    double mmax = p->mix[p->nmix - 1];
    /* bracket: W(y) >= log w_max + mu_max (y - mu_max/2), so y = start of
     * that line at t is an upper end; go down geometrically for the lower */
    double lwmax = -INFINITY;
    for (size_t i = 0; i < p->nmix; i++)
        if (p->mix[i] == mmax) lwmax = fmax(lwmax, p->mix[p->nmix + i]);
    double hi = (t - lwmax) / mmax + 0.5 * mmax, lo, step = 1;
    while (loss_at(p, hi, NULL) < t) hi += step, step *= 2; /* rounding of the bound only */
    lo = hi - 1;
    step = 1;
    while (loss_at(p, lo, NULL) >= t) {
        hi = lo;
        step *= 2;
        lo -= step;
        if (!(lo > -1e300)) return -INFINITY;
    }
    double y = 0.5 * (lo + hi);
    for (int it = 0; it < 200; it++) {
        double d, f = loss_at(p, y, &d) - t;
        if (f < 0) lo = y;
        else hi = y;
        double yn = d > 0 ? y - f / d : NAN;
        if (!(yn > lo && yn < hi)) yn = 0.5 * (lo + hi);
        if (yn == y || hi - lo <= 4 * DPA_UNIT_ROUNDOFF * (fabs(y) + 1e-300)) return yn;
        y = yn;
    }
    return y;
}

/* log Phibar(x), log Phi(x), each on its accurate side */
static void ndtr_both(double x, double *lbar, double *l)
{
    if (x > 0) {
        *lbar = dpa_log_ndtr_c(x);
        *l = dpa_log1mexp(*lbar);
    } else {
        *l = dpa_log_ndtr(x);
        *lbar = dpa_log1mexp(*l);
    }
}

static void mixgauss_ctail(const dpa_pair *p, double t, double out[4])
{
    if (!(t > p->par[0])) { /* below the infimum of the loss: all mass above t */
        out[0] = p->lca;
        out[1] = -INFINITY;
        out[2] = 0.0;
        out[3] = -INFINITY;
        return;
    }
    double y = root_y(p, t);
    size_t n = p->nmix;
    double ga = -INFINITY, la = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        double lbar, l;
        ndtr_both(y - p->mix[i], &lbar, &l);
        ga = dpa_log_add_exp(ga, p->mix[n + i] + lbar);
        la = dpa_log_add_exp(la, p->mix[n + i] + l);
    }
    out[0] = ga;
    out[1] = la;
    ndtr_both(y, &out[2], &out[3]);
}

static double mixgauss_var_estimate(const dpa_pair *p)
{
    /* the largest component's loss variance: a scale, not a bound */
    double m = p->mix[p->nmix - 1];
    return m * m;
}

static void mixgauss_cont_range(const dpa_pair *p, double *clo, double *chi)
{
    *clo = p->par[0]; /* par[0]: log weight of mu = 0 */
    *chi = INFINITY;
}

static const dpa_pair_ops mixgauss_ops = {mixgauss_ctail, mixgauss_var_estimate, mixgauss_cont_range};

typedef struct comp { double mu, w; } comp;
static int cmp_comp(const void *a, const void *b)
{
    double x = ((const comp *)a)->mu, y = ((const comp *)b)->mu;
    return (x > y) - (x < y);
}

dpa_pair *dpa_pair_mixgauss(const double *mu, const double *w, size_t n, double inf_mass, dpa_error *err)
{
    if (!mu || !w || n == 0) {
        dpa_error_set(err, DPA_EINVAL, "mixture of Gaussians: no components");
        return NULL;
    }
    comp *c = malloc(n * sizeof *c);
    if (!c) {
        dpa_error_set(err, DPA_ENOMEM, "out of memory");
        return NULL;
    }
    long double sw = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(mu[i] >= 0 && mu[i] <= DPA_MU_NONPRIVATE && w[i] >= 0 && w[i] <= 1)) {
            free(c);
            dpa_error_set(err, DPA_EINVAL, "mixture of Gaussians: component %zu (mu %g, weight %g) out of domain", i,
                          mu[i], w[i]);
            return NULL;
        }
        sw += w[i];
        if (w[i] > 0) c[k++] = (comp){mu[i], w[i]};
    }
    if (sw > 1 + 1e-12L || !(inf_mass >= 0 && inf_mass <= 1)) {
        free(c);
        dpa_error_set(err, DPA_EINVAL, "mixture of Gaussians: weights sum to %.17Lg > 1", sw);
        return NULL;
    }
    qsort(c, k, sizeof *c, cmp_comp);
    /* merge equal mu */
    size_t m = 0;
    for (size_t i = 0; i < k; i++) {
        if (m && c[m - 1].mu == c[i].mu) c[m - 1].w += c[i].w;
        else c[m++] = c[i];
    }
    /* omitted components: loss +inf (dominates them in both directions) */
    long double rest = inf_mass > 0 ? inf_mass : 0;
    int has_inf = rest > 0;
    if (m == 0 || c[m - 1].mu == 0) {
        /* no loss beyond log w_0: a single atom (plus +inf) */
        dpa_pair *p = dpa_pair_alloc(DPA_PAIR_ATOMS, 3, err);
        if (!p) { free(c); return NULL; }
        size_t q = 0;
        double lw0 = m ? log(c[0].w) : -INFINITY;
        if (lw0 < 0) p->atoms[q++] = (dpa_atom){-INFINITY, -INFINITY, dpa_log1mexp(lw0)};
        if (m) p->atoms[q++] = (dpa_atom){lw0, lw0, 0.0};
        if (has_inf) p->atoms[q++] = (dpa_atom){INFINITY, (double)logl(rest), -INFINITY};
        p->natoms = q;
        p->symmetric = !has_inf && lw0 == 0;
        free(c);
        return p;
    }
    dpa_pair *p = dpa_pair_alloc(DPA_PAIR_MIXGAUSS, has_inf ? 1 : 0, err);
    double *mx = malloc(2 * m * sizeof *mx);
    if (!p || !mx) {
        free(mx);
        free(c);
        dpa_pair_free(p);
        if (p) dpa_error_set(err, DPA_ENOMEM, "out of memory");
        return NULL;
    }
    long double tot = 0;
    for (size_t i = 0; i < m; i++) {
        mx[i] = c[i].mu;
        mx[m + i] = log(c[i].w);
        tot += c[i].w;
    }
    p->mix = mx;
    p->nmix = m;
    p->ops = &mixgauss_ops;
    p->lca = (double)logl(tot);
    p->lcb = 0.0;
    p->par[0] = c[0].mu == 0 ? mx[m] : -INFINITY;
    if (has_inf) p->atoms[0] = (dpa_atom){INFINITY, (double)logl(rest), -INFINITY};
    p->symmetric = 0;
    free(c);
    return p;
}
