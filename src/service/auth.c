/* The budget service's authentication and authorization: the bearer token
 * of the Authorization header (never logged, never echoed), its identity
 * from the ledger, the role it needs, and the tenant of a unit (another
 * tenant's unit is answered as unknown, so its existence is not revealed).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "service_internal.h"

const char *svc_role_name(dpa_ledger_role role)
{
    return role == DPA_LEDGER_ROLE_ADMIN ? "admin" : role == DPA_LEDGER_ROLE_REQUEST ? "request" : "read";
}

int svc_auth(svc_req *r, dpa_ledger *l, dpa_ledger_role role)
{
    const char *h = svc_header(r, MHD_HTTP_HEADER_AUTHORIZATION);
    dpa_error err = {0};
    dpa_status st;
    if (!h || strncasecmp(h, "Bearer ", 7) != 0) {
        svc_error(r, 401, "unauthorized", "missing bearer token (Authorization: Bearer TOKEN)");
        return 0;
    }
    h += 7;
    while (*h == ' ')
        h++;
    if (svc_authcache_get(&r->s->tokens, h, &r->who))
        st = DPA_OK;
    else if ((st = dpa_ledger_authenticate(l, h, &r->who, &err)) == DPA_OK)
        svc_authcache_put(&r->s->tokens, h, &r->who);
    if (st == DPA_EINVAL) {
        /* the ledger's message names no token; ours neither */
        svc_error(r, 401, "unauthorized", "unknown or revoked token");
        return 0;
    }
    if (st != DPA_OK) {
        svc_ledger_error(r, &err);
        return 0;
    }
    r->authed = 1;
    if (r->who.role < role) {
        svc_error(r, 403, "forbidden", "this call needs the role %s; the token %s has the role %s",
                  svc_role_name(role), r->who.token_id, svc_role_name(r->who.role));
        return 0;
    }
    return 1;
}

int svc_unit_visible(svc_req *r, dpa_ledger *l, const char *unit)
{
    char *tenant = NULL, cached[DPA_LEDGER_MAX_UNIT + 1];
    dpa_error err = {0};
    dpa_status st;
    int same;
    if (svc_tcache_get(&r->s->tenants, unit, cached, sizeof cached))
        return !strcmp(cached, r->who.tenant) ? 1 : (svc_error(r, 404, "not_found", "unknown unit \"%s\"", unit), 0);
    st = dpa_ledger_unit_tenant(l, unit, &tenant, &err);
    same = st == DPA_OK && !strcmp(tenant, r->who.tenant);
    if (st == DPA_OK)
        svc_tcache_put(&r->s->tenants, unit, tenant);
    free(tenant);
    if (st != DPA_OK && st != DPA_EINVAL) {
        svc_ledger_error(r, &err);
        return 0;
    }
    if (!same) {
        svc_error(r, 404, "not_found", "unknown unit \"%s\"", unit);
        return 0;
    }
    return 1;
}
