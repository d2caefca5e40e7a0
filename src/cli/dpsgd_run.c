/* dpacct command-line front end: what `dpacct dpsgd` accounts a run as (see
 * dpsgd_run.h): the step counts, the spec of each sampling, and the words
 * that describe the run (text and JSON).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A training run of T steps, each adding N(0, (noise * C)^2) to the sum of
 * the per-example gradients clipped to norm C, with t = ceil(N / B) steps per
 * epoch where epochs are a unit, is the spec
 *   poisson (default):   repeat(T, poisson(q = B/N, gaussian(sigma = noise)))
 *                        under add/remove neighbours;
 *   without_replacement: repeat(T, sample(N, B, gaussian(noise, sensitivity 2)))
 *                        under replace-one neighbours (one replaced example
 *                        moves the clipped sum by up to 2C);
 *   random_allocation:   repeat(T / t, random_allocation(t, 1, gaussian(noise)))
 *                        under add/remove: each example in exactly one step of
 *                        each epoch, chosen uniformly (balls in bins);
 *   shuffle:             a bracket from two pairs (docs/sampling.md): the
 *                        upper bound repeat(ceil(T / t), gaussian(noise, 2))
 *                        under replace-one (no amplification), the lower bound
 *                        the exact privacy of Chua et al.'s pair of datasets,
 *                        repeat(floor(T / t), [poisson(q,] random_allocation(
 *                        t', 1, gaussian(noise, 2))[)]) with t' = floor(N / B)
 *                        complete batches and q = t' B / N (the partial batch's
 *                        output left out: a post-processing, so still a lower
 *                        bound). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dpsgd_run.h"

/* The library's step count (dpa_dpsgd_steps: ceil with the 1e-9 snap,
 * computed exactly), shared with the dpsgd spec leaf. */
unsigned long long cli_dpsgd_steps(double epochs, unsigned long long n, unsigned long long b)
{
    return (unsigned long long)dpa_dpsgd_steps(epochs, (double)n, (double)b);
}

static unsigned long long ceil_div(unsigned long long a, unsigned long long b)
{
    return a / b + (a % b != 0);
}

static int per_epoch(const run_desc *r)
{
    return r->sampling == CLI_SAMPLING_RA || r->sampling == CLI_SAMPLING_SHUFFLE;
}

unsigned long long dpsgd_unit(const run_desc *r)
{
    return per_epoch(r) && r->b ? ceil_div(r->n, r->b) : 1;
}

int dpsgd_steps_from_epochs(run_desc *r)
{
    char e[CLI_NUM_BUF];
    cli_format_shortest(e, sizeof e, r->epochs);
    if (!per_epoch(r)) {
        r->t = cli_dpsgd_steps(r->epochs, r->n, r->b);
        if (r->t == 0)
            return cli_fail(CLI_EXIT_USAGE, "dpsgd: %s epochs of %llu examples in batches of %llu is more than "
                            "1e15 steps", e, r->n, r->b);
        return CLI_EXIT_OK;
    }
    unsigned long long u = dpsgd_unit(r);
    if (r->epochs != floor(r->epochs))
        return cli_fail(CLI_EXIT_USAGE, "dpsgd: --sampling %s takes whole epochs (each epoch visits every "
                        "example once), got --epochs %s", dpsgd_sampling_name(r), e);
    if (r->epochs > (double)(CLI_MAX_DPSGD_COUNT / u))
        return cli_fail(CLI_EXIT_USAGE, "dpsgd: %s epochs of %llu steps is more than 1e15 steps", e, u);
    r->t = (unsigned long long)r->epochs * u;
    return CLI_EXIT_OK;
}

int dpsgd_check_steps(const run_desc *r)
{
    unsigned long long u = dpsgd_unit(r);
    if (r->sampling == CLI_SAMPLING_RA && r->t % u != 0)
        return cli_fail(CLI_EXIT_USAGE, "dpsgd: --sampling random_allocation takes whole epochs: --steps must be "
                        "a multiple of ceil(N / B) = %llu steps per epoch, got %llu", u, r->t);
    return CLI_EXIT_OK;
}

