/* The budget service's cache of units' tenants.  A unit's tenant never
 * changes (units are not moved or deleted, names are unique in the ledger),
 * so once read it can be kept: the check that a unit belongs to the
 * caller's tenant then costs no database round trip.  Only units that exist
 * are cached; a bounded open-addressing table, emptied when full.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdlib.h>
#include <string.h>
#include "service_internal.h"

static size_t hash(const char *s)
{
    size_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

void svc_tcache_init(svc_tcache *c)
{
    memset(c, 0, sizeof *c);
    pthread_mutex_init(&c->mu, NULL);
}

static void drop_all(svc_tcache *c)
{
    size_t i;
    for (i = 0; i < SVC_TCACHE_SLOTS; i++) {
        free(c->unit[i]);
        free(c->tenant[i]);
        c->unit[i] = c->tenant[i] = NULL;
    }
    c->n = 0;
}

void svc_tcache_clear(svc_tcache *c)
{
    drop_all(c);
    pthread_mutex_destroy(&c->mu);
}

int svc_tcache_get(svc_tcache *c, const char *unit, char *tenant, size_t n)
{
    size_t i = hash(unit) % SVC_TCACHE_SLOTS;
    int found = 0;
    pthread_mutex_lock(&c->mu);
    for (; c->unit[i]; i = (i + 1) % SVC_TCACHE_SLOTS)
        if (!strcmp(c->unit[i], unit)) {
            found = strlen(c->tenant[i]) < n;
            if (found)
                strcpy(tenant, c->tenant[i]);
            break;
        }
    pthread_mutex_unlock(&c->mu);
    return found;
}

void svc_tcache_put(svc_tcache *c, const char *unit, const char *tenant)
{
    size_t i = hash(unit) % SVC_TCACHE_SLOTS;
    char *u = strdup(unit), *t = strdup(tenant);
    if (!u || !t) {
        free(u);
        free(t);
        return;
    }
    pthread_mutex_lock(&c->mu);
    if (c->n >= SVC_TCACHE_SLOTS / 2) /* keep the table sparse: start again */
        drop_all(c);
    for (; c->unit[i]; i = (i + 1) % SVC_TCACHE_SLOTS)
        if (!strcmp(c->unit[i], unit))
            break;
    if (c->unit[i]) { /* already there (another thread) */
        free(u);
        free(t);
    } else {
        c->unit[i] = u;
        c->tenant[i] = t;
        c->n++;
    }
    pthread_mutex_unlock(&c->mu);
}
