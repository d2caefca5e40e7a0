/* Flattening an event tree into distinct leaves (see leaves.h).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/leaves.h"
#include "event/event_internal.h"
#include "num/num.h"

#define PATH_MAX_LEN 512

typedef struct walk {
    const dpa_spec *spec;
    dpa_leafset *set;
    size_t cap;
    /* identity of each leaf for merging: kind, params, wrapper */
    double (*keys)[6];
    long long next_id; /* for the unique keys of composite leaves */
    int sampled;       /* walking the inner composition of a subsampled step */
} walk;

static int is_mechanism(dpa_event_kind k)
{
    return k != DPA_EV_COMPOSE && k != DPA_EV_REPEAT && k != DPA_EV_POISSON && k != DPA_EV_SAMPLE &&
           k != DPA_EV_RANDOM_ALLOCATION;
}

/* Kinds whose guarantee is a Renyi bound only (no dominating pair). */
static int is_rdp_only(dpa_event_kind k)
{
    return k == DPA_EV_REPEAT_AND_SELECT || k == DPA_EV_LAPLACE_SVT || k == DPA_EV_GAUSSIAN_SVT;
}

/* Kinds whose parameters are a table (event data): never merged by key. */
static int is_table(dpa_event_kind k)
{
    return k == DPA_EV_PRIVACY_LOSS || k == DPA_EV_PRIVACY_PROFILE || k == DPA_EV_MIXTURE_OF_GAUSSIANS;
}

/* A mechanism whose two distributions coincide (pure/randomized_response
 * with epsilon 0, approx with epsilon 0 and delta 0): the identity of
 * composition, with or without subsampling.  Such leaves are dropped: they
 * change no privacy parameter, and a huge count of them would only inflate
 * the PLD method's per-factor round-off allowance. */
static int is_identity(const dpa_event *e)
{
    return e->kind == DPA_EV_NO_OP || ((e->kind == DPA_EV_PURE || e->kind == DPA_EV_RANDOMIZED_RESPONSE) && e->p[0] == 0) ||
           (e->kind == DPA_EV_APPROX && e->p[0] == 0 && e->p[1] == 0);
}

/* Sampling with replacement of a Gaussian with mu = sensitivity/sigma: one
 * record appears K ~ Binomial(m, 1/n) times, so the remove-direction pair
 * is (sum_k P(K = k) N(k mu, 1), N(0, 1)) (docs/mechanisms.md §2).  The
 * components kept are those with pmf >= e^-700, from the first such k (the
 * pmf is unimodal: below the mode it increases) up to where the upper tail
 * is below 1e-30 (bounded geometrically).  The log pmf: at the window's
 * start k0 by the direct sum log C(m, k0) = sum_{i < k0} log((m - i)/(i + 1))
 * in long double (k0 is at most ~6e4: wider binomials are refused before
 * any loop, since they need more than DPA_MAX_MIXTURE_COMPONENTS
 * components), then by the ratio recurrence.  The omitted A-mass (the
 * components below e^-700, at most k0 e^-700 below the window plus the
 * ones inside it, and the upper tail) is the pair's slack_hi: counted at
 * loss +inf by the upper bounds (which dominates it), dropped by the lower
 * bounds (the remove-direction profile of (A_kept, B) is below the true
 * one, A >= A_kept). */
#define SWR_TAIL 1e-30
#define SWR_LOG_FLOOR (-700.0)
/* Components with pmf >= e^-700 of a binomial with standard deviation sd
 * number at least ~2 sqrt(2 * 700) sd = 75 sd (Gaussian core): refuse
 * without looping when 60 sd exceeds the component cap. */
#define SWR_SD_FACTOR 60.0
/* The mu of the gaussian/gdp child of a subsampling event e (name; why:
 * the reason only those children are taken); -1 with DPA_EUNSUPPORTED for
 * any other child. */
static double gaussian_child_mu(const dpa_event *e, const char *name, const char *why, const char *path,
                                dpa_error *err)
{
    const dpa_event *c = e->child[0];
    if (c->kind != DPA_EV_GAUSSIAN && c->kind != DPA_EV_GDP) {
        dpa_error_set(err, DPA_EUNSUPPORTED, "%s: %s is accounted over a gaussian or gdp leaf only, not %s (%s)",
                      path, name, dpa_ev_kind_name(c->kind), why);
        return -1;
    }
    return c->kind == DPA_EV_GAUSSIAN ? c->p[1] / c->p[0] : c->p[0];
}

