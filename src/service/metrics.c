/* The budget service's metrics in the Prometheus text format 0.0.4: atomic
 * counters of decisions by outcome and of HTTP answers by status, a
 * histogram of decision latency (queue wait plus the batch), and, read when
 * /metrics is asked, every unit's remaining budget (each numeric member of
 * its "remaining" object) from the ledger's units pages.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "service_internal.h"

/* upper bounds of the latency buckets, seconds (the last is +Inf) */
static const double lat_le[SVC_LAT_BUCKETS - 1] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                   0.1,    0.25,  0.5,    1,     2.5,  5};
/* the statuses counted one by one (the last slot: any other) */
static const unsigned codes[SVC_CODES - 1] = {200, 201, 204, 400, 401, 403, 404, 405,
                                              409, 413, 422, 423, 500, 503, 431};
static const char *const outcome_name[SVC_OUT_N] = {"accepted", "rejected", "bad_input", "error"};

void svc_metrics_decision(svc_metrics *m, int outcome, double seconds)
{
    int b = 0;
    atomic_fetch_add(&m->decisions[outcome], 1);
    if (outcome == SVC_OUT_BAD_INPUT && seconds == 0)
        return; /* refused before it was queued: no latency */
    while (b < SVC_LAT_BUCKETS - 1 && seconds > lat_le[b])
        b++;
    atomic_fetch_add(&m->lat_bucket[b], 1);
    atomic_fetch_add(&m->lat_sum_ns, (long long)(seconds * 1e9));
    atomic_fetch_add(&m->lat_count, 1);
}

void svc_metrics_http(svc_metrics *m, unsigned code)
{
    int i = 0;
    while (i < SVC_CODES - 1 && codes[i] != code)
        i++;
    atomic_fetch_add(&m->http[i], 1);
}

/* A label value escaped as the text format asks (\\, \", \n). */
static void put_label(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\' || *s == '"')
            fprintf(f, "\\%c", *s);
        else if (*s == '\n')
            fputs("\\n", f);
        else
            fputc(*s, f);
    }
}

/* The units' remaining budgets; the number of units, or -1 if the ledger
 * could not be read (then no unit lines). */
static long units_remaining(FILE *f, dpa_ledger *l)
{
    char *after = NULL;
    long n = 0;
    fputs("# HELP dpacct_unit_remaining The unit's remaining budget, per parameter.\n"
          "# TYPE dpacct_unit_remaining gauge\n", f);
    for (;;) {
        char *json = NULL;
        dpa_error err = {0};
        json_t *page, *units, *u, *next;
        size_t i;
        if (dpa_ledger_units_page_json(l, NULL, after, 1000, &json, &err) != DPA_OK) {
            free(after);
            return -1;
        }
        page = json_loads(json, 0, NULL);
        free(json);
        units = json_object_get(page, "units");
        json_array_foreach(units, i, u) {
            const char *name = json_string_value(json_object_get(u, "unit"));
            const char *tenant = json_string_value(json_object_get(u, "tenant"));
            const char *k;
            json_t *v;
            n++;
            json_object_foreach(json_object_get(u, "remaining"), k, v) {
                if (!json_is_number(v) || !name)
                    continue;
                fputs("dpacct_unit_remaining{unit=\"", f);
                put_label(f, name);
                fputs("\",tenant=\"", f);
                put_label(f, tenant ? tenant : "");
                fputs("\",parameter=\"", f);
                put_label(f, k);
                fprintf(f, "\"} %.17g\n", json_number_value(v));
            }
        }
        next = json_object_get(page, "next");
        free(after);
        after = json_is_string(next) ? strdup(json_string_value(next)) : NULL;
        json_decref(page);
        if (!after)
            return n;
    }
}

char *svc_metrics_text(svc_metrics *m, svc_queue *q, dpa_ledger *l)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    long long cum = 0;
    long units;
    int i;
    if (!f)
        return NULL;
    fputs("# HELP dpacct_up 1 while the service runs.\n# TYPE dpacct_up gauge\ndpacct_up 1\n", f);
    fputs("# HELP dpacct_decisions_total Decisions on requests, by outcome.\n"
          "# TYPE dpacct_decisions_total counter\n", f);
    for (i = 0; i < SVC_OUT_N; i++)
        fprintf(f, "dpacct_decisions_total{outcome=\"%s\"} %lld\n", outcome_name[i],
                (long long)atomic_load(&m->decisions[i]));
    fputs("# HELP dpacct_http_requests_total HTTP requests answered, by status.\n"
          "# TYPE dpacct_http_requests_total counter\n", f);
    for (i = 0; i < SVC_CODES; i++) {
        long long c = atomic_load(&m->http[i]);
        if (c == 0)
            continue;
        if (i < SVC_CODES - 1)
            fprintf(f, "dpacct_http_requests_total{code=\"%u\"} %lld\n", codes[i], c);
        else
            fprintf(f, "dpacct_http_requests_total{code=\"other\"} %lld\n", c);
    }
    fputs("# HELP dpacct_decision_seconds Time from queueing a decision to its durable commit.\n"
          "# TYPE dpacct_decision_seconds histogram\n", f);
    for (i = 0; i < SVC_LAT_BUCKETS; i++) {
        cum += atomic_load(&m->lat_bucket[i]);
        if (i < SVC_LAT_BUCKETS - 1)
            fprintf(f, "dpacct_decision_seconds_bucket{le=\"%g\"} %lld\n", lat_le[i], cum);
        else
            fprintf(f, "dpacct_decision_seconds_bucket{le=\"+Inf\"} %lld\n", cum);
    }
    fprintf(f, "dpacct_decision_seconds_sum %.9f\n", 1e-9 * (double)atomic_load(&m->lat_sum_ns));
    fprintf(f, "dpacct_decision_seconds_count %lld\n", (long long)atomic_load(&m->lat_count));
    fputs("# HELP dpacct_commit_batches_total Group commits (dpa_ledger_request_batch calls).\n"
          "# TYPE dpacct_commit_batches_total counter\n", f);
    fprintf(f, "dpacct_commit_batches_total %lld\n", (long long)atomic_load(&q->batches));
    fputs("# HELP dpacct_commit_batched_total Decisions committed by the group commits.\n"
          "# TYPE dpacct_commit_batched_total counter\n", f);
    fprintf(f, "dpacct_commit_batched_total %lld\n", (long long)atomic_load(&q->batched));
    units = units_remaining(f, l);
    fputs("# HELP dpacct_units Units in the ledger (-1: it could not be read).\n# TYPE dpacct_units gauge\n", f);
    fprintf(f, "dpacct_units %ld\n", units);
    fclose(f);
    return buf;
}
