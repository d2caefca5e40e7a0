/* The ledger's storage interface: helpers shared by the backends.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ledger/store.h"

void dpa_store_unit_clear(dpa_store_unit *u)
{
    if (!u)
        return;
    free(u->name);
    free(u->filter);
    free(u->initial_state);
    free(u->state);
    free(u->created);
    free(u->chain);
    free(u->tenant);
    free(u->lifecycle);
    free(u->period_start);
    free(u->filter_now);
    memset(u, 0, sizeof *u);
}

void dpa_store_request_clear(dpa_store_request *r)
{
    if (!r)
        return;
    free(r->unit);
    free(r->time);
    free(r->spec);
    free(r->reason);
    free(r->state_before);
    free(r->state_after);
    free(r->chain);
    free(r->kind);
    free(r->actor);
    free(r->idem_key);
    memset(r, 0, sizeof *r);
}

void dpa_store_now(char buf[40])
{
    struct timespec ts;
    struct tm tm;
    char day[24];
    unsigned us;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
    us = (unsigned)(ts.tv_nsec / 1000) % 1000000u;
    snprintf(buf, 40, "%.19s.%06uZ", day, us);
}

const char *const DPA_STORE_UPGRADE_SQL[4] = {
    "ALTER TABLE dpacct_units ADD COLUMN chain_index BIGINT NOT NULL DEFAULT 0",
    "ALTER TABLE dpacct_units ADD COLUMN chain_after BIGINT NOT NULL DEFAULT 0",
    "ALTER TABLE dpacct_units ADD COLUMN chain TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE dpacct_requests ADD COLUMN chain TEXT NOT NULL DEFAULT ''",
};

const char *dpa_store_unit_config(const dpa_store_unit *u)
{
    return u->filter_now && *u->filter_now ? u->filter_now : u->filter;
}

/* Format 3's columns (the same statements on both backends: BIGINT is an
 * INTEGER to SQLite). */
const char *const DPA_STORE_UPGRADE3_SQL[DPA_STORE_UPGRADE3_N] = {
    "ALTER TABLE dpacct_units ADD COLUMN tenant TEXT NOT NULL DEFAULT 'default'",
    "ALTER TABLE dpacct_units ADD COLUMN period_seconds BIGINT NOT NULL DEFAULT 0",
    "ALTER TABLE dpacct_units ADD COLUMN lifecycle TEXT NOT NULL DEFAULT 'active'",
    "ALTER TABLE dpacct_units ADD COLUMN generation BIGINT NOT NULL DEFAULT 0",
    "ALTER TABLE dpacct_units ADD COLUMN period_start TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE dpacct_units ADD COLUMN filter_now TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE dpacct_requests ADD COLUMN kind TEXT NOT NULL DEFAULT 'request'",
    "ALTER TABLE dpacct_requests ADD COLUMN actor TEXT NOT NULL DEFAULT 'local'",
    "ALTER TABLE dpacct_requests ADD COLUMN idem_key TEXT",
    "ALTER TABLE dpacct_requests ADD COLUMN generation BIGINT NOT NULL DEFAULT 0",
    "ALTER TABLE dpacct_requests ADD COLUMN ref BIGINT NOT NULL DEFAULT 0",
    "CREATE UNIQUE INDEX IF NOT EXISTS dpacct_requests_key ON dpacct_requests (unit, idem_key)",
};

int dpa_store_format_upgradable(const char *format)
{
    return format && (!strcmp(format, DPA_LEDGER_FORMAT_1) || !strcmp(format, DPA_LEDGER_FORMAT_2));
}