/* The Gaussian step event with the noise (or "?") and the sensitivity. */
static void gaussian_text(char *buf, size_t size, const run_desc *r, int noise_q, int sensitivity)
{
    char sigma[CLI_NUM_BUF];
    if (noise_q)
        snprintf(sigma, sizeof sigma, "\"?\"");
    else
        cli_format_shortest(sigma, sizeof sigma, r->noise);
    snprintf(buf, size, "{\"gaussian\": {\"sigma\": %s, \"sensitivity\": %d}}", sigma, sensitivity);
}

int dpsgd_spec_text(char *buf, size_t size, const run_desc *r, int noise_q, int count_q, int which)
{
    char g[CLI_NUM_BUF + 64], count[32], rate[CLI_NUM_BUF];
    unsigned long long u = dpsgd_unit(r), c = r->t;
    if (r->sampling == CLI_SAMPLING_RA)
        c = r->t / u;
    else if (r->sampling == CLI_SAMPLING_SHUFFLE)
        c = which == RUN_SPEC_LOWER ? r->t / u : ceil_div(r->t, u);
    if (count_q)
        snprintf(count, sizeof count, "\"?\"");
    else
        snprintf(count, sizeof count, "%llu", c);
    if (!count_q && c == 0) {
        buf[0] = '\0';
        return 0;
    }
    switch (r->sampling) {
    case CLI_SAMPLING_WOR:
        gaussian_text(g, sizeof g, r, noise_q, 2);
        snprintf(buf, size,
                 "{\"repeat\": {\"count\": %s, \"event\": {\"sample\": {\"n\": %llu, \"m\": %llu, \"event\": %s}}}, "
                 "\"neighboring\": \"replace\"}", count, r->n, r->b, g);
        return 1;
    case CLI_SAMPLING_RA:
        gaussian_text(g, sizeof g, r, noise_q, 1);
        snprintf(buf, size,
                 "{\"repeat\": {\"count\": %s, \"event\": {\"random_allocation\": {\"steps\": %llu, \"selected\": 1, "
                 "\"event\": %s}}}, \"neighboring\": \"add_remove\"}", count, u, g);
        return 1;
    case CLI_SAMPLING_SHUFFLE:
        gaussian_text(g, sizeof g, r, noise_q, 2);
        if (which == RUN_SPEC_MAIN) {
            snprintf(buf, size, "{\"repeat\": {\"count\": %s, \"event\": %s}, \"neighboring\": \"replace\"}", count, g);
            return 1;
        }
        {
            unsigned long long full = r->n / r->b; /* complete batches of an epoch */
            char ra[2 * CLI_NUM_BUF + 160];
            snprintf(ra, sizeof ra, "{\"random_allocation\": {\"steps\": %llu, \"selected\": 1, \"event\": %s}}",
                     full, g);
            if (full * r->b == r->n) {
                snprintf(buf, size, "{\"repeat\": {\"count\": %s, \"event\": %s}, \"neighboring\": \"add_remove\"}",
                         count, ra);
                return 1;
            }
            cli_format_shortest(rate, sizeof rate, (double)(full * r->b) / (double)r->n);
            snprintf(buf, size,
                     "{\"repeat\": {\"count\": %s, \"event\": {\"poisson\": {\"rate\": %s, \"event\": %s}}}, "
                     "\"neighboring\": \"add_remove\"}", count, rate, ra);
            return 1;
        }
    default:
        gaussian_text(g, sizeof g, r, noise_q, 1);
        cli_format_shortest(rate, sizeof rate, (double)r->b / (double)r->n);
        snprintf(buf, size,
                 "{\"repeat\": {\"count\": %s, \"event\": {\"poisson\": {\"rate\": %s, \"event\": %s}}}, "
                 "\"neighboring\": \"add_remove\"}", count, rate, g);
        return 1;
    }
}

