/* dpacct — the JSON writer of specs: canonical compact JSON, every
 * parameter written, labels and dpsgd runs given back as read
 * (docs/spec.md).  A small string builder; no jansson tree.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "event_json.h"

typedef struct sbuf {
    char *buf;
    size_t len, cap;
    int oom;
} sbuf;

static void sb_put(sbuf *b, const char *s)
{
    size_t n = strlen(s);
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 128;
        char *nb;
        while (cap < b->len + n + 1)
            cap *= 2;
        nb = realloc(b->buf, cap);
        if (!nb) {
            b->oom = 1;
            return;
        }
        b->buf = nb;
        b->cap = cap;
    }
    memcpy(b->buf + b->len, s, n + 1);
    b->len += n;
}

/* "name":V with V in %.17g (integers print as integers: no exponent below 1e17). */
static void sb_param(sbuf *b, const char *name, double v, int first)
{
    char num[40];
    snprintf(num, sizeof num, "%.17g", v);
    sb_put(b, first ? "\"" : ",\"");
    sb_put(b, name);
    sb_put(b, "\":");
    sb_put(b, num);
}

static void write_event(sbuf *b, const dpa_event *e);

/* "kind":BODY, without the enclosing braces. */
static void write_kind(sbuf *b, const dpa_event *e)
{
    if (e->dpsgd) {
        const dpa_ev_dpsgd *d = e->dpsgd;
        sb_put(b, "\"dpsgd\":{");
        sb_param(b, "dataset_size", d->n, 1);
        sb_param(b, "batch_size", d->b, 0);
        if (d->epochs > 0)
            sb_param(b, "epochs", d->epochs, 0);
        else
            sb_param(b, "steps", d->steps, 0);
        sb_param(b, "noise", d->noise, 0);
        sb_put(b, ",\"sampling\":\"");
        sb_put(b, DPA_EVJ_DPSGD_SAMPLING[d->sampling]);
        sb_put(b, "\"}");
        return;
    }
    sb_put(b, "\"");
    sb_put(b, dpa_ev_kind_name(e->kind));
    sb_put(b, "\":");
    if (e->kind == DPA_EV_COMPOSE) {
        sb_put(b, "[");
        for (size_t i = 0; i < e->nchild; i++) {
            if (i)
                sb_put(b, ",");
            write_event(b, e->child[i]);
        }
        sb_put(b, "]");
        return;
    }
    sb_put(b, "{");
    if (e->kind == DPA_EV_PRIVACY_LOSS || e->kind == DPA_EV_PRIVACY_PROFILE || e->kind == DPA_EV_MIXTURE_OF_GAUSSIANS) {
        size_t n = e->ndata / 2;
        const table_kind *tk = dpa_evj_table_of(e->kind);
        if (tk->scalar) {
            sb_param(b, tk->scalar, e->p[0], 1);
            sb_put(b, ",");
        }
        for (int j = 0; j < 2; j++) {
            sb_put(b, j ? ",\"" : "\"");
            sb_put(b, tk->key[j]);
            sb_put(b, "\":[");
            for (size_t i = 0; i < n; i++) {
                char num[40];
                snprintf(num, sizeof num, "%s%.17g", i ? "," : "", e->data[j * n + i]);
                sb_put(b, num);
            }
            sb_put(b, "]");
        }
    }
    for (int s = 0; s < dpa_ev_num_params(e->kind) && e->kind != DPA_EV_MIXTURE_OF_GAUSSIANS; s++) {
        /* binary randomized response is written as before k existed */
        if (e->kind == DPA_EV_RANDOMIZED_RESPONSE && s == 1 && e->p[1] == 2)
            continue;
        if (e->kind == DPA_EV_ZCDP && s == 1 && e->p[1] == 0)
            continue; /* xi 0 (rho-zCDP): written as before xi existed */
        if (e->kind == DPA_EV_REPEAT_AND_SELECT && s == 1 && e->p[1] == DPA_REPSEL_POISSON)
            continue; /* Poisson: shape omitted */
        if (e->kind == DPA_EV_DISCRETE_GAUSSIAN && s == 2 && e->p[2] == DPA_DG_UNTRUNCATED)
            continue; /* untruncated: written as before truncation existed */
        if (e->kind == DPA_EV_REPORT_NOISY_MAX && s == 1) {
            sb_put(b, ",\"noise\":\"");
            sb_put(b, DPA_EVJ_RNM_NOISE[(int)e->p[1]]);
            sb_put(b, "\"");
            continue;
        }
        sb_param(b, dpa_ev_param_name(e->kind, s), e->p[s], s == 0);
    }
    if (e->nchild == 1) {
        sb_put(b, ",\"event\":");
        write_event(b, e->child[0]);
    }
    sb_put(b, "}");
}

/* "name":"...", (the event's label, JSON-escaped) before its kind */
static void write_name(sbuf *b, const dpa_event *e)
{
    if (!e->name)
        return;
    json_t *s = json_string(e->name);
    char *t = s ? json_dumps(s, JSON_ENCODE_ANY) : NULL;
    json_decref(s);
    if (!t) {
        b->oom = 1;
        return;
    }
    sb_put(b, "\"name\":");
    sb_put(b, t);
    sb_put(b, ",");
    free(t);
}

static void write_event(sbuf *b, const dpa_event *e)
{
    sb_put(b, "{");
    write_name(b, e);
    write_kind(b, e);
    sb_put(b, "}");
}

char *dpa_spec_to_json(const dpa_spec *s)
{
    sbuf b = {NULL, 0, 0, 0};
    if (!s || !s->root)
        return NULL;
    sb_put(&b, "{");
    write_name(&b, s->root);
    write_kind(&b, s->root);
    sb_put(&b, s->nb == DPA_REPLACE_SPECIAL ? ",\"neighboring\":\"replace_special\"}" :
               s->nb == DPA_REPLACE ? ",\"neighboring\":\"replace\"}"
                                    : ",\"neighboring\":\"add_remove\"}");
    if (b.oom) {
        free(b.buf);
        return NULL;
    }
    return b.buf;
}
