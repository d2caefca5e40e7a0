/* dpacct — DP-SGD runs: the step count of a run given in epochs, and the
 * expansion of a run into its event tree (repeat of a subsampled Gaussian),
 * which keeps the run so that the writer can give the dpsgd leaf back.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <math.h>
#include <stdlib.h>
#include "event_internal.h"

/* ---- dpsgd runs ---- */

#if defined(__SIZEOF_INT128__)
__extension__ typedef unsigned __int128 dpa_u128;

/* ceil(epochs n / b) with the 1e-9 snap, exactly (also the CLI's `dpacct
 * dpsgd` step count, through dpa_dpsgd_steps). */
static unsigned long long dpsgd_steps_u(double epochs, unsigned long long n, unsigned long long b,
                                        unsigned long long max)
{
    int k;
    double m = frexp(epochs, &k);
    unsigned long long odd;
    dpa_u128 p, d, q, r, near, dist, scale;
    if (!(epochs > 0) || !isfinite(epochs) || n == 0 || b == 0)
        return 0;
    if (epochs * (double)n / (double)b > 2.0 * (double)max)
        return 0;
    odd = (unsigned long long)ldexp(m, 53);
    k -= 53;
    while (!(odd & 1)) {
        odd >>= 1;
        k++;
    }
    p = (dpa_u128)odd * n;
    d = b;
    if (k > 0) {
        p <<= k;
    } else if (k < 0) {
        int bits = 0;
        for (unsigned long long v = b; v; v >>= 1)
            bits++;
        if (bits - k > 127)
            return 1;
        d <<= -k;
    }
    q = p / d;
    r = p % d;
    if (2 * r < d) {
        near = q;
        dist = r;
    } else {
        near = q + 1;
        dist = d - r;
    }
    scale = (p > d ? p : d) / 1000000000u;
    if (dist <= scale)
        q = near;
    else if (r != 0)
        q += 1;
    if (q < 1)
        q = 1;
    return q > max ? 0 : (unsigned long long)q;
}
#else
static unsigned long long dpsgd_steps_u(double epochs, unsigned long long n, unsigned long long b,
                                        unsigned long long max)
{
    long double x = (long double)epochs * (long double)n / (long double)b, r = roundl(x);
    if (!(x > 0) || x > (long double)max + 1)
        return 0;
    if (fabsl(x - r) <= 1e-9L * (x > 1 ? x : 1))
        x = r;
    else
        x = ceill(x);
    if (x < 1)
        x = 1;
    return x > (long double)max ? 0 : (unsigned long long)x;
}
#endif

static int is_count(double v)
{
    return v >= 1 && v <= DPA_MAX_COUNT && v == floor(v);
}

double dpa_dpsgd_steps(double epochs, double dataset_size, double batch_size)
{
    if (!is_count(dataset_size) || !is_count(batch_size))
        return 0;
    return (double)dpsgd_steps_u(epochs, (unsigned long long)dataset_size, (unsigned long long)batch_size,
                                 (unsigned long long)DPA_MAX_COUNT);
}

/* random_allocation: repeat(E, random_allocation(t, 1, gaussian(noise, 1)))
 * with t = ceil(N / B) steps per epoch and E whole epochs. */
static dpa_event *expand_random_allocation(const dpa_ev_dpsgd *d, dpa_error *err)
{
    unsigned long long n = (unsigned long long)d->n, b = (unsigned long long)d->b;
    double t = (double)(n / b + (n % b != 0)), epochs;
    dpa_event *g, *step;
    if (d->epochs > 0) {
        if (d->epochs != floor(d->epochs))
            return dpa_error_set(err, DPA_EINVAL, "dpsgd: sampling \"random_allocation\" takes whole epochs (each "
                                 "epoch visits every example once), got epochs %.17g", d->epochs), NULL;
        epochs = d->epochs;
    } else {
        if (fmod(d->steps, t) != 0)
            return dpa_error_set(err, DPA_EINVAL, "dpsgd: sampling \"random_allocation\" takes whole epochs: steps "
                                 "must be a multiple of ceil(dataset_size / batch_size) = %.17g, got %.17g", t,
                                 d->steps), NULL;
        epochs = d->steps / t;
    }
    if (!(epochs * t <= DPA_MAX_COUNT))
        return dpa_error_set(err, DPA_EINVAL, "dpsgd: %.17g epochs of %.17g steps is more than 1e15 steps", epochs,
                             t), NULL;
    g = dpa_event_gaussian(d->noise, 1, err);
    if (!g)
        return NULL;
    step = dpa_event_random_allocation(t, 1, g, err);
    return step ? dpa_event_repeat(epochs, step, err) : NULL;
}

