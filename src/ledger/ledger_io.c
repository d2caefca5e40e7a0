/* The ledger's export and import: a whole ledger as one JSON document, to
 * move it between backends (SQLite -> PostgreSQL) or to archive it.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The document keeps everything verbatim (metadata, units with their
 * initial and current states and counts, every request with its id, time,
 * spec text, decision and states), so the imported ledger replays (`verify`)
 * exactly like the original.  Import writes into a new, empty ledger in one
 * transaction: all or nothing. */
#include <jansson.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "dpacct/ledger.h"
#include "ledger/ledger_internal.h"

#define EXPORT_FORMAT "dpacct-ledger-export 1"

static const char *const META_KEYS[] = {"default_filter", "auto_units", "created", "dpacct_version"};

static dpa_status oom(dpa_error *err)
{
    return dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
}

static int export_unit(void *ctx, const dpa_store_unit *u)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(u->name));
    json_object_set_new(o, "filter", json_string(u->filter));
    json_object_set_new(o, "initial_state", json_string(u->initial_state));
    json_object_set_new(o, "state", json_string(u->state));
    json_object_set_new(o, "requests", json_integer(u->requests));
    json_object_set_new(o, "accepted", json_integer(u->accepted));
    json_object_set_new(o, "created", json_string(u->created));
    return json_array_append_new((json_t *)ctx, o) != 0;
}

static int export_request(void *ctx, const dpa_store_request *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", json_integer(r->id));
    json_object_set_new(o, "unit", json_string(r->unit));
    json_object_set_new(o, "time", json_string(r->time));
    json_object_set_new(o, "spec", json_string(r->spec));
    json_object_set_new(o, "decision", json_string(r->accepted ? "accepted" : "rejected"));
    json_object_set_new(o, "reason", json_string(r->reason));
    json_object_set_new(o, "state_before", json_string(r->state_before));
    json_object_set_new(o, "state_after", json_string(r->state_after));
    return json_array_append_new((json_t *)ctx, o) != 0;
}

dpa_status dpa_ledger_export_json(dpa_ledger *l, char **json, dpa_error *err)
{
    dpa_store *s;
    json_t *root, *meta, *units, *requests;
    dpa_status rc;
    if (!l || !json)
        return dpa_error_set(err, DPA_EINVAL, "ledger: NULL argument");
    *json = NULL;
    s = l->store;
    root = json_object();
    meta = json_object();
    units = json_array();
    requests = json_array();
    json_object_set_new(root, "format", json_string(EXPORT_FORMAT));
    json_object_set_new(root, "meta", meta);
    json_object_set_new(root, "units", units);
    json_object_set_new(root, "requests", requests);
    rc = s->ops->begin_read(s, err);
    for (size_t k = 0; rc == DPA_OK && k < sizeof META_KEYS / sizeof *META_KEYS; k++) {
        char *v = NULL;
        rc = s->ops->get_meta(s, META_KEYS[k], &v, err);
        if (rc == DPA_OK && v)
            json_object_set_new(meta, META_KEYS[k], json_string(v));
        free(v);
    }
    if (rc == DPA_OK)
        rc = s->ops->each_unit(s, NULL, export_unit, units, err);
    if (rc == DPA_OK)
        rc = s->ops->each_request(s, NULL, export_request, requests, err);
    s->ops->rollback(s);
    if (rc == DPA_OK) {
        *json = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
        if (!*json)
            rc = oom(err);
    }
    json_decref(root);
    return rc;
}

/* The string member key of o, or NULL with err set. */
static const char *member(json_t *o, const char *what, size_t i, const char *key, dpa_error *err)
{
    const char *v = json_string_value(json_object_get(o, key));
    if (!v)
        dpa_error_set(err, DPA_EINVAL, "ledger import: /%s/%zu/%s: expected a string", what, i, key);
    return v;
}

static int integer_member(json_t *o, const char *what, size_t i, const char *key, long long *out,
                          dpa_error *err)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v) || json_integer_value(v) < 0) {
        dpa_error_set(err, DPA_EINVAL, "ledger import: /%s/%zu/%s: expected an integer >= 0", what, i, key);
        return -1;
    }
    *out = (long long)json_integer_value(v);
    return 0;
}

