/* The leaves of an (eps, delta) or two-point composition as factors, their
 * grouping into distinct factors with total counts, the window estimates
 * that size them, the plan (tables, Chernoff fallback, or not applicable)
 * and dpa_rr_applicable / dpa_rr_applicable_dir.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdlib.h>
#include <string.h>
#include "exact/exact_rr_internal.h"

/* checkpoints per binomial (64 bytes each: 16 MB) */
#define MAX_CKPT ((double)(1 << 18))
/* the window edge estimate: log(TAU) minus a margin, so that it covers the
 * real window */
#define EST_DROP (1120 * 0.6931471805599453 + 24)

/* ---------------- window estimate (sizing only) ---------------- */

/* x log(x / M) + M - x (M > 0, x >= 0), for sizing: plain double */
static double bd0d(double x, double M)
{
    if (x == 0) return M;
    double v = (x - M) / M;
    if (fabs(v) < 0.01) {
        double s = 0, p = v * v;
        for (int n = 2; n < 12; n++, p *= -v) s += p / (n * (n - 1.0));
        return M * s;
    }
    return M * ((1 + v) * log1p(v) - v);
}

typedef struct est_ctx { double k, Mp, Mq, ref; } est_ctx;

/* approximate log pmf(y) (Stirling, without constants) */
static double est_logpmf(const est_ctx *c, double y)
{
    double v = -(bd0d(y, c->Mp) + bd0d(c->k - y, c->Mq));
    if (y > 0 && y < c->k) v -= 0.5 * log(y * ((c->k - y) / c->k));
    return v;
}

/* Mode and window estimate [*lo, *hi] of Bin(k, p), e = log(p / (1 - p))
 * (RR: eps); conservative (the real window is at most a few points wider
 * only when k is tiny). */
static void window_est(double k, double e, double *md, double *lo, double *hi)
{
    double q = 1 / (1 + exp(e)), p = 1 / (1 + exp(-e));
    double m = floor((k + 1) * p);
    if (m > k) m = k;
    *md = m;
    if (k <= 64) { *lo = 0; *hi = k; return; }
    if (!(q > 0)) { *lo = fmax(0, k - 2); *hi = k; return; }
    est_ctx c = {k, k * p, k * q, 0};
    double ref = est_logpmf(&c, m);
    double a, b;
    /* upper edge */
    if (ref - est_logpmf(&c, k) <= EST_DROP) *hi = k;
    else {
        a = m; b = k; /* f(a) high, f(b) low */
        while (b - a > 1) {
            double mid = floor(0.5 * (a + b));
            if (ref - est_logpmf(&c, mid) <= EST_DROP) a = mid; else b = mid;
        }
        *hi = fmin(k, b + 2);
    }
    if (ref - est_logpmf(&c, 0) <= EST_DROP) *lo = 0;
    else {
        a = 0; b = m;
        while (b - a > 1) {
            double mid = floor(0.5 * (a + b));
            if (ref - est_logpmf(&c, mid) <= EST_DROP) b = mid; else a = mid;
        }
        *lo = fmax(0, a - 2);
    }
}

/* ---------------- leaves as factors, grouping ---------------- */


/* relative bound on the representation error of a stored log mass la
 * (exp(la) vs the true mass; e^eta - 1 <= eta (1 + 2^-20) for eta < 2^-20) */
long double dpa_rr_rep_err(double la)
{
    if (isinf(la)) return 0;
    return (long double)DPA_RR_REP_ULPS * 0x1p-53L * (1 + fabsl((long double)la)) * ERRSLACK;
}

/* kind 1 from an atom-only pair in direction dir; 0 if outside the domain */
static int atoms_fac(const dpa_pair *p, int dir, fac *f)
{
    if (!p || p->kind != DPA_PAIR_ATOMS || p->lca != -INFINITY || p->lcb != -INFINITY || p->slack_hi != 0 ||
        p->slack_lo != 0)
        return 0;
    double fw[2], fl[2];
    int nf = 0, ninf = 0;
    f->kind = 1;
    f->lainf = -INFINITY;
    for (size_t i = 0; i < p->natoms; i++) {
        const dpa_atom *at = &p->atoms[i];
        double w = dir ? -at->w : at->w, la = dir ? at->lb : at->la, lb = dir ? at->la : at->lb;
        if (isnan(w) || isnan(la) || isnan(lb)) return 0;
        if (w == INFINITY) {
            if (lb != -INFINITY) return 0;
            if (la != -INFINITY) {
                if (ninf++) return 0;
                f->lainf = la;
            }
        } else if (w == -INFINITY) {
            if (la != -INFINITY) return 0;
        } else {
            if (la == -INFINITY && lb == -INFINITY) continue;
            if (la == -INFINITY || lb == -INFINITY || nf == 2 || !(fabs(w) <= 1e300)) return 0;
            fw[nf] = w;
            fl[nf++] = la;
        }
    }
    f->nfin = nf;
    if (nf == 0) return f->lainf == 0; /* all of A at +inf */
    if (nf == 1) {
        f->whi = f->wlo = fw[0];
        f->lahi = fl[0];
        f->lalo = -INFINITY;
        return 1;
    }
    /* distinct beyond the losses' representation ranges (section 1b) */
    if (!(fabs(fw[0] - fw[1]) > 64 * 0x1p-53 * fmax(fabs(fw[0]), fabs(fw[1])))) return 0;
    int h = fw[1] > fw[0];
    f->whi = fw[h];
    f->lahi = fl[h];
    f->wlo = fw[1 - h];
    f->lalo = fl[1 - h];
    return 1;
}