static dpa_pair *swr_pair(const dpa_event *e, const char *path, dpa_error *err)
{
    double mu = gaussian_child_mu(e, "sample_with_replacement",
                                  "its pair is a Gaussian mixture over the number of copies of a record", path, err);
    if (mu < 0) return NULL;
    double n = e->p[0], m = e->p[1];
    if (n == 1) { /* every draw is the record: K = m */
        double one = 1;
        double mm = m * mu;
        return dpa_pair_mixgauss(&mm, &one, 1, 0, err);
    }
    long double pl = 1.0L / (long double)n, lr = -logl((long double)n - 1) /* log(p/(1-p)) */;
    double sd = sqrt(m * (double)pl * (1 - (double)pl));
    if (SWR_SD_FACTOR * sd > DPA_MAX_MIXTURE_COMPONENTS) {
        dpa_error_set(err, DPA_EUNSUPPORTED,
                      "%s: sample_with_replacement with n = %.17g, m = %.17g: the number of copies of a record "
                      "(Binomial(m, 1/n), standard deviation %.3g) takes more than %d values of probability "
                      "above e^-700, each a mixture component; not supported",
                      path, n, m, sd, DPA_MAX_MIXTURE_COMPONENTS);
        return NULL;
    }
    /* window start: 40 standard deviations (and 40) below the mean */
    double mean = m / n, k0 = floor(mean - 40 * sd - 40);
    if (k0 < 0) k0 = 0;
    long double lp = (long double)(m - k0) * log1pl(-pl) + (long double)k0 * logl(pl);
    for (double i = 0; i < k0; i++) lp += logl(((long double)m - i) / (i + 1));
    /* the pmf increases below the mode: step down while the start is above the floor */
    while (k0 > 0 && lp >= SWR_LOG_FLOOR) {
        lp -= logl(((long double)m - (k0 - 1)) / k0) + lr;
        k0--;
    }
    size_t cap = 64, k = 0;
    double *mus = malloc(cap * sizeof *mus), *ws = malloc(cap * sizeof *ws);
    /* below k0: k0 components each below e^-700 */
    double dropped = k0 > 0 ? k0 * exp(SWR_LOG_FLOOR) : 0, tail = 0;
    if (!mus || !ws) goto nomem;
    for (double j = k0;; j++) {
        if (lp >= SWR_LOG_FLOOR) {
            if (k == cap) {
                if (cap >= DPA_MAX_MIXTURE_COMPONENTS) {
                    free(mus);
                    free(ws);
                    dpa_error_set(err, DPA_EUNSUPPORTED,
                                  "%s: sample_with_replacement with m/n = %g needs more than %d mixture components; "
                                  "not supported",
                                  path, m / n, DPA_MAX_MIXTURE_COMPONENTS);
                    return NULL;
                }
                cap *= 2;
                double *a = realloc(mus, cap * sizeof *mus), *b = a ? realloc(ws, cap * sizeof *ws) : NULL;
                if (a) mus = a;
                if (b) ws = b;
                if (!a || !b) goto nomem;
            }
            mus[k] = j * mu;
            ws[k++] = (double)expl(lp);
        } else {
            dropped += (double)expl(lp) * (1 + 1e-6) + 1e-300; /* each below e^-700: their count times that */
        }
        if (j == m) break;
        long double lnext = lp + logl(((long double)m - j) / (j + 1)) + lr;
        /* beyond the mode the ratio decreases: the tail from j + 1 on is at
         * most pmf(j + 1) / (1 - ratio(j + 1)) */
        double r = (m - j - 1) / (j + 2) / (n - 1);
        if (j + 1 > m / n && r < 1) {
            double lt = (double)lnext - log1p(-r);
            if (lt < log(SWR_TAIL)) {
                tail = exp(lt) * (1 + 1e-6);
                break;
            }
        }
        lp = lnext;
    }
    dpa_pair *p = dpa_pair_mixgauss(mus, ws, k, 0, err);
    free(mus);
    free(ws);
    /* omitted mass: +inf for upper bounds only (pair.h, slack_hi) */
    if (p) p->slack_hi = fmin(1.0, (dropped + tail) * (1 + 1e-6));
    return p;
nomem:
    free(mus);
    free(ws);
    dpa_error_set(err, DPA_ENOMEM, "out of memory");
    return NULL;
}

/* Truncated Poisson subsampling of a gaussian/gdp leaf (docs/mechanisms.md §3). */
static dpa_pair *trunc_pair(const dpa_event *e, const char *path, dpa_error *err)
{
    double mu = gaussian_child_mu(e, "truncated_poisson",
                                  "a truncated batch replaces a record, which moves a sum query by twice its "
                                  "sensitivity", path, err);
    if (mu < 0) return NULL;
    if (mu == 0) return dpa_pair_gaussian(0, err);
    return dpa_pair_truncated_poisson(e->p[0], e->p[1], e->p[2], mu, err);
}

/* Tree aggregation (docs/mechanisms.md §5): a record is in one leaf of the
 * tree over `steps` steps, so in at most depth = ceil(log2(steps + 1))
 * released nodes (Kairouz et al. 2021, App. D; dp_accounting's
 * _compute_rdp_single_epoch_tree_aggregation): the Gaussian mechanism with
 * mu = sqrt(depth) sensitivity / sigma (GDP Cor 3.3), rounded up. */
static double tree_mu(const dpa_event *e)
{
    double depth = 0;
    while (ldexp(1.0, (int)depth) < e->p[1] + 1) depth++; /* steps + 1 <= 2^50: exact */
    return dpa_ld_up(sqrtl((long double)depth) * e->p[2] / e->p[0] * (1 + 4 * LDBL_EPSILON));
}

/* Kinds accounted as another kind's leaf: tree_aggregation is a gdp leaf;
 * permute_and_flip and report_noisy_max with Laplace or exponential noise
 * are pure eps-DP (McKenna & Sheldon 2020; Dwork & Roth 2014, Claim 3.9);
 * report_noisy_max with Gumbel noise is the exponential mechanism
 * (docs/mechanisms.md §4); the exponential mechanism with epsilon 0 is the
 * identity.  *tmp receives the stand-in (no children, no data). */
