/* eps(delta) of one spec repeated several times, in one pass where the PLD
 * method can (dpa_epsilon_counts, include/dpacct/accountant.h; the one-pass
 * composition is src/pld/counts.c), else count by count.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "dpacct/accountant.h"
#include "dpacct/event.h"
#include "acct/accountant_internal.h"
#include "model/method.h"
#include "pld/pld_acct.h"

/* An accountant of repeat(count, step) under opt. */
static dpa_accountant *repeated(const dpa_spec *step, double count, const dpa_options *opt, dpa_error *err)
{
    dpa_event *e = dpa_event_copy(dpa_spec_root(step));
    if (!e) {
        dpa_error_set(err, DPA_ENOMEM, "out of memory");
        return NULL;
    }
    dpa_event *r = dpa_event_repeat(count, e, err);
    if (!r) return NULL;
    dpa_spec *s = dpa_spec_new(r, dpa_spec_neighboring(step), err);
    if (!s) return NULL;
    dpa_accountant *a = dpa_accountant_new(s, opt, err);
    dpa_spec_free(s);
    return a;
}

static dpa_status single(const dpa_spec *step, double count, double delta, const dpa_options *opt, dpa_result *out,
                         dpa_error *err)
{
    dpa_accountant *a = repeated(step, count, opt, err);
    if (!a) return err->status ? err->status : DPA_ENOMEM;
    dpa_status st = dpa_accountant_epsilon(a, delta, out, err);
    dpa_accountant_free(a);
    return st;
}

dpa_status dpa_epsilon_counts(const dpa_spec *step, const double *counts, size_t n, double delta,
                              const dpa_options *opt, dpa_result *out, dpa_error *err)
{
    dpa_error local;
    if (!err) err = &local; /* the constructors' status is read from it */
    if (!step || !counts || !out) return dpa_error_set(err, DPA_EINVAL, "epsilon_counts: NULL argument");
    if (n == 0) return dpa_error_set(err, DPA_EINVAL, "epsilon_counts: no counts (n = 0)");
    if (!(delta > 0 && delta < 1)) return dpa_error_set(err, DPA_EINVAL, "delta must be in (0, 1), got %g", delta);
    double K = 0;
    size_t iK = 0;
    for (size_t i = 0; i < n; i++) {
        double c = counts[i];
        if (!(c >= 1 && c <= DPA_MAX_COUNT && c == floor(c)))
            return dpa_error_set(err, DPA_EINVAL, "counts[%zu]: must be an integer in [1, %g], got %g", i,
                                 DPA_MAX_COUNT, c);
        if (c > K) {
            K = c;
            iK = i;
        }
    }
    unsigned char *done = calloc(n, 1);
    if (!done) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    dpa_accountant *a = repeated(step, K, opt, err);
    dpa_status st = a ? dpa_accountant_epsilon(a, delta, &out[iK], err) : (err->status ? err->status : DPA_ENOMEM);
    if (!st) {
        for (size_t i = 0; i < n; i++)
            if (counts[i] == K) {
                out[i] = out[iK];
                done[i] = 1;
            }
        /* the one pass: only where the accountant's own answer came from the PLD grids */
        if (dpa_accountant_ops(a) == &dpa_method_pld_ops && dpa_accountant_leafset(a)->n == 1 &&
            !dpa_accountant_leafset(a)->nonprivate_path[0] && out[iK].upper_source == DPA_SOURCE_METHOD &&
            out[iK].accuracy_met)
            dpa_pld_epsilon_counts(dpa_accountant_state(a), counts, n, delta, out, done);
    }
    dpa_accountant_free(a);
    for (size_t i = 0; i < n && !st; i++) {
        if (done[i]) continue;
        st = single(step, counts[i], delta, opt, &out[i], err);
        /* the same count again: the same answer */
        for (size_t j = i + 1; j < n && !st; j++)
            if (counts[j] == counts[i]) {
                out[j] = out[i];
                done[j] = 1;
            }
    }
    free(done);
    return st;
}