dpa_status dpa_ledger_import_json(const char *location, const char *json, dpa_error *err)
{
    json_error_t je;
    json_t *root, *meta, *units, *requests, *o;
    dpa_store *s = NULL;
    dpa_status rc = DPA_OK;
    size_t i;

    if (!location || !json)
        return dpa_error_set(err, DPA_EINVAL, "ledger import: NULL argument");
    root = json_loads(json, 0, &je);
    if (!root)
        return dpa_error_set(err, DPA_EINVAL, "ledger import: not JSON (line %d: %s)", je.line, je.text);
    meta = json_object_get(root, "meta");
    units = json_object_get(root, "units");
    requests = json_object_get(root, "requests");
    if (!json_is_string(json_object_get(root, "format")) ||
        strcmp(json_string_value(json_object_get(root, "format")), EXPORT_FORMAT) ||
        !json_is_object(meta) || !json_is_array(units) || !json_is_array(requests) ||
        !json_is_string(json_object_get(meta, "default_filter")) ||
        !json_is_string(json_object_get(meta, "auto_units"))) {
        json_decref(root);
        return dpa_error_set(err, DPA_EINVAL, "ledger import: not a dpacct ledger export (\"format\": \"%s\" "
                             "with meta, units and requests)", EXPORT_FORMAT);
    }
    rc = dpa_ledger_store_open(location, 1, &s, err);
    if (rc != DPA_OK) {
        json_decref(root);
        return rc;
    }
    rc = s->ops->begin_write(s, err);
    for (size_t k = 0; rc == DPA_OK && k < sizeof META_KEYS / sizeof *META_KEYS; k++) {
        const char *v = json_string_value(json_object_get(meta, META_KEYS[k]));
        if (v)
            rc = s->ops->set_meta(s, META_KEYS[k], v, err);
    }
    json_array_foreach(units, i, o) {
        dpa_store_unit u;
        if (rc != DPA_OK)
            break;
        memset(&u, 0, sizeof u);
        if (!(u.name = (char *)member(o, "units", i, "name", err)) ||
            !(u.filter = (char *)member(o, "units", i, "filter", err)) ||
            !(u.initial_state = (char *)member(o, "units", i, "initial_state", err)) ||
            !(u.state = (char *)member(o, "units", i, "state", err)) ||
            !(u.created = (char *)member(o, "units", i, "created", err)) ||
            integer_member(o, "units", i, "requests", &u.requests, err) ||
            integer_member(o, "units", i, "accepted", &u.accepted, err)) {
            rc = DPA_EINVAL;
            break;
        }
        rc = s->ops->insert_unit(s, &u, err);
    }
    json_array_foreach(requests, i, o) {
        dpa_store_request r;
        const char *decision;
        if (rc != DPA_OK)
            break;
        memset(&r, 0, sizeof r);
        if (integer_member(o, "requests", i, "id", &r.id, err) || r.id == 0 ||
            !(r.unit = (char *)member(o, "requests", i, "unit", err)) ||
            !(r.time = (char *)member(o, "requests", i, "time", err)) ||
            !(r.spec = (char *)member(o, "requests", i, "spec", err)) ||
            !(decision = member(o, "requests", i, "decision", err)) ||
            !(r.reason = (char *)member(o, "requests", i, "reason", err)) ||
            !(r.state_before = (char *)member(o, "requests", i, "state_before", err)) ||
            !(r.state_after = (char *)member(o, "requests", i, "state_after", err))) {
            if (r.id == 0 && err && err->status == DPA_OK)
                dpa_error_set(err, DPA_EINVAL, "ledger import: /requests/%zu/id: expected >= 1", i);
            rc = DPA_EINVAL;
            break;
        }
        if (strcmp(decision, "accepted") && strcmp(decision, "rejected")) {
            rc = dpa_error_set(err, DPA_EINVAL, "ledger import: /requests/%zu/decision: \"accepted\" or "
                               "\"rejected\"", i);
            break;
        }
        r.accepted = !strcmp(decision, "accepted");
        rc = s->ops->append_request(s, &r, err);
    }
    if (rc == DPA_OK)
        rc = s->ops->commit(s, err);
    else
        s->ops->rollback(s);
    s->ops->close(s);
    json_decref(root);
    if (rc != DPA_OK && strncmp(location, "postgres", 8)) {
        /* the SQLite file this import created holds no ledger: remove it */
        char side[4096];
        unlink(location);
        snprintf(side, sizeof side, "%s-wal", location);
        unlink(side);
        snprintf(side, sizeof side, "%s-shm", location);
        unlink(side);
    }
    return rc;
}
