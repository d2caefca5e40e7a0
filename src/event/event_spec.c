/* dpacct — specs: an event tree with its neighbouring relation; a spec
 * refuses a dpsgd run whose sampling needs the other relation.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdio.h>
#include <stdlib.h>
#include "event_internal.h"

/* The first dpsgd run in e whose sampling needs the other neighbouring
 * relation than nb: its path ("/compose/1/dpsgd") in path[n], 1; else 0. */
static int dpsgd_mismatch(const dpa_event *e, dpa_neighboring nb, char *path, size_t n, size_t len, int *sampling)
{
    if (e->dpsgd) {
        if ((e->dpsgd->sampling == DPA_DPSGD_WITHOUT_REPLACEMENT) != (nb == DPA_REPLACE)) {
            snprintf(path + len, n - len, "/dpsgd");
            *sampling = e->dpsgd->sampling;
            return 1;
        }
        return 0; /* its subtree is the expansion */
    }
    for (size_t i = 0; i < e->nchild; i++) {
        size_t l = len;
        if (e->kind == DPA_EV_COMPOSE)
            l += (size_t)snprintf(path + len, n - len, "/compose/%zu", i);
        else
            l += (size_t)snprintf(path + len, n - len, "/%s/event", dpa_ev_kind_name(e->kind));
        if (l >= n)
            l = n - 1;
        if (dpsgd_mismatch(e->child[i], nb, path, n, l, sampling))
            return 1;
    }
    return 0;
}

/* ---- specs ---- */

dpa_spec *dpa_spec_new(dpa_event *root, dpa_neighboring nb, dpa_error *err)
{
    dpa_spec *s;
    if (!root) {
        dpa_error_set(err, DPA_EINVAL, "spec: root event is NULL");
        return NULL;
    }
    if (nb != DPA_ADD_REMOVE && nb != DPA_REPLACE && nb != DPA_REPLACE_SPECIAL) {
        dpa_event_free(root);
        dpa_error_set(err, DPA_EINVAL,
                      "spec: neighboring must be DPA_ADD_REMOVE, DPA_REPLACE or DPA_REPLACE_SPECIAL, got %d", (int)nb);
        return NULL;
    }
    {
        static const char *const names[] = {"poisson", "without_replacement", "random_allocation"};
        char path[512] = "";
        int sampling = 0;
        if (dpsgd_mismatch(root, nb, path, sizeof path, 0, &sampling)) {
            int wor = sampling == DPA_DPSGD_WITHOUT_REPLACEMENT;
            dpa_event_free(root);
            dpa_error_set(err, DPA_EINVAL,
                          "%s: a dpsgd run with sampling \"%s\" is accounted under %s neighbouring, but the spec "
                          "is \"%s\" (a spec has one neighbouring relation)",
                          path, names[sampling >= 0 && sampling <= 2 ? sampling : 0], wor ? "replace" : "add_remove",
                          nb == DPA_REPLACE ? "replace" : nb == DPA_REPLACE_SPECIAL ? "replace_special" : "add_remove");
            return NULL;
        }
    }
    s = malloc(sizeof *s);
    if (!s) {
        dpa_event_free(root);
        dpa_error_set(err, DPA_ENOMEM, "spec: out of memory");
        return NULL;
    }
    s->root = root;
    s->nb = nb;
    return s;
}

dpa_spec *dpa_spec_copy(const dpa_spec *s)
{
    dpa_spec *c;
    if (!s)
        return NULL;
    c = malloc(sizeof *c);
    if (!c)
        return NULL;
    c->nb = s->nb;
    c->root = dpa_event_copy(s->root);
    if (!c->root) {
        free(c);
        return NULL;
    }
    return c;
}

void dpa_spec_free(dpa_spec *s)
{
    if (!s)
        return;
    dpa_event_free(s->root);
    free(s);
}

const dpa_event *dpa_spec_root(const dpa_spec *s)
{
    return s ? s->root : NULL;
}

dpa_neighboring dpa_spec_neighboring(const dpa_spec *s)
{
    return s ? s->nb : DPA_ADD_REMOVE;
}
