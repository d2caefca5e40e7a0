/* A unit's row and the checks every writer of the ledger shares: unit names,
 * a stored filter loaded back, the refusal of a read-only handle.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdlib.h>
#include <string.h>
#include "dpacct/filter.h"
#include "ledger/ledger_internal.h"

dpa_status dpa_ledger_read_only(dpa_error *err)
{
    return dpa_error_set(err, DPA_EINVAL, "ledger: opened read-only (dpa_ledger_open_readonly): no "
                         "requests or units can be added through it");
}

/* Filter from configuration and, if state != NULL, that state.  A stored
 * configuration or state that does not load is corruption (DPA_ESTORAGE). */
dpa_filter *dpa_ledger_load_filter(const char *config, const char *state, const char *unit, dpa_error *err)
{
    dpa_error e;
    dpa_filter *f = dpa_filter_new_json(config, &e);
    if (!f) {
        dpa_error_set(err, e.status == DPA_ENOMEM ? DPA_ENOMEM : DPA_ESTORAGE,
                      "ledger: stored filter of unit \"%s\" does not load: %s", unit, e.message);
        return NULL;
    }
    if (state && dpa_filter_set_state_json(f, state, &e) != DPA_OK) {
        dpa_error_set(err, e.status == DPA_ENOMEM ? DPA_ENOMEM : DPA_ESTORAGE,
                      "ledger: stored state of unit \"%s\" does not load: %s", unit, e.message);
        dpa_filter_free(f);
        return NULL;
    }
    return f;
}

int dpa_ledger_utf8_valid(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned c = *p;
        int k = c < 0x80 ? 0 : (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2 : (c & 0xF8) == 0xF0 ? 3 : -1;
        unsigned long cp;
        if (k < 0 || (k == 1 && c < 0xC2))
            return 0;
        cp = c & (0x7Fu >> k);
        for (int j = 1; j <= k; j++) {
            if ((p[j] & 0xC0) != 0x80)
                return 0;
            cp = cp << 6 | (p[j] & 0x3Fu);
        }
        if ((k == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (k == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
            return 0;
        p += k + 1;
    }
    return 1;
}

dpa_status dpa_ledger_check_unit_name(const char *unit, dpa_error *err)
{
    size_t n;
    if (!unit)
        return dpa_error_set(err, DPA_EINVAL, "ledger: missing unit name");
    n = strlen(unit);
    if (n == 0 || n > DPA_LEDGER_MAX_UNIT)
        return dpa_error_set(err, DPA_EINVAL, "ledger: a unit name has 1 to %d bytes (got %zu)",
                             DPA_LEDGER_MAX_UNIT, n);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)unit[i] < 0x20 || unit[i] == 0x7f)
            return dpa_error_set(err, DPA_EINVAL, "ledger: a unit name may not contain control characters");
    if (!dpa_ledger_utf8_valid(unit))
        return dpa_error_set(err, DPA_EINVAL, "ledger: a unit name must be valid UTF-8");
    return DPA_OK;
}

/* A new unit's row: canonical configuration and the full-budget state. */
dpa_status dpa_ledger_new_unit_row(const char *unit, const char *config, dpa_store_unit *u, dpa_error *err)
{
    dpa_filter *f = dpa_filter_new_json(config, err);
    char now[40];
    memset(u, 0, sizeof *u);
    if (!f)
        return err ? err->status : DPA_EINVAL;
    dpa_store_now(now);
    u->name = strdup(unit);
    u->filter = dpa_filter_config_json(f);
    u->state = dpa_filter_state_json(f);
    u->initial_state = u->state ? strdup(u->state) : NULL;
    u->created = strdup(now);
    dpa_filter_free(f);
    if (!u->name || !u->filter || !u->state || !u->initial_state || !u->created) {
        dpa_store_unit_clear(u);
        return dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
    }
    return DPA_OK;
}
