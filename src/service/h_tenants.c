/* The budget service's tenant and token handlers: list and add tenants, list,
 * create and revoke bearer tokens (docs/service.md "Tenants and tokens").
 * An admin acts on its own tenant; an admin of the tenant "default" on every
 * tenant.  A new token's secret is in the 201 answer only, never logged.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdlib.h>
#include <string.h>
#include "service_internal.h"

static int is_default(const svc_req *r)
{
    return !strcmp(r->who.tenant, "default");
}

/* Add the "tenant" member of every element of arr to the set (an object). */
static void add_tenants(json_t *set, json_t *arr)
{
    json_t *e;
    size_t i;
    json_array_foreach(arr, i, e) {
        const char *t = json_string_value(json_object_get(e, "tenant"));
        if (t)
            json_object_set_new(set, t, json_true());
    }
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The ledger keeps no list of tenants: the set named by its tokens and its
 * units (a tenant with neither is not listed), and "default" always. */
static json_t *all_tenants(dpa_ledger *l, dpa_error *err)
{
    json_t *set = json_object(), *page, *out = NULL, *v;
    char *json = NULL, *after = NULL;
    const char *k, **names = NULL;
    size_t n = 0, i;
    json_object_set_new(set, "default", json_true());
    if (dpa_ledger_token_list_json(l, NULL, &json, err) != DPA_OK)
        goto done;
    page = json_loads(json, 0, NULL);
    add_tenants(set, page);
    json_decref(page);
    for (;;) {
        const char *next;
        free(json);
        json = NULL;
        if (dpa_ledger_units_page_json(l, NULL, after, 1000, &json, err) != DPA_OK)
            goto done;
        page = json_loads(json, 0, NULL);
        add_tenants(set, json_object_get(page, "units"));
        next = json_string_value(json_object_get(page, "next"));
        free(after);
        after = next ? strdup(next) : NULL;
        json_decref(page);
        if (!after)
            break;
    }
    names = malloc((json_object_size(set) + 1) * sizeof *names);
    if (!names)
        goto done;
    json_object_foreach(set, k, v)
        names[n++] = k;
    qsort(names, n, sizeof *names, cmp_names);
    out = json_array();
    for (i = 0; i < n; i++)
        json_array_append_new(out, json_string(names[i]));
done:
    free(names);
    free(json);
    free(after);
    json_decref(set);
    return out;
}

void svc_h_tenants_list(svc_req *r, dpa_ledger *l)
{
    dpa_error err = {0};
    json_t *names;
    if (!svc_auth(r, l, DPA_LEDGER_ROLE_ADMIN))
        return;
    if (!is_default(r)) {
        svc_json(r, 200, json_pack("{s:[s]}", "tenants", r->who.tenant));
        return;
    }
    names = all_tenants(l, &err);
    if (!names) {
        if (err.status != DPA_OK)
            svc_ledger_error(r, &err);
        else
            svc_error(r, 500, "internal", "out of memory");
        return;
    }
    svc_json(r, 200, json_pack("{s:o}", "tenants", names));
}

/* A required (or optional, if !required) string member; 0 with 400 made if
 * it has another type or is missing. */
static int string_member(svc_req *r, json_t *body, const char *key, int required, const char **s)
{
    json_t *v = json_object_get(body, key);
    *s = NULL;
    if (!v && !required)
        return 1;
    if (!json_is_string(v)) {
        svc_error(r, 400, "bad_input", "/%s: %s", key, v ? "must be a string" : "missing");
        return 0;
    }
    *s = json_string_value(v);
    return 1;
}

void svc_h_tenants_create(svc_req *r, dpa_ledger *l)
{
    static const char *const keys[] = {"tenant", NULL};
    dpa_error err = {0};
    const char *t;
    json_t *body;
    if (!svc_auth(r, l, DPA_LEDGER_ROLE_ADMIN))
        return;
    if (!is_default(r)) {
        svc_error(r, 403, "forbidden", "only an admin of the tenant \"default\" may add tenants");
        return;
    }
    if (!(body = svc_body_object(r)))
        return;
    if (svc_known_keys(r, body, keys) && string_member(r, body, "tenant", 1, &t)) {
        if (dpa_ledger_add_tenant(l, t, r->who.token_id, &err) == DPA_OK)
            svc_json(r, 201, json_pack("{s:s}", "tenant", t));
        else if (err.status == DPA_EINVAL && strstr(err.message, "already exists"))
            svc_error(r, 409, "conflict", "%s", err.message);
        else
            svc_ledger_error(r, &err);
    }
    json_decref(body);
}

void svc_h_tokens_list(svc_req *r, dpa_ledger *l)
{
    dpa_error err = {0};
    char *json = NULL;
    if (!svc_auth(r, l, DPA_LEDGER_ROLE_ADMIN))
        return;
    if (dpa_ledger_token_list_json(l, r->who.tenant, &json, &err) != DPA_OK)
        svc_ledger_error(r, &err);
    else
        svc_json(r, 200, json_pack("{s:o?}", "tokens", json_loads(json, 0, NULL)));
    free(json);
}

static int role_of(const char *s, dpa_ledger_role *role)
{
    if (!strcmp(s, "read"))
        *role = DPA_LEDGER_ROLE_READ;
    else if (!strcmp(s, "request"))
        *role = DPA_LEDGER_ROLE_REQUEST;
    else if (!strcmp(s, "admin"))
        *role = DPA_LEDGER_ROLE_ADMIN;
    else
        return 0;
    return 1;
}

void svc_h_tokens_create(svc_req *r, dpa_ledger *l)
{
    static const char *const keys[] = {"role", "label", "tenant", NULL};
    dpa_error err = {0};
    const char *rs, *label, *t;
    char *secret = NULL, *id = NULL;
    dpa_ledger_role role;
    json_t *body;
    if (!svc_auth(r, l, DPA_LEDGER_ROLE_ADMIN) || !(body = svc_body_object(r)))
        return;
    if (!svc_known_keys(r, body, keys) || !string_member(r, body, "role", 1, &rs) ||
        !string_member(r, body, "label", 0, &label) || !string_member(r, body, "tenant", 0, &t))
        goto done;
    if (!role_of(rs, &role)) {
        svc_error(r, 400, "bad_input", "/role: \"read\", \"request\" or \"admin\", got \"%s\"", rs);
        goto done;
    }
    if (!t)
        t = r->who.tenant;
    if (strcmp(t, r->who.tenant) != 0 && !is_default(r)) {
        svc_error(r, 403, "forbidden", "an admin of the tenant \"%s\" makes tokens of its own tenant only", r->who.tenant);
        goto done;
    }
    if (dpa_ledger_token_create(l, t, role, label, r->who.token_id, &secret, &id, &err) != DPA_OK)
        svc_ledger_error(r, &err);
    else
        svc_json(r, 201, json_pack("{s:s,s:s,s:s,s:s}", "token", secret, "id", id, "tenant", t, "role", rs));
done:
    if (secret)
        memset(secret, 0, strlen(secret));
    free(secret);
    free(id);
    json_decref(body);
}

/* The tenant of the token id (malloc'ed) or NULL if unknown (or on error, *err). */
static char *token_tenant(dpa_ledger *l, const char *id, dpa_error *err)
{
    char *json = NULL, *t = NULL;
    json_t *arr, *e;
    size_t i;
    if (dpa_ledger_token_list_json(l, NULL, &json, err) != DPA_OK)
        return NULL;
    arr = json_loads(json, 0, NULL);
    free(json);
    json_array_foreach(arr, i, e) {
        const char *eid = json_string_value(json_object_get(e, "id"));
        const char *et = json_string_value(json_object_get(e, "tenant"));
        if (eid && et && !strcmp(eid, id)) {
            t = strdup(et);
            break;
        }
    }
    json_decref(arr);
    return t;
}

void svc_h_token_revoke(svc_req *r, dpa_ledger *l, const char *id)
{
    dpa_error err = {0};
    char *t;
    if (!svc_auth(r, l, DPA_LEDGER_ROLE_ADMIN))
        return;
    t = token_tenant(l, id, &err);
    if (!t && err.status != DPA_OK) {
        svc_ledger_error(r, &err);
        return;
    }
    if (!t || (strcmp(t, r->who.tenant) != 0 && !is_default(r))) /* another tenant's: unknown */
        svc_error(r, 404, "not_found", "unknown token \"%s\"", id);
    else if (dpa_ledger_token_revoke(l, id, r->who.token_id, &err) != DPA_OK) {
        if (err.status == DPA_EINVAL)
            svc_error(r, 409, "conflict", "%s", err.message);
        else
            svc_ledger_error(r, &err);
    } else
        svc_json(r, 200, json_pack("{s:s,s:s,s:b}", "id", id, "tenant", t, "revoked", 1));
    free(t);
}
