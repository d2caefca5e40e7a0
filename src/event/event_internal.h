/* Internal layout of events and specs, shared by the library's modules.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef DPA_EVENT_INTERNAL_H
#define DPA_EVENT_INTERNAL_H

#include "dpacct/event.h"

/* Parameter slots in dpa_event.p, by kind:
 *   GAUSSIAN            p[0] sigma,   p[1] sensitivity
 *   LAPLACE             p[0] scale,   p[1] sensitivity
 *   DISCRETE_LAPLACE    p[0] scale,   p[1] sensitivity (integer)
 *   DISCRETE_GAUSSIAN   p[0] sigma,   p[1] sensitivity (integer), p[2] truncation
 *                       (integer; DPA_DG_UNTRUNCATED: none)
 *   RANDOMIZED_RESPONSE p[0] epsilon
 *   PURE                p[0] epsilon
 *   APPROX              p[0] epsilon, p[1] delta
 *   ZCDP                p[0] rho,     p[1] xi (0: rho-zCDP)
 *   GDP                 p[0] mu
 *   REPEAT              p[0] count (integer)
 *   POISSON             p[0] rate
 *   SAMPLE              p[0] n,       p[1] m (integers)
 *   RANDOMIZED_RESPONSE also p[1] k (buckets, integer >= 2)
 *   PRIVACY_LOSS        data[0 .. n-1] losses (ascending, distinct),
 *                       data[n .. 2n-1] their masses under P, n = ndata / 2
 *   MIXTURE_OF_GAUSSIANS p[0] sigma; data[0 .. n-1] sensitivities (ascending,
 *                       distinct), data[n .. 2n-1] their probabilities
 *   SAMPLE_WITH_REPLACEMENT p[0] n, p[1] m (integers), one child
 *   PRIVACY_PROFILE     data[0 .. n-1] epsilons (ascending, distinct),
 *                       data[n .. 2n-1] their deltas, n = ndata / 2
 *   TRUNCATED_POISSON   p[0] rate, p[1] max_batch, p[2] n (integers), one child
 *   EXPONENTIAL_MECHANISM, PERMUTE_AND_FLIP  p[0] epsilon
 *   REPORT_NOISY_MAX    p[0] epsilon, p[1] noise (a dpa_rnm_noise value)
 *   TREE_AGGREGATION    p[0] sigma, p[1] steps (integer), p[2] sensitivity
 *   REPEAT_AND_SELECT   p[0] mean, p[1] shape (DPA_REPSEL_POISSON: Poisson), one child
 *   LAPLACE_SVT         p[0] scale, p[1] k, p[2] c (integers)
 *   GAUSSIAN_SVT        p[0] sigma, p[1] k, p[2] c (integers)
 *   RANDOM_ALLOCATION   p[0] steps, p[1] selected (integers), one child
 */

/* Most numeric parameter slots of a kind (truncated_poisson has three). */
#define DPA_EV_MAX_PARAMS 4

struct dpa_event {
    dpa_event_kind kind;
    double p[DPA_EV_MAX_PARAMS];
    size_t nchild;
    dpa_event **child;
    double *data;   /* owned; privacy_loss and privacy_profile only */
    size_t ndata;
    char *name;     /* owned label ("name" in JSON) or NULL (dpa_event_set_name) */
    struct dpa_ev_dpsgd *dpsgd; /* owned; set on the root (a repeat) of an
                                 * expanded dpsgd leaf only, else NULL */
};

/* The DP-SGD run an expanded dpsgd leaf stands for (dpa_event_dpsgd): the
 * tree below it is built from these values and never changed, so the
 * writer can give the leaf back. */
typedef struct dpa_ev_dpsgd {
    double n, b;          /* dataset_size, batch_size */
    double epochs, steps; /* exactly one was given (the other 0) */
    double noise;
    int sampling;         /* dpa_dpsgd_sampling */
} dpa_ev_dpsgd;

/* The expanded tree of d (a new repeat event carrying a copy of d); d must
 * be valid except possibly for its step count (checked here; event_dpsgd.c). */
dpa_event *dpa_ev_dpsgd_expand(const dpa_ev_dpsgd *d, dpa_error *err);

/* The field of a bandmf run a problem is about (event_bandmf.c); the
 * JSON reader turns it into the path of the offending key. */
typedef enum dpa_bandmf_field {
    DPA_BANDMF_COEFFICIENTS, DPA_BANDMF_NOISE, DPA_BANDMF_ITERATIONS, DPA_BANDMF_RATE, DPA_BANDMF_EPOCHS,
    DPA_BANDMF_SEPARATION
} dpa_bandmf_field;
/* 0 if the run is valid (dpa_event_bandmf's domain); else 1 with the field,
 * the coefficient's index (SIZE_MAX: the whole array or another field) and
 * the problem text ("must be ..., got V"). */
int dpa_ev_bandmf_problem(const double *c, size_t bands, double noise, double iterations, double rate,
                          double participations, double separation, dpa_bandmf_field *f, size_t *index,
                          char *problem, size_t n);
/* The key of field f ("coefficients", "noise_multiplier", ...). */
const char *dpa_ev_bandmf_field_name(dpa_bandmf_field f);

struct dpa_spec {
    dpa_event *root;
    dpa_neighboring nb;
};

/* ---- the kind table and shared validation (event_kinds.c), used by the
 * constructors, the JSON reader and writer (event_json_*.c) and the
 * accountants ---- */
/* JSON name of a kind ("gaussian", ..., "sample"). */
const char *dpa_ev_kind_name(dpa_event_kind k);
/* 1 (and a message "must ...") if name is not a valid label (event.h). */
int dpa_ev_name_problem(const char *name, char *problem, size_t n);
/* 1 and *k set if name is a kind's JSON name, else 0. */
int dpa_ev_kind_from_name(const char *name, dpa_event_kind *k);
/* Number of parameter slots of a kind, and its arity (0 leaf, 1 one child,
 * -1 one or more children). */
int dpa_ev_num_params(dpa_event_kind k);
int dpa_ev_arity(dpa_event_kind k);
/* Name of parameter slot `slot`; whether it is optional (default in *def). */
const char *dpa_ev_param_name(dpa_event_kind k, int slot);
int dpa_ev_param_default(dpa_event_kind k, int slot, double *def);
/* Domain of a slot (sibling: the other slots, for m <= n). */
void dpa_ev_param_domain(dpa_event_kind k, int slot, const double *sibling,
                         dpa_param_info *dom);
/* 0 if v is in dom; else 1 with the problem text ("must be ..., got ..."). */
int dpa_ev_check_value(const dpa_param_info *dom, double v, char *problem, size_t n);
/* Check all slots of a kind; on failure the bad slot and the problem. */
int dpa_ev_check_params(dpa_event_kind k, const double *p, int *bad_slot,
                        char *problem, size_t n);
/* ---- construction (event_make.c) ---- */
/* Build a validated event (takes ownership of the children in every case). */
dpa_event *dpa_ev_make(dpa_event_kind k, const double *p,
                       dpa_event *const *children, size_t nchild, dpa_error *err);

#endif