char *dpsgd_canonical_spec(const run_desc *r, int which)
{
    char text[SPEC_BUF];
    dpa_error err;
    dpa_spec *s;
    char *out;
    if (!dpsgd_spec_text(text, sizeof text, r, 0, 0, which))
        return NULL;
    dpa_error_clear(&err);
    s = dpa_spec_from_json(text, &err);
    if (!s)
        return NULL;
    out = dpa_spec_to_json(s);
    dpa_spec_free(s);
    return out;
}

/* ----------------------------------------------------------- wording --- */

const char *dpsgd_sampling_name(const run_desc *r)
{
    switch (r->sampling) {
    case CLI_SAMPLING_WOR: return "without_replacement";
    case CLI_SAMPLING_RA: return "random_allocation";
    case CLI_SAMPLING_SHUFFLE: return "shuffle";
    default: return "poisson";
    }
}

const char *dpsgd_neighboring(const run_desc *r)
{
    return r->sampling == CLI_SAMPLING_WOR || r->sampling == CLI_SAMPLING_SHUFFLE ? "replace" : "add_remove";
}

unsigned long long dpsgd_whole_epochs(unsigned long long t, unsigned long long b, unsigned long long n)
{
#if defined(__SIZEOF_INT128__)
    __extension__ typedef unsigned __int128 u128;
    return (unsigned long long)((u128)t * b / n);
#else
    return (unsigned long long)floorl((long double)t * (long double)b / (long double)n);
#endif
}

void dpsgd_print_sampling(FILE *f, const run_desc *r)
{
    char q[CLI_NUM_BUF];
    unsigned long long u = dpsgd_unit(r);
    switch (r->sampling) {
    case CLI_SAMPLING_WOR:
        fprintf(f, "sampling: without_replacement: every step trains on exactly B = %llu of the N = %llu "
                "examples, drawn uniformly and independently of the other steps; replace-one neighbours "
                "(sensitivity 2C)\n", r->b, r->n);
        return;
    case CLI_SAMPLING_RA:
        cli_format(q, sizeof q, (double)r->n / (double)u, 6, DPA_ROUND_NEAREST);
        fprintf(f, "sampling: random_allocation (balls in bins): each example takes part in exactly one of the "
                "%llu = ceil(N / B) steps of each epoch, chosen uniformly at random (expected batch N / %llu = %s); "
                "add/remove neighbours\n", u, u, q);
        return;
    case CLI_SAMPLING_SHUFFLE:
        fprintf(f, "sampling: shuffle: one random permutation of the N = %llu examples per epoch, cut into %llu "
                "batches of B = %llu", r->n, u, r->b);
        if (r->n % r->b) fprintf(f, " (the last of %llu)", r->n % r->b);
        fprintf(f, "; replace-one neighbours (sensitivity 2C)\nbracket: %s;\n         %s\n", SHUFFLE_UPPER_NOTE,
                SHUFFLE_LOWER_NOTE);
        return;
    default:
        cli_format_shortest(q, sizeof q, (double)r->b / (double)r->n);
        fprintf(f, "sampling: poisson: every step keeps each example independently with probability "
                "q = B/N = %s; add/remove neighbours\n", q);
    }
}

