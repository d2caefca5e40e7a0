/* The budget service's administrative handlers: freeze, unfreeze, archive
 * and top up a unit (each recorded by the ledger with the token's id as the
 * actor and the reason given).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdlib.h>
#include <string.h>
#include "service_internal.h"

/* The optional "reason" member: NULL if absent; 0 (400 made) if not a string. */
static int reason_member(svc_req *r, json_t *body, const char **reason)
{
    json_t *v = json_object_get(body, "reason");
    *reason = NULL;
    if (!v)
        return 1;
    if (!json_is_string(v)) {
        svc_error(r, 400, "bad_input", "/reason: must be a string");
        return 0;
    }
    *reason = json_string_value(v);
    return 1;
}

/* A refused change: a transition the unit's lifecycle does not allow
 * (archived, frozen) is a conflict (409); other bad input 400. */
static void refused(svc_req *r, const dpa_error *e)
{
    if (e->status == DPA_EINVAL && (strstr(e->message, "archived") || strstr(e->message, "frozen") ||
                                    strstr(e->message, "not allowed")))
        svc_error(r, 409, "conflict", "%s", e->message);
    else
        svc_ledger_error(r, e);
}

static void answer_status(svc_req *r, dpa_ledger *l, const char *unit)
{
    dpa_error err = {0};
    json_t *u = svc_unit_status(l, unit, &err);
    if (u)
        svc_json(r, 200, u);
    else
        svc_ledger_error(r, &err);
}

void svc_h_lifecycle(svc_req *r, dpa_ledger *l, const char *unit, const char *op)
{
    static const char *const keys[] = {"reason", NULL};
    dpa_error err = {0};
    const char *reason;
    json_t *body;
    if (!svc_auth(r, l, DPA_LEDGER_ROLE_ADMIN) || !svc_unit_visible(r, l, unit) || !(body = svc_body_object(r)))
        return;
    if (svc_known_keys(r, body, keys) && reason_member(r, body, &reason)) {
        if (dpa_ledger_unit_lifecycle(l, unit, op, r->who.token_id, reason, &err) != DPA_OK)
            refused(r, &err);
        else
            answer_status(r, l, unit);
    }
    json_decref(body);
}

void svc_h_topup(svc_req *r, dpa_ledger *l, const char *unit)
{
    static const char *const keys[] = {"filter", "reason", NULL};
    dpa_error err = {0};
    const char *reason;
    char *filter;
    json_t *body;
    int ok;
    if (!svc_auth(r, l, DPA_LEDGER_ROLE_ADMIN) || !svc_unit_visible(r, l, unit) || !(body = svc_body_object(r)))
        return;
    if (svc_known_keys(r, body, keys) && reason_member(r, body, &reason)) {
        filter = svc_filter_member(r, body, 1, &ok);
        if (ok) {
            if (dpa_ledger_unit_topup(l, unit, filter, r->who.token_id, reason, &err) != DPA_OK)
                refused(r, &err);
            else
                answer_status(r, l, unit);
        }
        free(filter);
    }
    json_decref(body);
}
