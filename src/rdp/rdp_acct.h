/* The RDP accountant's state (struct dpa_rdp of rdp.h) and its terms, shared
 * by its construction (rdp_acct.c), its evaluation (rdp_eval.c: each term's
 * D_alpha and the cache) and its queries (rdp_query.c).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef DPA_RDP_ACCT_H
#define DPA_RDP_ACCT_H

#include <stddef.h>
#include "dpacct/status.h"
#include "mech/pair.h"
#include "rdp/rdp.h"

/* The kinds of term of a composition (rdp_acct.c adds them, rdp_eval.c
 * bounds their D_alpha). */
typedef enum {
    DPA_RDP_T_PAIR,
    DPA_RDP_T_ZCDP,
    DPA_RDP_T_COMPOSITE,
    DPA_RDP_T_SVT,
    DPA_RDP_T_REPSEL,
    DPA_RDP_T_DG   /* a Poisson-subsampled discrete Gaussian (fpar: sigma, sensitivity, rate) */
} dpa_rdp_term_kind;

struct dpa_rdp_comp;

typedef struct dpa_rdp_term {
    dpa_rdp_term_kind kind;
    double count;
    dpa_pair *pair;            /* DPA_RDP_T_PAIR, owned */
    double rho, xi;            /* DPA_RDP_T_ZCDP; DPA_RDP_T_PAIR: rho > 0 caps the pair's RDP at rho alpha */
    struct dpa_rdp_comp *comp; /* DPA_RDP_T_COMPOSITE, owned */
    double d2[2];              /* DPA_RDP_T_PAIR: D_2 per direction, computed when added (NAN: not known) */
    int fn;                    /* DPA_RDP_T_SVT: DPA_EV_LAPLACE_SVT or DPA_EV_GAUSSIAN_SVT */
    double fpar[4];            /* DPA_RDP_T_SVT: scale or sigma, k, c; DPA_RDP_T_DG: sigma, s, q, T (-1: none;
                                * fn = 1: conditioned on [s - T, T], rdp.h);
                                * DPA_RDP_T_REPSEL: mean, shape,
                                * log(1/gamma) (rounded up), the constant term (NAN until computed) */
    struct dpa_rdp *sub;       /* DPA_RDP_T_REPSEL, owned: the repeated event's composition */
} dpa_rdp_term;

typedef struct dpa_rdp_comp {
    double rate;
    int sample;
    dpa_rdp_term *t;
    size_t n, cap;
    double *logm; /* cached upper bounds on log M_k, k = 0.. */
    size_t nlogm;
} dpa_rdp_comp;

/* one cached value of the composition's RDP (d = -1: an empty slot) */
typedef struct {
    double alpha, val;
    int d;
} dpa_rdp_cache_ent;

struct dpa_rdp {
    double *orders;
    size_t n;
    dpa_rdp_comp top;         /* the terms of the composition (rate, sample unused) */
    int asym;                 /* some term differs between the directions */
    int irregular;            /* some composite term: the grid is scanned in full */
    dpa_rdp_cache_ent *cache; /* (alpha, direction) -> RDP, open addressing */
    size_t ccap, ccount;
};

/* ---- rdp_acct.c ---- */

/* Forget every cached value (the terms changed). */
void dpa_rdp_invalidate(dpa_rdp *a);

/* ---- rdp_eval.c ---- */

/* The composition's RDP at alpha in curve d (0, or 1 for the add direction
 * of an asymmetric composition), computed once and cached. */
dpa_status dpa_rdp_at(dpa_rdp *a, double alpha, int d, double *out, dpa_error *err);

#endif