/* "steps: T = 14063 = ceil(60 * 60000 / 256) (step count: ceil of epochs * N / B)" */
void dpsgd_print_steps(FILE *f, const run_desc *r, const char *how)
{
    char e[CLI_NUM_BUF], ep[CLI_NUM_BUF];
    unsigned long long u = dpsgd_unit(r);
    if (per_epoch(r)) {
        if (r->t % u == 0)
            fprintf(f, "steps: T = %llu = %llu epochs * %llu steps   (steps per epoch: ceil(N / B) = "
                    "ceil(%llu / %llu))\n", r->t, r->t / u, u, r->n, r->b);
        else
            fprintf(f, "steps: T = %llu   (%s; %llu whole epochs of ceil(N / B) = %llu steps and %llu steps "
                    "more)\n", r->t, how, r->t / u, u, r->t % u);
        return;
    }
    if (r->epochs > 0) {
        cli_format_shortest(e, sizeof e, r->epochs);
        fprintf(f, "steps: T = %llu = ceil(%s * %llu / %llu)   (%s epochs; step count: ceil(epochs * N / B))\n",
                r->t, e, r->n, r->b, e);
        return;
    }
    cli_format(ep, sizeof ep, (double)r->t * (double)r->b / (double)r->n, 6, DPA_ROUND_DOWN);
    fprintf(f, "steps: T = %llu   (%s; %s epochs = T * B / N, %llu whole)\n", r->t, how, ep,
            dpsgd_whole_epochs(r->t, r->b, r->n));
}

void dpsgd_print_run_line(FILE *f, const run_desc *r, int show_noise)
{
    char s[CLI_NUM_BUF];
    fprintf(f, "DP-SGD: N = %llu examples, batch size B = %llu", r->n, r->b);
    if (show_noise) {
        cli_format_shortest(s, sizeof s, r->noise);
        fprintf(f, ", noise multiplier %s", s);
    }
    fputc('\n', f);
}

/* The run's fields in JSON: dataset_size, batch_size, sample_rate, steps,
 * epochs, whole_epochs, step_count, noise_multiplier, sampling,
 * neighboring, spec (the spec object), and for random_allocation and
 * shuffle steps_per_epoch; for shuffle also lower_spec and bracket. */
void dpsgd_put_run(json_t *o, const run_desc *r, const char *step_count, int *ok)
{
    char *spec = dpsgd_canonical_spec(r, RUN_SPEC_MAIN);
    json_t *sj = spec ? json_loads(spec, 0, NULL) : NULL;
    free(spec);
    unsigned long long u = dpsgd_unit(r);
#define PUT(k, v) do { json_t *v_ = (v); if (!v_ || json_object_set_new(o, (k), v_)) *ok = 0; } while (0)
    PUT("dataset_size", json_integer((json_int_t)r->n));
    PUT("batch_size", json_integer((json_int_t)r->b));
    PUT("sample_rate", json_real((double)r->b / (double)r->n));
    PUT("steps", json_integer((json_int_t)r->t));
    if (per_epoch(r)) {
        PUT("steps_per_epoch", json_integer((json_int_t)u));
        PUT("epochs", json_real((double)r->t / (double)u));
        PUT("whole_epochs", json_integer((json_int_t)(r->t / u)));
    } else {
        PUT("epochs", json_real(r->epochs > 0 ? r->epochs : (double)r->t * (double)r->b / (double)r->n));
        PUT("whole_epochs", json_integer((json_int_t)dpsgd_whole_epochs(r->t, r->b, r->n)));
    }
    PUT("step_count", json_string(step_count));
    PUT("noise_multiplier", json_real(r->noise));
    PUT("sampling", json_string(dpsgd_sampling_name(r)));
    PUT("neighboring", json_string(dpsgd_neighboring(r)));
    PUT("spec", sj);
    if (r->sampling == CLI_SAMPLING_SHUFFLE) {
        char *ls = dpsgd_canonical_spec(r, RUN_SPEC_LOWER);
        json_t *lj = ls ? json_loads(ls, 0, NULL) : json_null();
        free(ls);
        PUT("lower_spec", lj);
        json_t *b = json_object();
        if (b && (json_object_set_new(b, "upper", json_string(SHUFFLE_UPPER_NOTE)) ||
                  json_object_set_new(b, "lower", json_string(SHUFFLE_LOWER_NOTE)))) {
            json_decref(b);
            b = NULL;
        }
        PUT("bracket", b);
    }
#undef PUT
}