/* The leaves as factors in direction dir (atoms_ok: two-point pairs
 * allowed); *valid = 0 if some leaf is outside the domain.  NULL only when
 * out of memory. */
fac *dpa_rr_collect(const dpa_leafset *L, int dir, int atoms_ok, int *valid)
{
    fac *f = malloc((L->n ? L->n : 1) * sizeof *f);
    if (!f) return NULL;
    *valid = atoms_ok || L->all_rr;
    for (size_t i = 0; i < L->n; i++) {
        const dpa_leaf *l = &L->v[i];
        double k = l->count;
        memset(&f[i], 0, sizeof f[i]);
        f[i].k = k;
        if (!(k >= 1 && isfinite(k))) *valid = 0;
        if (!atoms_ok || !isnan(l->rr_eps)) {
            double e = l->rr_eps, dl = l->rr_delta;
            f[i].kind = 0;
            f[i].eps = e;
            f[i].delta = dl;
            if (!(e >= 0 && isfinite(e) && dl >= 0 && dl <= 1)) *valid = 0;
        } else if (l->inner || l->kind == DPA_EV_PRIVACY_LOSS || l->kind == DPA_EV_PRIVACY_PROFILE || !atoms_fac(l->pair, dir, &f[i]) || k != floor(k)) {
            /* (privacy_loss tables: their masses are data, not the
             * representation of a known pair within DPA_RR_REP_ULPS: the
             * PLD method composes them as given) */
            *valid = 0;
        }
    }
    return f;
}


static int cmp_grp(const void *a, const void *b)
{
    double wa = ((const grp *)a)->ehi - ((const grp *)a)->elo, wb = ((const grp *)b)->ehi - ((const grp *)b)->elo;
    return (wa > wb) - (wa < wb);
}

/* the grouping key of factor f (0 if it is no factor: eps 0, no finite atom) */
static int group_key(const fac *f, grp *key)
{
    memset(key, 0, sizeof *key);
    if (f->kind == 0) {
        double e = f->eps;
        if (!(e > 0 && isfinite(e))) return 0;
        key->gen = 0;
        key->eps = key->whi = key->lam = e;
        key->wlo = -e;
    } else {
        if (f->nfin == 0) return 0;
        key->gen = 1;
        key->eps = NAN;
        key->whi = key->whi0 = f->whi;
        key->wlo = key->wlo0 = f->wlo;
        key->lahi = f->lahi;
        key->lalo = f->lalo;
        key->lam = f->nfin == 1 ? INFINITY : f->lahi - f->lalo;
    }
    return 1;
}

/* the order of keys (0 iff equal in the sense of ==; no NaN among the
 * compared fields), ties by position */
typedef struct gkey { grp key; size_t i; } gkey;

static int dcmp(double a, double b) { return (a > b) - (a < b); }

static int cmp_gkey(const void *pa, const void *pb)
{
    const gkey *a = pa, *b = pb;
    int c = (a->key.gen > b->key.gen) - (a->key.gen < b->key.gen);
    if (!c) {
        if (a->key.gen) {
            c = dcmp(a->key.whi, b->key.whi);
            if (!c) c = dcmp(a->key.wlo, b->key.wlo);
            if (!c) c = dcmp(a->key.lahi, b->key.lahi);
            if (!c) c = dcmp(a->key.lalo, b->key.lalo);
        } else c = dcmp(a->key.eps, b->key.eps);
    }
    if (!c) c = (a->i > b->i) - (a->i < b->i);
    return c;
}

/* the groups by linear search: in the order of their first factor, the
 * counts summed in factor order */
