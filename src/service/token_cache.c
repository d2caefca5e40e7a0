/* The budget service's cache of authenticated tokens.  Authenticating is one
 * database read per API call; on PostgreSQL that round trip, not the group
 * commit, limited the decisions per second (svc-web's measurement: 3
 * decisions per batch with 16 clients).  A token that authenticated is
 * therefore kept for SVC_AUTH_TTL_NS: a revocation takes effect on a server
 * at the latest that long after the token's last successful check there
 * (docs/service.md says so).  Unknown or revoked tokens are never cached.
 * Slots hold the token itself (the secret is in the server's memory anyway
 * while it handles the request; it is wiped when the slot is dropped).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "service_internal.h"

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static size_t slot_of(const char *token)
{
    size_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *token; token++)
        h = (h ^ (unsigned char)*token) * 1099511628211ULL;
    return h % SVC_AUTH_SLOTS;
}

static void drop(svc_authcache *c, size_t i)
{
    if (c->token[i]) {
        memset(c->token[i], 0, strlen(c->token[i]));
        free(c->token[i]);
        c->token[i] = NULL;
    }
}

void svc_authcache_init(svc_authcache *c)
{
    memset(c, 0, sizeof *c);
    pthread_mutex_init(&c->mu, NULL);
}

void svc_authcache_clear(svc_authcache *c)
{
    size_t i;
    for (i = 0; i < SVC_AUTH_SLOTS; i++)
        drop(c, i);
    pthread_mutex_destroy(&c->mu);
}

int svc_authcache_get(svc_authcache *c, const char *token, dpa_ledger_identity *who)
{
    size_t i = slot_of(token);
    int found = 0;
    pthread_mutex_lock(&c->mu);
    if (c->token[i] && !strcmp(c->token[i], token)) {
        if (now_ns() < c->expires[i]) {
            *who = c->who[i];
            found = 1;
        } else
            drop(c, i);
    }
    pthread_mutex_unlock(&c->mu);
    return found;
}

void svc_authcache_put(svc_authcache *c, const char *token, const dpa_ledger_identity *who)
{
    size_t i = slot_of(token);
    char *t = strdup(token);
    if (!t)
        return;
    pthread_mutex_lock(&c->mu);
    drop(c, i); /* one token per slot: a collision replaces the older one */
    c->token[i] = t;
    c->who[i] = *who;
    c->expires[i] = now_ns() + SVC_AUTH_TTL_NS;
    pthread_mutex_unlock(&c->mu);
}