static const dpa_event *canonical(const dpa_event *e, dpa_event *tmp)
{
    memset(tmp, 0, sizeof *tmp);
    tmp->p[0] = e->p[0];
    switch (e->kind) {
    case DPA_EV_TREE_AGGREGATION:
        tmp->kind = DPA_EV_GDP;
        tmp->p[0] = tree_mu(e);
        return tmp;
    case DPA_EV_PERMUTE_AND_FLIP:
        tmp->kind = DPA_EV_PURE;
        return tmp;
    case DPA_EV_REPORT_NOISY_MAX:
        tmp->kind = e->p[1] == DPA_RNM_GUMBEL && e->p[0] > 0 ? DPA_EV_EXPONENTIAL_MECHANISM : DPA_EV_PURE;
        return tmp;
    case DPA_EV_EXPONENTIAL_MECHANISM:
        if (e->p[0] > 0) return e;
        tmp->kind = DPA_EV_PURE;
        return tmp;
    default:
        return e;
    }
}

/* Leaves never merged with another (one leaf per event): tables, and kinds
 * with more parameters than the key holds. */
static int unique_key(dpa_event_kind k)
{
    return is_table(k) || k == DPA_EV_SAMPLE_WITH_REPLACEMENT || k == DPA_EV_TRUNCATED_POISSON;
}

/* Components with mu above this (and at most DPA_MU_NONPRIVATE) are omitted
 * mass of the pair (slack_hi): their losses, near mu^2/2, overflow the
 * tail bounds of the discretizer. */
#define MIX_MU_HUGE 1e50

/* Gaussian mixture leaf: mu_i = c_i / sigma, weights p_i / sum p. */
static dpa_pair *mixture_pair(const dpa_event *e, dpa_error *err)
{
    size_t n = e->ndata / 2;
    double *mu = malloc(2 * n * sizeof *mu);
    if (!mu) {
        dpa_error_set(err, DPA_ENOMEM, "out of memory");
        return NULL;
    }
    long double s = 0, big = 0, huge = 0;
    for (size_t i = 0; i < n; i++) s += e->data[n + i];
    /* components with mu above DPA_MU_NONPRIVATE are non-private (as a
     * Gaussian leaf's): their weight goes to loss +inf, which dominates them */
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        double m = e->data[i] / e->p[0];
        if (!(m <= DPA_MU_NONPRIVATE)) {
            big += e->data[n + i];
            continue;
        }
        if (m > MIX_MU_HUGE) {
            /* a component whose losses (near mu^2/2 > 5e99) no grid or
             * tail bound reaches: omitted mass (slack_hi), counted at +inf
             * by upper bounds and dropped by lower bounds */
            huge += e->data[n + i];
            continue;
        }
        mu[k] = m;
        mu[n + k++] = (double)(e->data[n + i] / s);
    }
    double inf_mass = big > 0 ? fmin(1.0, (double)(big / s) * (1 + 4 * DBL_EPSILON)) : 0.0;
    dpa_pair *p = k ? dpa_pair_mixgauss(mu, mu + n, k, inf_mass, err) : dpa_pair_nonprivate(err);
    free(mu);
    if (p && k && huge > 0)
        p->slack_hi += fmin(1.0, (double)(huge / s) * (1 + 4 * DBL_EPSILON));
    return p;
}

/* The remove-direction base pair of a mechanism leaf under the
 * neighbouring relation nb (the leaf may sit under poisson or sample: the
 * relation's restrictions on a kind are checked here, for every path). */
static dpa_pair *mechanism_pair(const dpa_event *e, const char *path, dpa_neighboring nb, dpa_error *err)
{
    /* replace_special keeps the dataset's size: the special record takes part
     * in a sampling whose law depends on n, which removing the record would
     * change, so the add_remove analysis of these is not derived for it */
    if (e->kind == DPA_EV_SAMPLE_WITH_REPLACEMENT && nb != DPA_ADD_REMOVE) {
        dpa_error_set(err, DPA_EUNSUPPORTED,
                      "%s: sampling with replacement is analysed under add_remove neighboring (a record "
                      "appears Binomial(m, 1/n) times)%s",
                      path, nb == DPA_REPLACE ? "; for replace-one use \"sample\"" :
                      "; under replace_special the dataset keeps its size n, so that analysis does not apply");
        return NULL;
    }
    if (e->kind == DPA_EV_TRUNCATED_POISSON && nb != DPA_ADD_REMOVE) {
        dpa_error_set(err, DPA_EUNSUPPORTED,
                      "%s: truncated Poisson subsampling is analysed under add_remove neighboring (the record "
                      "is kept or not, n counting it)%s",
                      path, nb == DPA_REPLACE ? "; for replace-one use \"sample\"" :
                      "; under replace_special the special record still counts in n, so that analysis does not "
                      "apply");
        return NULL;
    }
    if (e->kind == DPA_EV_RANDOMIZED_RESPONSE && nb == DPA_REPLACE_SPECIAL)
        return dpa_pair_rr_special(e->p[0], e->p[1], err);
    if (is_rdp_only(e->kind)) {
        dpa_error_set(err, DPA_EUNSUPPORTED,
                      "%s: a subsampled %s step is not supported: its guarantee is a Renyi bound, not a dominating "
                      "pair, and no method bounds its subsampling tightly",
                      path, dpa_ev_kind_name(e->kind));
        return NULL;
    }
    switch (e->kind) {
    case DPA_EV_TRUNCATED_POISSON: return trunc_pair(e, path, err);
    case DPA_EV_EXPONENTIAL_MECHANISM: return dpa_pair_bounded_range(e->p[0], err);
    case DPA_EV_MIXTURE_OF_GAUSSIANS: return mixture_pair(e, err);
    case DPA_EV_SAMPLE_WITH_REPLACEMENT: return swr_pair(e, path, err);
    case DPA_EV_GAUSSIAN: return dpa_pair_gaussian(e->p[1] / e->p[0], err);
    case DPA_EV_GDP: return dpa_pair_gaussian(e->p[0], err);
    case DPA_EV_LAPLACE: return dpa_pair_laplace(e->p[0], e->p[1], err);
    case DPA_EV_DISCRETE_LAPLACE: return dpa_pair_discrete_laplace(e->p[0], e->p[1], err);
    case DPA_EV_DISCRETE_GAUSSIAN: return dpa_pair_discrete_gaussian_truncated(e->p[0], e->p[1], e->p[2], err);
    case DPA_EV_RANDOMIZED_RESPONSE: return dpa_pair_rr_k(e->p[0], e->p[1], err);
    case DPA_EV_PURE: return dpa_pair_rr(e->p[0], 0.0, err);
    case DPA_EV_APPROX: return dpa_pair_rr(e->p[0], e->p[1], err);
    case DPA_EV_NON_PRIVATE: return dpa_pair_rr(0.0, 1.0, err); /* all of A's mass at +inf */
    case DPA_EV_PRIVACY_LOSS: return dpa_pair_table(e->data, e->data + e->ndata / 2, e->ndata / 2, err);
    case DPA_EV_PRIVACY_PROFILE: return dpa_pair_profile(e->data, e->data + e->ndata / 2, e->ndata / 2, err);
    case DPA_EV_ZCDP:
        /* reached only under subsampling (unsampled zcdp leaves are kept as such) */
        dpa_error_set(err, DPA_EUNSUPPORTED,
                      "%s: a subsampled zcdp leaf is not supported: a zCDP bound is a Renyi bound, not a "
                      "dominating pair, and no method bounds its subsampling tightly (use a gaussian or gdp "
                      "leaf if the mechanism is Gaussian)",
                      path);
        return NULL;
    default: break;
    }
    dpa_error_set(err, DPA_EINVAL, "%s: not a mechanism", path);
    return NULL;
}