static size_t group_linear(const fac *f, size_t n, grp *g)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        grp key;
        if (!group_key(&f[i], &key)) continue;
        size_t j = 0;
        while (j < m && !(g[j].gen == key.gen &&
                          (key.gen ? g[j].whi == key.whi && g[j].wlo == key.wlo && g[j].lahi == key.lahi &&
                                         g[j].lalo == key.lalo
                                   : g[j].eps == key.eps)))
            j++;
        if (j == m) g[m++] = key;
        g[j].k += f[i].k;
    }
    return m;
}

/* the same groups, the same order and the same sums, with the duplicates
 * found by sorting (O(n log n)); -1 when out of memory */
static long long group_sorted(const fac *f, size_t n, grp *g)
{
    gkey *ks = malloc((n ? n : 1) * sizeof *ks);
    size_t *rep = malloc((n ? n : 1) * sizeof *rep), *gid = malloc((n ? n : 1) * sizeof *gid);
    grp *keyof = malloc((n ? n : 1) * sizeof *keyof);
    long long m = -1;
    if (ks && rep && gid && keyof) {
        size_t nv = 0;
        for (size_t i = 0; i < n; i++) {
            rep[i] = SIZE_MAX;
            if (group_key(&f[i], &keyof[i])) ks[nv].key = keyof[i], ks[nv++].i = i;
        }
        qsort(ks, nv, sizeof *ks, cmp_gkey);
        /* rep[i]: the first factor with i's key */
        for (size_t a = 0; a < nv;) {
            size_t b = a + 1;
            gkey x = ks[a];
            x.i = 0;
            for (; b < nv; b++) {
                gkey y = ks[b];
                y.i = 0;
                if (cmp_gkey(&x, &y)) break;
            }
            for (size_t c = a; c < b; c++) rep[ks[c].i] = ks[a].i;
            a = b;
        }
        m = 0;
        for (size_t i = 0; i < n; i++) {
            if (rep[i] == SIZE_MAX) continue;
            if (rep[i] == i) {
                gid[i] = (size_t)m;
                g[m++] = keyof[i];
            } else gid[i] = gid[rep[i]];
            g[gid[i]].k += f[i].k;
        }
    }
    free(ks);
    free(rep);
    free(gid);
    free(keyof);
    return m;
}

/* Distinct eps > 0 and distinct two-point factors with total counts, sorted
 * by window size (largest last).  Returns m. */
size_t dpa_rr_group(const fac *f, size_t n, grp *g)
{
    long long ms = n > 64 ? group_sorted(f, n, g) : -1;
    size_t m = ms >= 0 ? (size_t)ms : group_linear(f, n, g);
    for (size_t j = 0; j < m; j++) window_est(g[j].k, g[j].lam, &g[j].md, &g[j].elo, &g[j].ehi);
    qsort(g, m, sizeof *g, cmp_grp);
    return m;
}

double dpa_rr_bk_of(const grp *g)
{
    return fmax(1.0, ceil((g->ehi - g->elo + 1) / MAX_CKPT));
}

/* 0: not applicable, 1: tables, 2: Chernoff fallback (one eps, RR only) */
int dpa_rr_plan(const grp *g, size_t m)
{
    double steps = 0;
    for (size_t j = 0; j < m; j++) steps += g[j].ehi - g[j].elo + 1;
    if (m <= 1) return steps <= MAX_STEPS ? 1 : !g[0].gen ? 2 : 0;
    if (!(steps <= MAX_STEPS)) return 0;
    double cost = dpa_rr_bk_of(&g[m - 1]);
    for (size_t j = 0; j + 1 < m; j++) cost *= g[j].ehi - g[j].elo + 1;
    return cost <= DPA_RR_MAX_LATTICE;
}

/* plan of L in direction dir (0 when outside the domain or out of memory) */
static int plan_of(const dpa_leafset *L, int dir, int atoms_ok)
{
    int valid, pl = 0;
    fac *f = dpa_rr_collect(L, dir, atoms_ok, &valid);
    grp *g = malloc((L->n ? L->n : 1) * sizeof *g);
    if (f && g && valid) pl = dpa_rr_plan(g, dpa_rr_group(f, L->n, g));
    free(f);
    free(g);
    return pl;
}

int dpa_rr_applicable(const dpa_leafset *L)
{
    if (!L || !L->all_rr) return 0;
    return plan_of(L, 0, 0) > 0;
}

int dpa_rr_applicable_dir(const dpa_leafset *L)
{
    if (!L) return 0;
    return plan_of(L, 0, 1) > 0 && plan_of(L, 1, 1) > 0;
}
