/* The labelled mixture of dominating pairs (docs/mechanisms.md §3).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A mechanism that, with probability w_i (independent of the data), behaves
 * like a mechanism dominated by the pair (A_i, B_i), is dominated by the
 * pair that also reveals i:
 *     A = sum_i w_i A_i x delta_i,   B = sum_i w_i B_i x delta_i,
 * because H_s(sum w_i P_i || sum w_i Q_i) <= sum w_i H_s(P_i || Q_i) (joint
 * convexity of every f-divergence), with equality for the labelled pair.
 * Its loss at (y, i) is the part's loss W_i(y), so its loss law is the
 * w-mixture of the parts' laws: tails are weighted sums (in log space),
 * atoms the parts' atoms with their masses times w_i.  This is
 * dp_accounting's PrivacyLossDistribution.compute_mixture.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mech/pair.h"
#include "num/num.h"

#define U DPA_UNIT_ROUNDOFF

static void labelled_ctail(const dpa_pair *p, double t, double out[4])
{
    out[0] = out[1] = out[2] = out[3] = -INFINITY;
    for (size_t i = 0; i < p->nparts; i++) {
        const dpa_pair *b = p->parts[i];
        if (b->lca == -INFINITY && b->lcb == -INFINITY) continue;
        double r[4];
        dpa_pair_ctail(b, t, r);
        for (int j = 0; j < 4; j++) out[j] = dpa_log_add_exp(out[j], p->lwpart[i] + r[j]);
    }
}

static double labelled_var_estimate(const dpa_pair *p)
{
    double v = 0; /* the largest part's: a scale, not a bound */
    for (size_t i = 0; i < p->nparts; i++) v = fmax(v, dpa_pair_var_estimate(p->parts[i]));
    return v;
}

static void labelled_cont_range(const dpa_pair *p, double *clo, double *chi)
{
    for (size_t i = 0; i < p->nparts; i++) {
        const dpa_pair *b = p->parts[i];
        double blo, bhi;
        if (b->lca == -INFINITY && b->lcb == -INFINITY) continue; /* atoms: in the merged list */
        dpa_pair_loss_range(b, &blo, &bhi);
        *clo = fmin(*clo, blo);
        *chi = fmax(*chi, bhi);
    }
}

static const dpa_pair_ops labelled_ops = {labelled_ctail, labelled_var_estimate, labelled_cont_range};

static int cmp_atom(const void *x, const void *y)
{
    double a = ((const dpa_atom *)x)->w, b = ((const dpa_atom *)y)->w;
    return (a > b) - (a < b);
}

dpa_pair *dpa_pair_labelled(dpa_pair **parts, const double *w, size_t n, dpa_error *err)
{
    dpa_pair *p = NULL;
    if (!parts || !w || n == 0) {
        dpa_error_set(err, DPA_EINVAL, "labelled mixture: need at least one part");
        goto fail;
    }
    long double sw = 0;
    for (size_t i = 0; i < n; i++) {
        if (!parts[i]) { /* a part's constructor failed: err already set */
            if (err && err->status == DPA_OK) dpa_error_set(err, DPA_ENOMEM, "out of memory");
            goto fail;
        }
        if (!(w[i] > 0 && w[i] <= 1)) {
            dpa_error_set(err, DPA_EINVAL, "labelled mixture: weight %zu must be in (0, 1], got %g", i, w[i]);
            goto fail;
        }
        sw += w[i];
    }
    if (!(fabsl(sw - 1) <= (long double)(n + 1) * 0x1p-52)) {
        dpa_error_set(err, DPA_EINVAL, "labelled mixture: the weights sum to %.17Lg, not 1", sw);
        goto fail;
    }
    if (n == 1) return parts[0];
    size_t na = 0;
    for (size_t i = 0; i < n; i++) na += parts[i]->natoms;
    p = dpa_pair_alloc(DPA_PAIR_LABELLED, na, err);
    if (!p) goto fail;
    p->ops = &labelled_ops;
    p->parts = malloc(n * sizeof *p->parts);
    p->lwpart = malloc(n * sizeof *p->lwpart);
    if (!p->parts || !p->lwpart) {
        dpa_error_set(err, DPA_ENOMEM, "out of memory");
        goto fail;
    }
    memcpy(p->parts, parts, n * sizeof *parts);
    p->nparts = n;
    p->symmetric = 1;
    size_t k = 0;
    double shi = 0, slo = 0;
    for (size_t i = 0; i < n; i++) {
        const dpa_pair *b = parts[i];
        double lw = log(w[i]);
        p->lwpart[i] = lw;
        for (size_t j = 0; j < b->natoms; j++)
            p->atoms[k++] = (dpa_atom){b->atoms[j].w, lw + b->atoms[j].la, lw + b->atoms[j].lb};
        p->lca = dpa_log_add_exp(p->lca, lw + b->lca);
        p->lcb = dpa_log_add_exp(p->lcb, lw + b->lcb);
        shi += w[i] * b->slack_hi;
        slo += w[i] * b->slack_lo;
        if (!b->symmetric) p->symmetric = 0;
    }
    /* the omitted masses are upper bounds: round their sums up */
    p->slack_hi = shi * (1 + 4 * (double)n * U);
    p->slack_lo = slo * (1 + 4 * (double)n * U);
    if (k > 1) {
        qsort(p->atoms, k, sizeof *p->atoms, cmp_atom);
        size_t m = 0;
        for (size_t i = 0; i < k; i++) {
            if (m && p->atoms[m - 1].w == p->atoms[i].w) {
                p->atoms[m - 1].la = dpa_log_add_exp(p->atoms[m - 1].la, p->atoms[i].la);
                p->atoms[m - 1].lb = dpa_log_add_exp(p->atoms[m - 1].lb, p->atoms[i].lb);
            } else {
                p->atoms[m++] = p->atoms[i];
            }
        }
        p->natoms = m;
    }
    return p;
fail:
    if (p && p->nparts) { /* owns the parts now */
        dpa_pair_free(p);
        return NULL;
    }
    dpa_pair_free(p);
    for (size_t i = 0; parts && i < n; i++) dpa_pair_free(parts[i]);
    return NULL;
}
