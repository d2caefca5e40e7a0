/* The budget service's reading handlers over the whole history: a unit's
 * history (paged), verify (the whole ledger) and export (the whole ledger,
 * for an admin of the tenant "default" only).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "service_internal.h"

void svc_h_history(svc_req *r, dpa_ledger *l, const char *unit)
{
    char *after = NULL, *since = NULL, *until = NULL, *json = NULL, *end;
    long long after_id = 0;
    dpa_error err = {0};
    int limit;
    if (!svc_auth(r, l, DPA_LEDGER_ROLE_READ) || !svc_unit_visible(r, l, unit) || (limit = svc_limit(r)) < 0)
        return;
    after = svc_query(r, "after");
    if (after) {
        errno = 0;
        after_id = strtoll(after, &end, 10);
        if (end == after || *end || errno || after_id < 0) {
            svc_error(r, 400, "bad_input", "after: a request id (an integer >= 0), got \"%s\"", after);
            goto done;
        }
    }
    since = svc_query(r, "since");
    until = svc_query(r, "until");
    if (dpa_ledger_history_page_json(l, unit, after_id, since, until, limit, &json, &err) != DPA_OK)
        svc_ledger_error(r, &err);
    else
        svc_json_text(r, 200, json);
done:
    free(after);
    free(since);
    free(until);
    free(json);
}

void svc_h_verify(svc_req *r, dpa_ledger *l)
{
    char *report = NULL;
    dpa_error err = {0};
    int ok = 0;
    if (!svc_auth(r, l, DPA_LEDGER_ROLE_READ))
        return;
    if (dpa_ledger_verify(l, &ok, &report, &err) != DPA_OK)
        svc_ledger_error(r, &err);
    else
        svc_json_text(r, 200, report);
    free(report);
}

void svc_h_export(svc_req *r, dpa_ledger *l)
{
    char *json = NULL;
    dpa_error err = {0};
    if (!svc_auth(r, l, DPA_LEDGER_ROLE_ADMIN))
        return;
    if (strcmp(r->who.tenant, "default") != 0) {
        svc_error(r, 403, "forbidden", "export holds the whole ledger: only an admin of the tenant \"default\" may read it");
        return;
    }
    if (dpa_ledger_export_json(l, &json, &err) != DPA_OK)
        svc_ledger_error(r, &err);
    else
        svc_json_text(r, 200, json);
    free(json);
}
