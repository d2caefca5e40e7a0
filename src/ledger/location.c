/* A ledger location as it may be shown: PostgreSQL URIs without passwords,
 * and messages (libpq's own) with every password of the URI masked.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A password may sit in the user information (postgresql://user:PW@host)
 * or in a password= parameter, in any case (libpq rejects PASSWORD= but
 * quotes it in its message); a malformed URI (an unclosed "[::1", a bad
 * percent-encoding) is masked the same way, since libpq's message about it
 * may quote the URI or the offending part.  The user information ends at
 * the last '@' before the query ('?'), so a password holding '/', '@' or
 * '#' unencoded is still masked whole. */
#include <ctype.h>
#include <strings.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dpacct/ledger.h"
#include "ledger/ledger_internal.h"

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

static int is_pg_uri(const char *loc)
{
    return !strncmp(loc, "postgresql://", 13) || !strncmp(loc, "postgres://", 11);
}

/* Spans [start, end) of loc holding a password, in order; at most max. */
#define MAX_SECRETS 8
typedef struct span {
    const char *start, *end;
} span;

static size_t secret_spans(const char *loc, span *out, size_t max)
{
    const char *auth = strstr(loc, "://") + 3, *q, *at = NULL, *colon, *p;
    size_t n = 0;
    q = auth + strcspn(auth, "?");
    for (p = auth; p < q; p++)
        if (*p == '@')
            at = p;
    colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
    if (colon && at > colon + 1 && n < max)
        out[n++] = (span){colon + 1, at};
    /* every password=VALUE, in any case, after the user information */
    for (p = at ? at : auth; *p && n < max; p++) {
        if ((p == loc || p[-1] == '?' || p[-1] == '&' || p[-1] == ' ') && !strncasecmp(p, "password=", 9)) {
            const char *v = p + 9, *e = v + strcspn(v, "&#");
            if (e > v)
                out[n++] = (span){v, e};
            p = e - 1;
        }
    }
    return n;
}

void dpa_ledger_location_display(const char *loc, char *buf, size_t n)
{
    span sp[MAX_SECRETS];
    size_t ns, room = n;
    const char *p;
    char *o = buf;
    if (!buf || n == 0)
        return;
    buf[0] = '\0';
    if (!loc)
        return;
    if (!is_pg_uri(loc)) {
        snprintf(buf, n, "%s", loc);
        return;
    }
    ns = secret_spans(loc, sp, MAX_SECRETS);
    p = loc;
    for (size_t i = 0; i < ns; i++) {
        put(&o, &room, p, (size_t)(sp[i].start - p));
        put(&o, &room, "***", 3);
        p = sp[i].end;
    }
    put(&o, &room, p, strlen(p));
}

static int hexval(int c)
{
    return isdigit(c) ? c - '0' : isxdigit(c) ? (tolower(c) - 'a' + 10) : -1;
}

/* The percent-decoding of [s, e) (invalid escapes kept as they are). */
static char *decode(const char *s, const char *e)
{
    char *d = malloc((size_t)(e - s) + 1), *o = d;
    if (!d)
        return NULL;
    while (s < e) {
        if (*s == '%' && e - s >= 3 && hexval(s[1]) >= 0 && hexval(s[2]) >= 0) {
            *o++ = (char)(hexval(s[1]) * 16 + hexval(s[2]));
            s += 3;
        } else {
            *o++ = *s++;
        }
    }
    *o = '\0';
    return d;
}

void dpa_ledger_mask_secrets(const char *uri, const char *msg, char *out, size_t n)
{
    span sp[MAX_SECRETS];
    char *secret[2 * MAX_SECRETS];
    size_t ns = 0, nsec = 0, room = n;
    char *o = out;
    if (!out || n == 0)
        return;
    out[0] = '\0';
    if (!msg)
        return;
    if (uri && is_pg_uri(uri))
        ns = secret_spans(uri, sp, MAX_SECRETS);
    for (size_t i = 0; i < ns && nsec + 2 <= 2 * MAX_SECRETS; i++) {
        secret[nsec] = strndup(sp[i].start, (size_t)(sp[i].end - sp[i].start));
        if (secret[nsec])
            nsec++;
        secret[nsec] = decode(sp[i].start, sp[i].end);
        if (secret[nsec])
            nsec++;
        /* libpq may quote a piece of a malformed password (read as a port,
         * a host, ...): each piece between delimiters of 3 bytes or more */
        for (const char *p = sp[i].start; p < sp[i].end && nsec < 2 * MAX_SECRETS;) {
            size_t len = strcspn(p, "/:@?#[]&=");
            if (p + len > sp[i].end)
                len = (size_t)(sp[i].end - p);
            if (len >= 3 && len < (size_t)(sp[i].end - sp[i].start) && (secret[nsec] = strndup(p, len)))
                nsec++;
            p += len + 1;
        }
    }
    for (const char *p = msg; *p;) {
        size_t best = 0;
        for (size_t k = 0; k < nsec; k++) {
            size_t len = strlen(secret[k]);
            if (len > best && !strncmp(p, secret[k], len))
                best = len;
        }
        if (best) {
            put(&o, &room, "***", 3);
            p += best;
        } else {
            put(&o, &room, p, 1);
            p++;
        }
    }
    for (size_t k = 0; k < nsec; k++)
        free(secret[k]);
}
