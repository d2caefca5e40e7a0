/* Test helpers for the privacy filters: build a filter, request a JSON
 * query, and one restore-and-replay step (docs/filters.md, "Determinism
 * and state").  Include after <cmocka.h>.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef DPA_TEST_FILTER_REPLAY_H
#define DPA_TEST_FILTER_REPLAY_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dpacct/event.h"
#include "dpacct/filter.h"

static inline dpa_filter *mkfilter(const char *cfg)
{
    dpa_error err;
    dpa_filter *f = dpa_filter_new_json(cfg, &err);
    if (!f) fail_msg("config %s: %s", cfg, err.message);
    return f;
}

/* request a JSON query; returns accepted (1/0) or -status on error */
static inline int req(dpa_filter *f, const char *q, dpa_filter_decision *d, dpa_error *err)
{
    dpa_spec *s = dpa_spec_from_json(q, err);
    if (!s) fail_msg("spec %s: %s", q, err->message);
    dpa_filter_decision dd;
    if (!d) d = &dd;
    dpa_status st = dpa_filter_request(f, s, d, err);
    dpa_spec_free(s);
    return st ? -(int)st : d->accepted;
}

static inline char *filter_state(const dpa_filter *f)
{
    char *s = dpa_filter_state_json(f);
    if (!s) fail_msg("state: out of memory");
    return s;
}

/* 1 if the configuration cfg is refused with DPA_EINVAL and a message
 * containing msg; got receives the message (or "accepted"). */
static inline int config_refused(const char *cfg, const char *msg, char *got, size_t n)
{
    dpa_error err;
    dpa_filter *f = dpa_filter_new_json(cfg, &err);
    snprintf(got, n, "%s", f ? "accepted" : err.message);
    int ok = !f && err.status == DPA_EINVAL && strstr(err.message, msg) != NULL;
    dpa_filter_free(f);
    return ok;
}

/* Requests q from the filter a (configuration cfg) and from a fresh filter
 * restored from a's state before the request.  Returns 1 if both give the
 * same status, decision and message and the same state byte for byte, a
 * rejected or refused query left the state, and no state holds -0, nan or
 * inf; else 0 with the reason in why.  *result gets accepted (1/0) or
 * -status. */
static inline int replay_step(dpa_filter *a, const char *cfg, const dpa_spec *q, int *result, char *why, size_t n)
{
    dpa_error ea, eb;
    dpa_filter_decision da, db;
    char *s0 = filter_state(a), *sb0 = NULL, *s1 = NULL, *sb1 = NULL;
    int ok = 0;
    why[0] = 0;
    dpa_filter *b = mkfilter(cfg);
    if (dpa_filter_set_state_json(b, s0, &eb)) {
        snprintf(why, n, "state %s does not restore: %s", s0, eb.message);
        goto out;
    }
    sb0 = filter_state(b);
    dpa_status sa = dpa_filter_request(a, q, &da, &ea), sb = dpa_filter_request(b, q, &db, &eb);
    *result = sa ? -(int)sa : da.accepted;
    s1 = filter_state(a);
    sb1 = filter_state(b);
    if (strcmp(s0, sb0)) snprintf(why, n, "restored state differs:\n%s\n%s", s0, sb0);
    else if (sa != sb || (!sa && (da.accepted != db.accepted || strcmp(da.reason, db.reason))) ||
             (sa && strcmp(ea.message, eb.message)))
        snprintf(why, n, "direct (%d, %.100s) and restored (%d, %.100s) differ", (int)sa, sa ? ea.message : da.reason,
                 (int)sb, sb ? eb.message : db.reason);
    else if (strcmp(s1, sb1)) snprintf(why, n, "states differ:\n%s\n%s", s1, sb1);
    else if ((sa || !da.accepted) && strcmp(s0, s1)) snprintf(why, n, "a %s query changed the state:\n%s\n%s",
                                                              sa ? "refused" : "rejected", s0, s1);
    else if (strstr(s1, "-0") || strstr(s1, "nan") || strstr(s1, "inf")) snprintf(why, n, "state %s", s1);
    else ok = 1;
out:
    free(s0);
    free(sb0);
    free(s1);
    free(sb1);
    dpa_filter_free(b);
    return ok;
}

#endif
