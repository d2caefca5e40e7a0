/* The ledger's clock and its times: the current time (or the test hook
 * DPACCT_LEDGER_NOW), ISO 8601 UTC with microseconds to and from seconds.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ledger/ledger_internal.h"

double dpa_ledger_now_seconds(void)
{
    const char *hook = getenv("DPACCT_LEDGER_NOW");
    struct timespec ts;
    if (hook && *hook) {
        char *end;
        double t = strtod(hook, &end);
        if (!*end && t >= 0)
            return t;
    }
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

double dpa_ledger_time_seconds(const char *iso)
{
    struct tm tm;
    int us = 0, used = 0;
    memset(&tm, 0, sizeof tm);
    if (!iso || sscanf(iso, "%4d-%2d-%2dT%2d:%2d:%2d.%6dZ%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                       &tm.tm_min, &tm.tm_sec, &us, &used) != 7 || iso[used])
        return -1;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return (double)timegm(&tm) + us * 1e-6;
}

void dpa_ledger_format_time(double t, char buf[40])
{
    time_t s = (time_t)t;
    struct tm tm;
    char day[24];
    gmtime_r(&s, &tm);
    strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, 40, "%.19s.%06uZ", day, (unsigned)((t - (double)s) * 1e6) % 1000000u);
}