static dpa_status add_leaf(walk *w, dpa_pair *pair, double count, double mu, double rr_eps, double rr_delta, const double key[6],
                           const char *path, dpa_error *err)
{
    dpa_leafset *s = w->set;
    for (size_t i = 0; i < s->n; i++) {
        if (memcmp(w->keys[i], key, sizeof w->keys[i]) == 0) {
            dpa_pair_free(pair);
            s->v[i].count += count;
            if (!(s->v[i].count <= DPA_MAX_COUNT))
                return dpa_error_set(err, DPA_EINVAL, "%s: total count exceeds %g", path, DPA_MAX_COUNT);
            return DPA_OK;
        }
    }
    if (s->n == w->cap) {
        size_t nc = w->cap ? 2 * w->cap : 16;
        dpa_leaf *nv = realloc(s->v, nc * sizeof *nv);
        if (nv) s->v = nv;
        double (*nk)[6] = realloc(w->keys, nc * sizeof *nk);
        if (nk) w->keys = nk;
        if (!nv || !nk) {
            dpa_pair_free(pair);
            return dpa_error_set(err, DPA_ENOMEM, "out of memory");
        }
        w->cap = nc;
    }
    memcpy(w->keys[s->n], key, sizeof w->keys[s->n]);
    /* kind and parameters from the key (composite leaves: kind -1) */
    s->v[s->n++] = (dpa_leaf){pair, count, mu, rr_eps, rr_delta, NULL, NAN, 0, (int)key[0], {key[1], key[2]}, 0, 0, {0, 0, 0}, 0, 0, 0};
    /* a discrete Gaussian's truncation (key[5]) for the methods that sum its support (renyi) */
    if ((int)key[0] == DPA_EV_DISCRETE_GAUSSIAN) s->v[s->n - 1].rpar[2] = key[5];
    if (pair && !pair->symmetric) s->asymmetric = 1;
    return DPA_OK;
}

static dpa_status walk_event(walk *w, const dpa_event *e, double mult, const char *path, dpa_error *err);
static void leafset_free(dpa_leafset *s);

/* Walk event c into a leaf set of its own (*out, owned by the caller):
 * the inner composition of a composite or RDP-only leaf; sampled: c is
 * under subsampling.  The walk's leaf ids continue w's, and the first
 * non_private path found reaches w's set. */
static dpa_status walk_inner(walk *w, const dpa_event *c, int sampled, const char *path, dpa_leafset **out,
                             dpa_error *err)
{
    dpa_leafset *in = calloc(1, sizeof *in);
    *out = NULL;
    if (!in) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    in->all_gaussian = 1;
    in->all_rr = 1;
    walk sw = {w->spec, in, 0, NULL, w->next_id, sampled};
    dpa_status st = walk_event(&sw, c, 1.0, path, err);
    free(sw.keys);
    w->next_id = sw.next_id;
    if (st) {
        leafset_free(in);
        return st;
    }
    for (size_t i = 0; i < in->n; i++) in->total_count += in->v[i].count;
    if (in->nonprivate_path[0] && !w->set->nonprivate_path[0])
        memcpy(w->set->nonprivate_path, in->nonprivate_path, sizeof w->set->nonprivate_path);
    if (in->noop_path[0] && !w->set->noop_path[0])
        memcpy(w->set->noop_path, in->noop_path, sizeof w->set->noop_path);
    if (in->ra_path[0] && !w->set->ra_path[0]) memcpy(w->set->ra_path, in->ra_path, sizeof w->set->ra_path);
    *out = in;
    return DPA_OK;
}

