/* dpacct — an event tree as an object: deep copy, free, labels, inspection.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdlib.h>
#include <string.h>
#include "event_internal.h"

/* ---- copy / free ---- */

static char *dup_name(const char *s)
{
    size_t n = strlen(s) + 1;
    char *c = malloc(n);
    if (c)
        memcpy(c, s, n);
    return c;
}

dpa_event *dpa_event_copy(const dpa_event *e)
{
    dpa_event *c;
    if (!e)
        return NULL;
    c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->kind = e->kind;
    memcpy(c->p, e->p, sizeof c->p);
    if (e->name && !(c->name = dup_name(e->name))) {
        free(c);
        return NULL;
    }
    if (e->dpsgd) {
        if (!(c->dpsgd = malloc(sizeof *c->dpsgd))) {
            free(c->name);
            free(c);
            return NULL;
        }
        *c->dpsgd = *e->dpsgd;
    }
    if (e->ndata) {
        if (!(c->data = malloc(e->ndata * sizeof *c->data))) {
            free(c->name);
            free(c->dpsgd);
            free(c);
            return NULL;
        }
        memcpy(c->data, e->data, e->ndata * sizeof *c->data);
        c->ndata = e->ndata;
    }
    if (e->nchild > 0) {
        c->child = calloc(e->nchild, sizeof *c->child);
        if (!c->child) {
            free(c->data);
            free(c->name);
            free(c->dpsgd);
            free(c);
            return NULL;
        }
    }
    /* nchild counts the copies made so far: a partial copy frees cleanly. */
    for (size_t i = 0; i < e->nchild; i++, c->nchild++) {
        c->child[i] = dpa_event_copy(e->child[i]);
        if (!c->child[i]) {
            dpa_event_free(c);
            return NULL;
        }
    }
    return c;
}

void dpa_event_free(dpa_event *e)
{
    if (!e)
        return;
    for (size_t i = 0; i < e->nchild; i++)
        dpa_event_free(e->child[i]);
    free(e->child);
    free(e->data);
    free(e->name);
    free(e->dpsgd);
    free(e);
}

/* ---- labels ---- */

const char *dpa_event_get_name(const dpa_event *e)
{
    return e ? e->name : NULL;
}

dpa_status dpa_event_set_name(dpa_event *e, const char *name, dpa_error *err)
{
    char problem[128];
    if (!e)
        return dpa_error_set(err, DPA_EINVAL, "event name: NULL event");
    if (name && dpa_ev_name_problem(name, problem, sizeof problem))
        return dpa_error_set(err, DPA_EINVAL, "event name: %s", problem);
    char *c = NULL;
    if (name && !(c = dup_name(name)))
        return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    free(e->name);
    e->name = c;
    return DPA_OK;
}

/* ---- inspection ---- */

dpa_event_kind dpa_event_get_kind(const dpa_event *e)
{
    return e ? e->kind : DPA_EV_GAUSSIAN; /* NULL: documented as meaningless */
}

size_t dpa_event_num_children(const dpa_event *e)
{
    return e ? e->nchild : 0;
}

const dpa_event *dpa_event_child(const dpa_event *e, size_t i)
{
    return (e && i < e->nchild) ? e->child[i] : NULL;
}

dpa_status dpa_event_get_param(const dpa_event *e, const char *name, double *value)
{
    if (!e || !name || !value || !dpa_ev_kind_name(e->kind))
        return DPA_EINVAL;
    for (int s = 0; s < dpa_ev_num_params(e->kind); s++) {
        if (strcmp(dpa_ev_param_name(e->kind, s), name) == 0) {
            *value = e->p[s];
            return DPA_OK;
        }
    }
    return DPA_EINVAL;
}
