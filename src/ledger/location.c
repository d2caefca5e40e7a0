/* A ledger location as it may be shown: PostgreSQL URIs without passwords.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdio.h>
#include <string.h>
#include "dpacct/ledger.h"

/* Copy s[0..n) to the output, advancing it (bounded, NUL-terminated). */
static void put(char **o, size_t *room, const char *s, size_t n)
{
    if (*room <= 1)
        return;
    if (n > *room - 1)
        n = *room - 1;
    memcpy(*o, s, n);
    *o += n;
    *room -= n;
    **o = '\0';
}

void dpa_ledger_location_display(const char *loc, char *buf, size_t n)
{
    const char *scheme, *auth, *end, *at, *colon, *p;
    char *o = buf;
    size_t room = n;
    if (!buf || n == 0)
        return;
    buf[0] = '\0';
    if (!loc)
        return;
    scheme = strstr(loc, "://");
    if (!scheme || (strncmp(loc, "postgresql://", 13) && strncmp(loc, "postgres://", 11))) {
        snprintf(buf, n, "%s", loc);
        return;
    }
    /* the authority ends at the first '/', '?' or '#'; its userinfo at the
     * LAST '@' (a password may hold an unencoded '@') */
    auth = scheme + 3;
    end = auth + strcspn(auth, "/?#");
    at = NULL;
    for (p = auth; p < end; p++)
        if (*p == '@')
            at = p;
    colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
    if (colon) {
        put(&o, &room, loc, (size_t)(colon + 1 - loc));
        put(&o, &room, "***", 3);
        p = at;
    } else {
        p = loc;
    }
    /* the rest, with every password=VALUE parameter masked */
    while (*p) {
        const char *hit = strstr(p, "password=");
        if (!hit) {
            put(&o, &room, p, strlen(p));
            break;
        }
        put(&o, &room, p, (size_t)(hit - p) + 9);
        put(&o, &room, "***", 3);
        p = hit + 9 + strcspn(hit + 9, "&#");
    }
}