/* A Renyi-only leaf (repeat_and_select, laplace_svt, gaussian_svt;
 * docs/mechanisms.md §6, §7): kept with its parameters (and, for
 * repeat_and_select, the repeated event flattened into its own set) for
 * the rdp method; the set's zcdp_path names it for the other methods'
 * refusals.  Never under subsampling: a Renyi bound of the step says
 * nothing tight about its subsampled version. */
static dpa_status add_rdp_only(walk *w, const dpa_event *e, double mult, const char *leafpath, dpa_error *err)
{
    if (w->sampled)
        return dpa_error_set(err, DPA_EUNSUPPORTED,
                             "%s: a subsampled %s step is not supported: its guarantee is a Renyi bound, not a "
                             "dominating pair, and no method bounds its subsampling tightly",
                             leafpath, dpa_ev_kind_name(e->kind));
    dpa_leafset *in = NULL;
    if (e->kind == DPA_EV_REPEAT_AND_SELECT) {
        char sub[PATH_MAX_LEN + 48]; /* leafpath plus "/event" */
        snprintf(sub, sizeof sub, "%s/event", leafpath);
        dpa_status st = walk_inner(w, e->child[0], 0, sub, &in, err);
        if (st) return st;
    }
    w->set->all_gaussian = 0;
    w->set->all_rr = 0;
    if (!w->set->zcdp_path[0]) snprintf(w->set->zcdp_path, sizeof w->set->zcdp_path, "%.150s", leafpath);
    double key[6] = {(double)e->kind, e->p[0], e->p[1], -1, 0, (double)++w->next_id};
    size_t n0 = w->set->n;
    dpa_status st = add_leaf(w, NULL, mult, NAN, NAN, NAN, key, leafpath, err);
    if (st || w->set->n == n0) {
        leafset_free(in);
        return st;
    }
    dpa_leaf *l = &w->set->v[n0];
    l->rdp_only = (int)e->kind;
    l->inner = in;
    for (int i = 0; i < 3; i++) l->rpar[i] = e->p[i];
    return DPA_OK;
}

/* Subsampling (e: poisson or sample, total rate `rate`) of a composition c
 * (compose or repeat): the mechanisms of c all see the same subsample, so
 * the step's pair is the subsampled pair of c's composed pair (docs/sampling.md
 * §3).  c is flattened into its own leaf set; a composition of Gaussian/GDP
 * leaves collapses to one Gaussian (mu = sqrt(sum k mu^2), GDP Cor 3.3),
 * anything else becomes a composite leaf.  path: the JSON path of c. */
static dpa_status add_composite(walk *w, const dpa_event *e, const dpa_event *c, double rate, double mult,
                                const char *path, dpa_error *err)
{
    /* subsampling at rate 1 keeps every record: the composition itself (for
     * sample, the symmetrization of a symmetric pair is the pair itself,
     * and every pair under replace-one is symmetric) */
    if (rate == 1) return walk_event(w, c, mult, path, err);
    dpa_leafset *in;
    dpa_status st = walk_inner(w, c, 1, path, &in, err);
    if (st) return st;
    int sample = e->kind == DPA_EV_SAMPLE;
    w->set->all_gaussian = 0;
    w->set->all_rr = 0;
    if (in->all_gaussian) {
        double s2 = 0;
        for (size_t i = 0; i < in->n; i++) s2 += in->v[i].count * in->v[i].mu * in->v[i].mu;
        double mu = sqrt(s2);
        leafset_free(in);
        dpa_pair *p = dpa_pair_poisson(dpa_pair_gaussian(mu, err), rate, err);
        if (p && sample) p = dpa_pair_symmetrize(p, err);
        if (!p) return err ? err->status : DPA_ENOMEM;
        /* the same pair as a subsampled gdp leaf with this mu */
        double key[6] = {(double)DPA_EV_GDP, mu, 0, (double)e->kind, rate, 0};
        return add_leaf(w, p, mult, NAN, NAN, NAN, key, path, err);
    }
    /* composite leaves are never merged: a unique key */
    double key[6] = {-1, (double)w->next_id++, 0, (double)e->kind, rate, 0};
    dpa_status s2 = add_leaf(w, NULL, mult, NAN, NAN, NAN, key, path, err);
    if (s2) {
        leafset_free(in);
        return s2;
    }
    dpa_leaf *l = &w->set->v[w->set->n - 1];
    l->inner = in;
    l->rate = rate;
    l->sample = sample;
    w->set->composite = 1;
    /* the remove-direction pair of a Poisson-subsampled step is asymmetric;
     * sample's symmetrized pair is symmetric if the inner one is */
    if (!sample || in->asymmetric) w->set->asymmetric = 1;
    return DPA_OK;
}

/* Random allocation of one epoch (e: steps T, selected K; docs/sampling.md
 * §4): the step's event c is flattened into its own set (its mechanisms
 * share the step, as under poisson) and becomes a composite leaf with
 * ra_steps.  T = 1 is the event itself.  K > 1: (K - r) leaves 1-of-floor(T/K)
 * and r leaves 1-of-ceil(T/K), r = T - K floor(T/K) (FS25, arXiv 2502.08202: this
 * composition dominates K-of-T; an upper bound only, so ra_upper_only). */
