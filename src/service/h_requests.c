/* The budget service's request handlers: a decision on a query (through the
 * group commit, commit_queue.c), with its idempotency key and reservation
 * flag, and the settlement of a reservation (commit or release).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <errno.h>
#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "service_internal.h"

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The Idempotency-Key header: NULL if absent; 0 (400 made) if it is not 1..200
 * printable ASCII characters. */
static int idempotency_key(svc_req *r, const char **key)
{
    const char *k = svc_header(r, "Idempotency-Key");
    size_t i, n;
    *key = k;
    if (!k)
        return 1;
    n = strlen(k);
    for (i = 0; i < n && k[i] >= 0x20 && k[i] < 0x7f; i++)
        ;
    if (n < 1 || n > 200 || i < n) {
        svc_error(r, 400, "bad_input", "Idempotency-Key: 1 to 200 printable ASCII characters");
        return 0;
    }
    return 1;
}

static json_t *decision_json(const dpa_ledger_decision *d)
{
    json_t *rem = d->remaining ? json_loads(d->remaining, 0, NULL) : NULL;
    return json_pack("{s:I,s:s,s:s,s:s,s:o,s:b,s:I}", "request_id", (json_int_t)d->request_id, "decision",
                     d->accepted ? "accepted" : "rejected", "status", d->status, "reason", d->reason,
                     "remaining", rem ? rem : json_null(), "replayed", d->replayed, "generation",
                     (json_int_t)d->generation);
}

void svc_h_request(svc_req *r, const char *unit)
{
    static const char *const keys[] = {"spec", "reserve", NULL};
    dpa_ledger *l = svc_pool_get(&r->s->pool);
    json_t *body = NULL, *spec, *reserve;
    const char *key;
    char *spec_text = NULL;
    svc_job job;
    double t0;
    int outcome;

    if (!svc_auth(r, l, DPA_LEDGER_ROLE_REQUEST) || !svc_unit_visible(r, l, unit)) {
        svc_pool_put(&r->s->pool, l);
        return;
    }
    svc_pool_put(&r->s->pool, l); /* not held while the decision waits for its batch */
    if (!idempotency_key(r, &key) || !(body = svc_body_object(r)) || !svc_known_keys(r, body, keys))
        goto bad;
    spec = json_object_get(body, "spec");
    reserve = json_object_get(body, "reserve");
    if (!json_is_object(spec)) {
        svc_error(r, 400, "bad_input", "/spec: %s", spec ? "must be an object (an event spec, docs/spec.md)"
                                                          : "required (an event spec, docs/spec.md)");
        goto bad;
    }
    if (reserve && !json_is_boolean(reserve)) {
        svc_error(r, 400, "bad_input", "/reserve: must be true or false");
        goto bad;
    }
    spec_text = json_dumps(spec, JSON_COMPACT);
    if (!spec_text) {
        svc_error(r, 500, "internal", "out of memory");
        goto bad;
    }
    memset(&job, 0, sizeof job);
    job.item.unit = unit;
    job.item.spec_json = spec_text;
    job.item.opts.actor = r->who.token_id;
    job.item.opts.idempotency_key = key;
    job.item.opts.reserve = json_is_true(reserve);
    t0 = now_seconds();
    svc_queue_decide(&r->s->queue, &job);
    if (job.item.st == DPA_OK) {
        outcome = job.item.out.accepted ? SVC_OUT_ACCEPTED : SVC_OUT_REJECTED;
        svc_json(r, job.item.out.accepted ? 200 : 409, decision_json(&job.item.out));
        dpa_ledger_decision_clear(&job.item.out);
    } else {
        outcome = job.item.st == DPA_EINVAL || job.item.st == DPA_EUNSUPPORTED ? SVC_OUT_BAD_INPUT : SVC_OUT_ERROR;
        svc_ledger_error(r, &job.item.err);
    }
    svc_metrics_decision(&r->s->metrics, outcome, now_seconds() - t0);
    free(spec_text);
    json_decref(body);
    return;
bad:
    svc_metrics_decision(&r->s->metrics, SVC_OUT_BAD_INPUT, 0);
    json_decref(body);
}

void svc_h_settle(svc_req *r, dpa_ledger *l, const char *unit, const char *id, const char *op)
{
    dpa_error err = {0};
    long long rid;
    char *end;
    json_t *u;
    if (!svc_auth(r, l, DPA_LEDGER_ROLE_REQUEST) || !svc_unit_visible(r, l, unit))
        return;
    errno = 0;
    rid = strtoll(id, &end, 10);
    if (end == id || *end || errno || rid < 1) {
        svc_error(r, 400, "bad_input", "request id: a positive integer, got \"%s\"", id);
        return;
    }
    if (dpa_ledger_reservation(l, unit, rid, op, r->who.token_id, &err) != DPA_OK) {
        if (err.status == DPA_EINVAL && !strstr(err.message, "unknown unit"))
            svc_error(r, 409, "conflict", "%s", err.message);
        else
            svc_ledger_error(r, &err);
        return;
    }
    if (!strcmp(op, "commit")) {
        svc_json(r, 200, json_pack("{s:I,s:s}", "request_id", (json_int_t)rid, "status", "charged"));
        return;
    }
    u = svc_unit_status(l, unit, &err);
    if (!u) {
        svc_ledger_error(r, &err);
        return;
    }
    svc_json(r, 200, json_pack("{s:I,s:s,s:O}", "request_id", (json_int_t)rid, "status", "released", "remaining",
                               json_object_get(u, "remaining")));
    json_decref(u);
}
