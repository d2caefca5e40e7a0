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

dpa_status dpa_store_check_format(const char *format, const char *shown, dpa_error *err)
{
    if (format && !strcmp(format, DPA_LEDGER_FORMAT))
        return DPA_OK;
    if (format && !strcmp(format, DPA_LEDGER_FORMAT_1))
        return dpa_error_set(err, DPA_EINVAL, "ledger: %s holds a ledger of format 1, without the hash "
                             "chain of this version: upgrade it with `dpacct ledger upgrade LOCATION` "
                             "(dpa_ledger_upgrade; it verifies the history, then chains it), after a "
                             "backup", shown);
    if (format && !strncmp(format, "dpacct-ledger ", 14))
        return dpa_error_set(err, DPA_EINVAL, "ledger: %s holds a ledger of another format (%s; this "
                             "dpacct reads %s)", shown, format, DPA_LEDGER_FORMAT);
    return dpa_error_set(err, DPA_EINVAL, "ledger: %s is not a dpacct ledger", shown);
}