static dpa_status add_random_allocation(walk *w, const dpa_event *e, double mult, const char *path, dpa_error *err)
{
    char sub[PATH_MAX_LEN];
    if (w->spec->nb != DPA_ADD_REMOVE)
        return dpa_error_set(err, DPA_EUNSUPPORTED,
                             "%s/random_allocation: random allocation is analysed under add_remove neighboring "
                             "(docs/sampling.md §4); \"%s\" is not supported",
                             path, w->spec->nb == DPA_REPLACE ? "replace" : "replace_special");
    if (!w->set->ra_path[0]) snprintf(w->set->ra_path, sizeof w->set->ra_path, "%.140s/random_allocation", path);
    snprintf(sub, sizeof sub, "%s/random_allocation/event", path);
    double T = e->p[0], K = e->p[1], t0 = floor(T / K), r = T - K * t0;
    if (T == 1) return walk_event(w, e->child[0], mult, sub, err);
    /* K > 1 with every part an allocation (T >= 2K) of a Gaussian step (a
     * composition of Gaussians is one): the binned maximum of the T outputs
     * bounds it from below (dpa_pair_allocation_max) */
    double mu_low = NAN;
    if (K > 1 && t0 >= 2) {
        dpa_leafset *g;
        dpa_status st = walk_inner(w, e->child[0], 1, sub, &g, err);
        if (st) return st;
        if (g->all_gaussian && g->n > 0) {
            double s2 = 0;
            for (size_t i = 0; i < g->n; i++) s2 += g->v[i].count * g->v[i].mu * g->v[i].mu;
            mu_low = sqrt(s2);
        }
        leafset_free(g);
    }
    for (int part = 0; part < 2; part++) {
        double steps = part == 0 ? t0 : t0 + 1, cnt = part == 0 ? K - r : r;
        if (cnt == 0) continue;
        if (steps == 1) { /* 1-of-1: every step runs the event */
            dpa_status st = walk_event(w, e->child[0], mult * cnt, sub, err);
            if (st) return st;
            continue;
        }
        dpa_leafset *in;
        dpa_status st = walk_inner(w, e->child[0], 1, sub, &in, err);
        if (st) return st;
        w->set->all_gaussian = 0;
        w->set->all_rr = 0;
        double key[6] = {-1, (double)w->next_id++, 0, (double)DPA_EV_RANDOM_ALLOCATION, steps, 0};
        if ((st = add_leaf(w, NULL, mult * cnt, NAN, NAN, NAN, key, path, err))) {
            leafset_free(in);
            return st;
        }
        dpa_leaf *l = &w->set->v[w->set->n - 1];
        l->inner = in;
        l->ra_steps = steps;
        l->ra_upper_only = K == 1 ? 0 : mu_low > 0 ? 2 : 1;
        w->set->composite = 1;
        w->set->asymmetric = 1;
    }
    if (mu_low > 0) {
        dpa_pair *p = dpa_pair_allocation_max(mu_low, T, K, err);
        if (!p) return err ? err->status : DPA_ENOMEM;
        double key[6] = {-1, (double)w->next_id++, 0, (double)DPA_EV_RANDOM_ALLOCATION, T, K};
        size_t n0 = w->set->n;
        dpa_status st = add_leaf(w, p, mult, NAN, NAN, NAN, key, path, err);
        if (!st && w->set->n > n0) w->set->v[n0].ra_lower_only = 1;
        return st;
    }
    return DPA_OK;
}

/* A Poisson-subsampled Gaussian step under replace-one neighbours
 * (docs/sampling.md §5): the Gaussian's sensitivity is the replace-one one,
 * 2C for records of norm <= C, so m = C / sigma = sensitivity / (2 sigma).
 * Rate 1 is the Gaussian itself (exact).  Otherwise two leaves: one that
 * bounds the step from above only (the advanced-joint-convexity profile,
 * ra_upper_only = 2) and one from below only (the antipodal instance,
 * ra_lower_only); only the pld method combines them (ra_path names the
 * step for the other methods' refusals). */
static dpa_status add_poisson_replace(walk *w, const dpa_event *e, double mult, const char *path, dpa_error *err)
{
    const dpa_event *g = e->child[0];
    double q = e->p[0], m = g->p[1] / (2 * g->p[0]);
    char sub[PATH_MAX_LEN];
    snprintf(sub, sizeof sub, "%s/poisson/event", path);
    if (q == 1) return walk_event(w, g, mult, sub, err);
    if (!(m > 0 && m <= 1e6))
        return dpa_error_set(err, DPA_EUNSUPPORTED,
                             "%s/gaussian: sensitivity / (2 sigma) = %g is outside (0, 1e6], the domain of the "
                             "replace-one Poisson bracket (docs/sampling.md §5)", sub, m);
    if (!w->set->ra_path[0]) snprintf(w->set->ra_path, sizeof w->set->ra_path, "%.140s/poisson", path);
    w->set->all_gaussian = 0;
    w->set->all_rr = 0;
    for (int k = 0; k < 2; k++) {
        dpa_pair *p = k == 0 ? dpa_pair_poisson_replace_upper(q, m, err) : dpa_pair_poisson_replace_lower(q, m, err);
        if (!p) return err ? err->status : DPA_ENOMEM;
        double key[6] = {(double)DPA_EV_GAUSSIAN, m, q, (double)DPA_EV_POISSON, (double)DPA_REPLACE, k};
        size_t n0 = w->set->n;
        dpa_status st = add_leaf(w, p, mult, NAN, NAN, NAN, key, path, err);
        if (st) return st;
        if (w->set->n > n0) {
            w->set->v[n0].rate = q;
            if (k == 0) w->set->v[n0].ra_upper_only = 2;
            else w->set->v[n0].ra_lower_only = 1;
        }
    }
    return DPA_OK;
}