dpa_event *dpa_ev_dpsgd_expand(const dpa_ev_dpsgd *d, dpa_error *err)
{
    double t = d->epochs > 0 ? dpa_dpsgd_steps(d->epochs, d->n, d->b) : d->steps;
    int wor = d->sampling == DPA_DPSGD_WITHOUT_REPLACEMENT;
    dpa_event *g, *step, *e;
    if (!(t >= 1)) {
        dpa_error_set(err, DPA_EINVAL,
                      "dpsgd: epochs %.17g of %.17g examples in batches of %.17g is more than %.17g steps",
                      d->epochs, d->n, d->b, DPA_MAX_COUNT);
        return NULL;
    }
    if (d->sampling == DPA_DPSGD_RANDOM_ALLOCATION) {
        e = expand_random_allocation(d, err);
    } else {
        g = dpa_event_gaussian(d->noise, wor ? 2 : 1, err);
        if (!g)
            return NULL;
        step = wor ? dpa_event_sample(d->n, d->b, g, err) : dpa_event_poisson(d->b / d->n, g, err);
        if (!step)
            return NULL;
        e = dpa_event_repeat(t, step, err);
    }
    if (!e)
        return NULL;
    if (!(e->dpsgd = malloc(sizeof *e->dpsgd))) {
        dpa_event_free(e);
        dpa_error_set(err, DPA_ENOMEM, "dpsgd: out of memory");
        return NULL;
    }
    *e->dpsgd = *d;
    return e;
}

dpa_event *dpa_event_dpsgd(double dataset_size, double batch_size, double epochs, double steps, double noise,
                           dpa_dpsgd_sampling sampling, dpa_error *err)
{
    dpa_ev_dpsgd d = {dataset_size, batch_size, epochs, steps, noise, (int)sampling};
    if (!is_count(dataset_size))
        return dpa_error_set(err, DPA_EINVAL, "dpsgd: dataset_size must be an integer in [1, 1e15], got %.17g",
                             dataset_size), NULL;
    if (!is_count(batch_size) || batch_size > dataset_size)
        return dpa_error_set(err, DPA_EINVAL,
                             "dpsgd: batch_size must be an integer in [1, dataset_size = %.17g], got %.17g",
                             dataset_size, batch_size), NULL;
    if ((epochs != 0) == (steps != 0))
        return dpa_error_set(err, DPA_EINVAL, "dpsgd: give exactly one of epochs and steps (the other 0)"), NULL;
    if (epochs != 0 && !(epochs > 0 && isfinite(epochs)))
        return dpa_error_set(err, DPA_EINVAL, "dpsgd: epochs must be > 0 and finite, got %.17g", epochs), NULL;
    if (steps != 0 && !is_count(steps))
        return dpa_error_set(err, DPA_EINVAL, "dpsgd: steps must be an integer in [1, 1e15], got %.17g", steps),
               NULL;
    if (!(noise > 0 && isfinite(noise)))
        return dpa_error_set(err, DPA_EINVAL, "dpsgd: noise must be > 0 and finite, got %.17g", noise), NULL;
    if (sampling != DPA_DPSGD_POISSON && sampling != DPA_DPSGD_WITHOUT_REPLACEMENT &&
        sampling != DPA_DPSGD_RANDOM_ALLOCATION)
        return dpa_error_set(err, DPA_EINVAL, "dpsgd: unknown sampling %d", (int)sampling), NULL;
    return dpa_ev_dpsgd_expand(&d, err);
}

int dpa_event_is_dpsgd(const dpa_event *e)
{
    return e && e->dpsgd != NULL;
}
