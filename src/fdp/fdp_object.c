/* The tradeoff object: the options every construction takes (defaults,
 * domain check), allocation, adopting a vertex list, copy and free.  The
 * lowest file of src/fdp: every other file builds and frees curves here.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdlib.h>
#include <string.h>
#include "fdp/fdp.h"

void dpa_tf_opts_init(dpa_tf_opts *o)
{
    if (!o) return;
    o->rel_tol = DPA_TF_DEFAULT_REL_TOL;
    o->abs_tol = DPA_TF_DEFAULT_ABS_TOL;
    o->max_vertices = DPA_TF_DEFAULT_MAX_VERTICES;
    o->tail = DPA_TF_DEFAULT_TAIL;
}

void dpa_fdp_opts_resolve(const dpa_tf_opts *in, dpa_tf_opts *out)
{
    if (in) *out = *in;
    else dpa_tf_opts_init(out);
}

dpa_status dpa_fdp_opts_check(const dpa_tf_opts *o, dpa_error *err)
{
    if (!o) return DPA_OK;
    if (!(o->rel_tol > 0) || !(o->rel_tol <= 1))
        return dpa_error_set(err, DPA_EINVAL, "tradeoff options: rel_tol must be in (0, 1], got %g",
                             o->rel_tol);
    if (!(o->abs_tol >= 0) || !(o->abs_tol <= 1))
        return dpa_error_set(err, DPA_EINVAL, "tradeoff options: abs_tol must be in [0, 1], got %g",
                             o->abs_tol);
    if (o->max_vertices < 8 || o->max_vertices > ((size_t)1 << 24))
        return dpa_error_set(err, DPA_EINVAL,
                             "tradeoff options: max_vertices must be in [8, 2^24], got %zu",
                             o->max_vertices);
    if (!(o->tail > 0) || !(o->tail <= 1e-3))
        return dpa_error_set(err, DPA_EINVAL, "tradeoff options: tail must be in (0, 1e-3], got %g",
                             o->tail);
    return DPA_OK;
}

/* ---------- life cycle ---------- */

dpa_tf *dpa_fdp_alloc(tf_kind kind, size_t n, dpa_error *err)
{
    dpa_tf *f = calloc(1, sizeof *f);
    if (!f) {
        dpa_error_set(err, DPA_ENOMEM, "tradeoff: out of memory");
        return NULL;
    }
    f->kind = kind;
    f->mu = f->eps = NAN;
    f->d = 0.0;
    if (n) {
        f->v = malloc(n * sizeof *f->v);
        if (!f->v) {
            free(f);
            dpa_error_set(err, DPA_ENOMEM, "tradeoff: out of memory (%zu vertices)", n);
            return NULL;
        }
        f->n = n;
    }
    return f;
}

dpa_tf *dpa_fdp_pl_take(tf_pt *v, size_t n, dpa_error *err)
{
    dpa_tf *f = dpa_fdp_alloc(TF_PL, 0, err);
    if (!f) {
        free(v);
        return NULL;
    }
    f->v = v;
    f->n = n;
    return f;
}

dpa_tf *dpa_tf_copy(const dpa_tf *f, dpa_error *err)
{
    if (!f) {
        dpa_error_set(err, DPA_EINVAL, "tradeoff copy: NULL curve");
        return NULL;
    }
    dpa_tf *g = dpa_fdp_alloc(f->kind, f->kind == TF_PL ? f->n : 0, err);
    if (!g) return NULL;
    g->mu = f->mu;
    g->eps = f->eps;
    g->d = f->d;
    if (f->kind == TF_PL) memcpy(g->v, f->v, f->n * sizeof *f->v);
    return g;
}

void dpa_tf_free(dpa_tf *f)
{
    if (!f) return;
    free(f->v);
    free(f);
}