static dpa_status walk_event(walk *w, const dpa_event *e, double mult, const char *path, dpa_error *err)
{
    char sub[PATH_MAX_LEN];
    dpa_neighboring nb = w->spec->nb;
    switch (e->kind) {
    case DPA_EV_COMPOSE:
        for (size_t i = 0; i < e->nchild; i++) {
            snprintf(sub, sizeof sub, "%s/compose/%zu", path, i);
            dpa_status st = walk_event(w, e->child[i], mult, sub, err);
            if (st) return st;
        }
        return DPA_OK;
    case DPA_EV_REPEAT: {
        double m = mult * e->p[0];
        snprintf(sub, sizeof sub, "%s/repeat/event", path);
        if (!(m <= DPA_MAX_COUNT))
            return dpa_error_set(err, DPA_EINVAL, "%s/repeat/count: total count %g exceeds %g", path, m, DPA_MAX_COUNT);
        return walk_event(w, e->child[0], m, sub, err);
    }
    case DPA_EV_RANDOM_ALLOCATION:
        return add_random_allocation(w, e, mult, path, err);
    case DPA_EV_POISSON:
    case DPA_EV_SAMPLE: {
        const char *name = dpa_ev_kind_name(e->kind);
        /* rate 0 (poisson rate 0, sample m = 0): no record is ever in the
         * batch, so the subsampled event is the no-op under any relation
         * (both neighbours give the same output law): it adds no leaf, and
         * the set remembers the first such path for the note */
        if ((e->kind == DPA_EV_POISSON ? e->p[0] : e->p[1]) == 0) {
            if (!w->set->noop_path[0])
                snprintf(w->set->noop_path, sizeof w->set->noop_path, "%.140s/%s", path, name);
            return DPA_OK;
        }
        /* replace_special: a randomized_response step is the record's own
         * report, and what its subsampling means against the special record
         * is not derived here */
        if (nb == DPA_REPLACE_SPECIAL && e->child[0]->kind == DPA_EV_RANDOMIZED_RESPONSE)
            return dpa_error_set(err, DPA_EUNSUPPORTED,
                                 "%s/%s/event/randomized_response: subsampled randomized response under "
                                 "replace_special neighboring is not supported (its pair against the special "
                                 "record is derived for the unsampled step only)", path, dpa_ev_kind_name(e->kind));
        /* replace_special otherwise: the special record adds nothing, whether
         * sampled or not, so Poisson subsampling is analysed as for add_remove */
        if (e->kind == DPA_EV_POISSON && nb == DPA_REPLACE) {
            if (e->child[0]->kind == DPA_EV_GAUSSIAN && !w->sampled)
                return add_poisson_replace(w, e, mult, path, err);
            return dpa_error_set(err, DPA_EUNSUPPORTED,
                                 "%s/poisson: Poisson subsampling under replace-one neighbours is bracketed for a "
                                 "gaussian step only (docs/sampling.md §5); otherwise it is analysed under "
                                 "add_remove neighboring (LT Thm 5.1); for replace-one use \"sample\"", path);
        }
        if (e->kind == DPA_EV_SAMPLE && nb != DPA_REPLACE)
            return dpa_error_set(err, DPA_EUNSUPPORTED,
                                 "%s/sample: sampling without replacement is analysed under \"neighboring\": "
                                 "\"replace\" (GDP Thm 4.2); for add_remove use \"poisson\"", path);
        double rate = (e->kind == DPA_EV_POISSON) ? e->p[0] : e->p[1] / e->p[0];
        const dpa_event *c = e->child[0];
        snprintf(sub, sizeof sub, "%s/%s/event", path, name);
        /* nested Poisson subsampling: independent coins, rates multiply */
        while (e->kind == DPA_EV_POISSON && c->kind == DPA_EV_POISSON) {
            rate *= c->p[0];
            if (c->p[0] == 0) { /* an inner rate 0: the no-op (a product that
                                  * underflows is not, and is refused below) */
                if (!w->set->noop_path[0])
                    snprintf(w->set->noop_path, sizeof w->set->noop_path, "%.140s/poisson", path);
                return DPA_OK;
            }
            size_t len = strlen(sub);
            snprintf(sub + len, sizeof sub - len, "/poisson/event");
            c = c->child[0];
        }
        if (!is_mechanism(c->kind)) return add_composite(w, e, c, rate, mult, sub, err);
        char leafpath[PATH_MAX_LEN + 32]; /* sub plus one kind name always fits */
        snprintf(leafpath, sizeof leafpath, "%s/%s", sub, dpa_ev_kind_name(c->kind));
        dpa_event tmp;
        c = canonical(c, &tmp);
        if (is_identity(c)) return DPA_OK;
        if (c->kind == DPA_EV_NON_PRIVATE && !w->set->nonprivate_path[0])
            snprintf(w->set->nonprivate_path, sizeof w->set->nonprivate_path, "%.150s", leafpath);
        dpa_pair *base = mechanism_pair(c, leafpath, nb, err);
        if (!base) return err ? err->status : DPA_EINVAL;
        dpa_pair *p = dpa_pair_poisson(base, rate, err);
        if (p && e->kind == DPA_EV_SAMPLE) p = dpa_pair_symmetrize(p, err);
        if (!p) return err ? err->status : DPA_ENOMEM;
        double key[6] = {(double)c->kind, c->p[0], c->p[1], (double)e->kind, rate, 0};
        if (unique_key(c->kind)) key[5] = (double)++w->next_id; /* tables: one leaf per event */
        if (c->kind == DPA_EV_DISCRETE_GAUSSIAN) key[5] = c->p[2]; /* the truncation */
        w->set->all_gaussian = 0;
        w->set->all_rr = 0;
        size_t n0 = w->set->n;
        dpa_status st = add_leaf(w, p, mult, NAN, NAN, NAN, key, path, err);
        if (!st && w->set->n > n0) {
            w->set->v[n0].rate = rate;
            w->set->v[n0].sample = e->kind == DPA_EV_SAMPLE;
        }
        return st;
    }
    default: {
        char leafpath[PATH_MAX_LEN + 32];
        snprintf(leafpath, sizeof leafpath, "%s/%s", path, dpa_ev_kind_name(e->kind));
        if (is_rdp_only(e->kind)) return add_rdp_only(w, e, mult, leafpath, err);
        dpa_event tmp;
        e = canonical(e, &tmp);
        if (is_identity(e)) return DPA_OK;
        if (e->kind == DPA_EV_NON_PRIVATE && !w->set->nonprivate_path[0])
            snprintf(w->set->nonprivate_path, sizeof w->set->nonprivate_path, "%.150s", leafpath);
        if (e->kind == DPA_EV_ZCDP && !w->sampled) {
            /* kept as a zCDP guarantee: only the rdp method takes it */
            w->set->all_gaussian = 0;
            w->set->all_rr = 0;
            if (!w->set->zcdp_path[0]) snprintf(w->set->zcdp_path, sizeof w->set->zcdp_path, "%.150s", leafpath);
            double key[6] = {(double)e->kind, e->p[0], e->p[1], -1, 0, 0}; /* rho, xi */
            size_t n0 = w->set->n;
            dpa_status st = add_leaf(w, NULL, mult, NAN, NAN, NAN, key, leafpath, err);
            if (!st && w->set->n > n0) w->set->v[n0].zcdp = 1;
            return st;
        }
        if (e->kind == DPA_EV_RANDOMIZED_RESPONSE && nb == DPA_REPLACE_SPECIAL && w->sampled)
            return dpa_error_set(err, DPA_EUNSUPPORTED,
                                 "%s: subsampled randomized response under replace_special neighboring is not "
                                 "supported (its pair against the special record is derived for the unsampled "
                                 "step only)", leafpath);
        dpa_pair *p = mechanism_pair(e, leafpath, nb, err);
        if (!p) return err ? err->status : DPA_EINVAL;
        double mu = NAN, re = NAN, rd = NAN;
        if (e->kind == DPA_EV_GAUSSIAN) mu = e->p[1] / e->p[0];
        else if (e->kind == DPA_EV_GDP) mu = e->p[0];
        else w->set->all_gaussian = 0;
        /* k-ary randomized response (k > 2) is not RR_eps: dominated by it,
         * with a third atom (loss 0), so not an (eps, delta) leaf */
        int special = e->kind == DPA_EV_RANDOMIZED_RESPONSE && nb == DPA_REPLACE_SPECIAL;
        if (special) w->set->all_rr = 0; /* a two-atom table, not RR_eps */
        else if (e->kind == DPA_EV_PURE || (e->kind == DPA_EV_RANDOMIZED_RESPONSE && e->p[1] == 2)) { re = e->p[0]; rd = 0; }
        else if (e->kind == DPA_EV_APPROX) { re = e->p[0]; rd = e->p[1]; }
        else if (e->kind == DPA_EV_NON_PRIVATE) { re = 0; rd = 1; } /* (0, 1)-DP: no guarantee */
        /* a one-point profile is exactly (eps, delta)-DP: its pair is RR_{eps,delta} */
        else if (e->kind == DPA_EV_PRIVACY_PROFILE && e->ndata == 2) { re = e->data[0]; rd = e->data[1]; }
        else w->set->all_rr = 0;
        double key[6] = {(double)e->kind, e->p[0], e->p[1], -1, 0, 0};
        if (unique_key(e->kind)) key[5] = (double)++w->next_id; /* tables: one leaf per event */
        if (e->kind == DPA_EV_DISCRETE_GAUSSIAN) key[5] = e->p[2]; /* the truncation */
        /* the special pair is a privacy-loss table: no method reads it as RR */
        if (special) key[0] = (double)DPA_EV_PRIVACY_LOSS, key[3] = -2;
        if (e->kind == DPA_EV_SAMPLE_WITH_REPLACEMENT) { /* the child's kind and parameters too */
            key[3] = (double)e->child[0]->kind;
            key[4] = e->child[0]->p[0];
            key[5] = e->child[0]->p[1];
        }
        return add_leaf(w, p, mult, mu, re, rd, key, leafpath, err);
    }
    }
}

void dpa_leaves_free(dpa_leafset *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n; i++) {
        dpa_pair_free(s->v[i].pair);
        leafset_free(s->v[i].inner);
    }
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* Free a heap-allocated leaf set (inner sets of composite leaves). */
static void leafset_free(dpa_leafset *s)
{
    if (!s) return;
    dpa_leaves_free(s);
    free(s);
}

dpa_status dpa_leaves_build(const dpa_spec *spec, dpa_leafset *out, dpa_error *err)
{
    memset(out, 0, sizeof *out);
    out->all_gaussian = 1;
    out->all_rr = 1;
    walk w = {spec, out, 0, NULL, 0, 0};
    dpa_status st = walk_event(&w, spec->root, 1.0, "", err);
    free(w.keys);
    if (st) {
        dpa_leaves_free(out);
        return st;
    }
    for (size_t i = 0; i < out->n; i++) out->total_count += out->v[i].count;
    return DPA_OK;
}