dpa_status dpa_store_check_format(const char *format, const char *shown, dpa_error *err)
{
    if (format && !strcmp(format, DPA_LEDGER_FORMAT))
        return DPA_OK;
    if (format && !strcmp(format, DPA_LEDGER_FORMAT_1))
        return dpa_error_set(err, DPA_EINVAL, "ledger: %s holds a ledger of format 1, without the hash "
                             "chain of this version: upgrade it with `dpacct ledger upgrade LOCATION` "
                             "(dpa_ledger_upgrade; it verifies the history, then chains it), after a "
                             "backup", shown);
    if (format && !strcmp(format, DPA_LEDGER_FORMAT_2))
        return dpa_error_set(err, DPA_EINVAL, "ledger: %s holds a ledger of format 2, without the tenants, "
                             "tokens and history kinds of this version: upgrade it with `dpacct ledger upgrade "
                             "LOCATION` (dpa_ledger_upgrade; it verifies the history, then chains it anew), "
                             "after a backup", shown);
    if (format && !strncmp(format, "dpacct-ledger ", 14))
        return dpa_error_set(err, DPA_EINVAL, "ledger: %s holds a ledger of another format (%s; this "
                             "dpacct reads %s)", shown, format, DPA_LEDGER_FORMAT);
    return dpa_error_set(err, DPA_EINVAL, "ledger: %s is not a dpacct ledger", shown);
}

dpa_status dpa_store_snapshot_tx(dpa_store *s, const char *name, dpa_store_unit *out, int *found, char **head,
                                 dpa_error *err)
{
    dpa_status rc = s->ops->begin_read(s, err);
    *head = NULL;
    *found = 0;
    memset(out, 0, sizeof *out);
    if (rc == DPA_OK)
        rc = s->ops->get_unit(s, name, 0, out, found, err);
    if (rc == DPA_OK && *found)
        rc = s->ops->get_meta(s, "chain_head", head, err);
    s->ops->rollback(s);
    if (rc != DPA_OK) {
        dpa_store_unit_clear(out);
        free(*head);
        *head = NULL;
        *found = 0;
    }
    return rc;
}

dpa_status dpa_store_commit_request_tx(dpa_store *s, const dpa_store_commit *c, int *conflict, char **head,
                                       dpa_error *err)
{
    const dpa_store_unit *snap = c->snap;
    dpa_store_unit cur;
    dpa_store_request r = *c->r;
    char *now_head = NULL;
    int found = 0;
    dpa_status rc = s->ops->begin_write(s, err);
    *conflict = 0;
    *head = NULL;
    memset(&cur, 0, sizeof cur);
    if (rc != DPA_OK)
        return rc;
    /* the unit's lock, then the head's (the order of every writer) */
    rc = s->ops->get_unit(s, snap->name, 1, &cur, &found, err);
    if (rc == DPA_OK && (!found || cur.requests != snap->requests || strcmp(cur.state, snap->state) ||
                         strcmp(dpa_store_unit_config(&cur), dpa_store_unit_config(snap)) ||
                         cur.generation != snap->generation ||
                         strcmp(cur.lifecycle ? cur.lifecycle : "active", "active")))
        *conflict = 1;
    if (rc == DPA_OK && !*conflict) {
        rc = s->ops->lock_meta(s, "chain_head", &now_head, err);
        if (rc == DPA_OK && (!now_head || strcmp(now_head, c->head_before))) {
            *conflict = 2;
            *head = now_head;
            now_head = NULL;
        }
    }
    if (rc == DPA_OK && !*conflict) {
        /* append_request keeps an id > 0 */
        rc = s->ops->append_request(s, &r, err);
        if (rc == DPA_OK)
            rc = s->ops->set_meta(s, "chain_head", c->head_after, err);
        if (rc == DPA_OK) {
            char *before = cur.state;
            cur.state = c->r->state_after;
            cur.requests = snap->requests + 1;
            cur.accepted += c->r->accepted ? 1 : 0;
            rc = s->ops->update_unit(s, &cur, err);
            cur.state = before;
        }
    }
    if (rc == DPA_OK && !*conflict) {
        rc = s->ops->commit(s, err);
    } else {
        s->ops->rollback(s);
        if (rc != DPA_OK) {
            free(*head);
            *head = NULL;
            *conflict = 0;
        }
    }
    free(now_head);
    dpa_store_unit_clear(&cur);
    return rc;
}
