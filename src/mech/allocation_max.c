/* A pair dominated by K-of-T random allocation of a Gaussian step: the
 * law of the largest of the T outputs, binned (docs/sampling.md §4, the
 * lower bound for K > 1).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * In units of the noise, the remove pair of K-of-T allocation of a
 * Gaussian step with mu = sensitivity/sigma is (A_K, B^T): under A_K a
 * uniformly random K of the T coordinates are N(mu, 1), the others
 * N(0, 1); under B^T all are N(0, 1).  The maximum M of the T coordinates
 * is a post-processing, with
 *   P_A(M <= c) = Phi(c - mu)^K Phi(c)^(T-K),   P_B(M <= c) = Phi(c)^T,
 * and so is the bin of M in a partition of the line: the pair of bin
 * masses is dominated by (A_K, B^T) (data processing), and its reversal by
 * the add pair.  Masses come from log Phi (dpa_log_ndtr, relative error
 * below 4e-16 on the range used), in log space; A's are lowered and B's
 * raised by a bound on their relative error, which only lowers the pair's
 * curve (its losses drop, A's masses drop). */
#include <math.h>
#include <stdlib.h>
#include "mech/pair.h"
#include "num/num.h"

/* Bins of M: width ALLOC_MAX_BIN (noise units) from ALLOC_MAX_LO to mu + 10,
 * plus the two unbounded end bins. */
#define ALLOC_MAX_BIN 0.01
#define ALLOC_MAX_LO (-10.0)

/* log P_A(M <= c), log P_B(M <= c) */
static void log_cdfs(double c, double mu, double T, double K, double *la, double *lb)
{
    double l0 = dpa_log_ndtr(c);
    *la = K * dpa_log_ndtr(c - mu) + (T - K) * l0;
    *lb = T * l0;
}

dpa_pair *dpa_pair_allocation_max(double mu, double T, double K, dpa_error *err)
{
    if (!(mu > 0 && isfinite(mu) && K >= 1 && K <= T && T <= 1e6 && K == floor(K) && T == floor(T))) {
        dpa_error_set(err, DPA_EINVAL, "allocation max pair: mu %g, T %g, K %g out of domain", mu, T, K);
        return NULL;
    }
    double hi = mu + 10;
    size_t nb = (size_t)ceil((hi - ALLOC_MAX_LO) / ALLOC_MAX_BIN);
    dpa_pair *p = dpa_pair_alloc(DPA_PAIR_ATOMS, nb + 2, err);
    if (!p) return NULL;
    /* error of a log cdf: (T + 1) terms of relative error 4e-16 in log Phi
     * (|log Phi| < 60 here), the products and the sum: eabs absolute */
    const double u = DPA_UNIT_ROUNDOFF;
    size_t na = 0;
    double pa, pb, ca, cb;
    log_cdfs(ALLOC_MAX_LO, mu, T, K, &pa, &pb);
    for (size_t i = 0; i <= nb + 1; i++) {
        double la, lb, ea;
        if (i == 0) { /* (-inf, c_0] */
            la = pa;
            lb = pb;
            ea = (T + 1) * (4e-16 + 4 * u) * (fabs(pa) + fabs(pb) + 1);
        } else if (i <= nb) {
            double c = i == nb ? hi : ALLOC_MAX_LO + (double)i * ALLOC_MAX_BIN;
            log_cdfs(c, mu, T, K, &ca, &cb);
            /* bin mass F(c) (1 - e^{F(prev) - F(c)}), in logs */
            double e0 = (T + 1) * (4e-16 + 4 * u) * (fabs(ca) + fabs(pa) + fabs(cb) + fabs(pb) + 1);
            double da = pa - ca, db = pb - cb;
            la = da < 0 ? ca + dpa_log1mexp(da) : -INFINITY;
            lb = db < 0 ? cb + dpa_log1mexp(db) : -INFINITY;
            /* log1mexp(d) moves by at most e0 / (1 - e^d) for an error e0 in d */
            ea = e0 * (1 + 1 / fmax(-expm1(fmin(da, db)), 1e-300)) + 8 * u;
            pa = ca;
            pb = cb;
        } else { /* (c_n, inf) */
            la = dpa_log1mexp(pa);
            lb = dpa_log1mexp(pb);
            ea = (T + 1) * (4e-16 + 4 * u) * (fabs(pa) + fabs(pb) + 1) / fmax(-expm1(fmax(pa, pb)), 1e-300) + 8 * u;
        }
        if (!(ea < 0.5)) continue; /* a mass not known to a factor: dropped (lowers A) */
        la -= 2 * ea;              /* A down, B up: the pair's curve only drops */
        lb += 2 * ea;
        if (!(la > -INFINITY)) continue;
        p->atoms[na++] = (dpa_atom){lb > -INFINITY ? la - lb : INFINITY, la, lb};
    }
    p->natoms = na;
    /* bins in order of M need not be in order of loss: sort */
    dpa_pair_sort_atoms(p);
    p->symmetric = 0;
    return p;
}
