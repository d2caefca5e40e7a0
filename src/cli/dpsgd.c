/* dpacct command-line front end: `dpacct dpsgd`, DP-SGD in its own terms.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A training run of T steps, each adding N(0, (noise * C)^2) to the sum of
 * the per-example gradients clipped to norm C, is the spec
 *   poisson (default):   repeat(T, poisson(q = B/N, gaussian(sigma = noise)))
 *                        under add/remove neighbours;
 *   without_replacement: repeat(T, sample(N, B, gaussian(noise, sensitivity 2)))
 *                        under replace-one neighbours (one replaced example
 *                        moves the clipped sum by up to 2C);
 * the conventions of the Python package (python/dpacct/dpsgd.py).  With
 * --epochs E the step count is T = ceil(E N / B), computed exactly (a quotient
 * within 1e-9, relative, of an integer counts as that integer).  The command
 * builds that spec and runs it through the library as `dpacct epsilon` would
 * (so the two agree bit for bit), or calibrates one quantity:
 *   --noise       a template with sigma "?", dpa_calibrate (smallest);
 *   --epochs/--steps  a template with count "?", dpa_calibrate (largest T);
 *   --batch-size  an integer search over B (the step count moves with B
 *                 when the epochs are fixed, so no template has B as its
 *                 one parameter): docs/cli.md says what it assumes. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

enum { SOLVE_NONE = 0, SOLVE_NOISE, SOLVE_STEPS, SOLVE_BATCH };

/* The run, as far as it is known. */
typedef struct run_desc {
    unsigned long long n, b, t; /* dataset size, batch size, steps (0: unknown) */
    double epochs;              /* --epochs (0: not given) */
    double noise;               /* noise multiplier (0: unknown) */
    int wor;                    /* without replacement (also --sampling shuffle) */
} run_desc;

/* --------------------------------------------------------- step count --- */

/* The library's step count (dpa_dpsgd_steps: ceil with the 1e-9 snap,
 * computed exactly), shared with the dpsgd spec leaf. */
unsigned long long cli_dpsgd_steps(double epochs, unsigned long long n, unsigned long long b)
{
    return (unsigned long long)dpa_dpsgd_steps(epochs, (double)n, (double)b);
}

/* floor(t b / n) exactly. */
static unsigned long long whole_epochs(unsigned long long t, unsigned long long b, unsigned long long n)
{
#if defined(__SIZEOF_INT128__)
    __extension__ typedef unsigned __int128 u128;
    return (unsigned long long)((u128)t * b / n);
#else
    return (unsigned long long)floorl((long double)t * (long double)b / (long double)n);
#endif
}

/* ------------------------------------------------------------- specs --- */

/* The spec (or, with "?" for the noise or the count, the template) of the
 * run as JSON text.  noise_q / count_q: write "?" there. */
static void spec_text(char *buf, size_t size, const run_desc *r, int noise_q, int count_q)
{
    char sigma[CLI_NUM_BUF], rate[CLI_NUM_BUF], count[32];
    if (noise_q)
        snprintf(sigma, sizeof sigma, "\"?\"");
    else
        cli_format_shortest(sigma, sizeof sigma, r->noise);
    if (count_q)
        snprintf(count, sizeof count, "\"?\"");
    else
        snprintf(count, sizeof count, "%llu", r->t);
    if (r->wor) {
        snprintf(buf, size,
                 "{\"repeat\": {\"count\": %s, \"event\": {\"sample\": {\"n\": %llu, \"m\": %llu, "
                 "\"event\": {\"gaussian\": {\"sigma\": %s, \"sensitivity\": 2}}}}}, \"neighboring\": \"replace\"}",
                 count, r->n, r->b, sigma);
        return;
    }
    cli_format_shortest(rate, sizeof rate, (double)r->b / (double)r->n);
    snprintf(buf, size,
             "{\"repeat\": {\"count\": %s, \"event\": {\"poisson\": {\"rate\": %s, "
             "\"event\": {\"gaussian\": {\"sigma\": %s, \"sensitivity\": 1}}}}}, \"neighboring\": \"add_remove\"}",
             count, rate, sigma);
}

#define SPEC_BUF 512

/* The canonical JSON of the run's spec (malloc'd), NULL on failure. */
static char *canonical_spec(const run_desc *r)
{
    char text[SPEC_BUF];
    dpa_error err;
    dpa_spec *s;
    char *out;
    spec_text(text, sizeof text, r, 0, 0);
    dpa_error_clear(&err);
    s = dpa_spec_from_json(text, &err);
    if (!s)
        return NULL;
    out = dpa_spec_to_json(s);
    dpa_spec_free(s);
    return out;
}

/* ----------------------------------------------------------- wording --- */

static const char *sampling_name(const run_desc *r)
{
    return r->wor ? "without_replacement" : "poisson";
}

#define SHUFFLE_WARNING                                                                             \
    "--sampling shuffle is analysed as without_replacement: a batch of exactly B examples drawn "  \
    "independently at every step, not one random permutation per epoch cut into disjoint "        \
    "batches; shuffling can be less private than this analysis (Chua et al. 2024), and no "       \
    "accountant here covers it"

static void print_sampling(FILE *f, const cli_args *a, const run_desc *r)
{
    char q[CLI_NUM_BUF];
    if (r->wor) {
        fprintf(f, "sampling: without_replacement%s: every step trains on exactly B = %llu of the N = %llu "
               "examples, drawn uniformly and independently of the other steps; replace-one neighbours "
               "(sensitivity 2C)\n",
               a->sampling == CLI_SAMPLING_SHUFFLE ? " (given as shuffle)" : "", r->b, r->n);
        if (a->sampling == CLI_SAMPLING_SHUFFLE)
            fprintf(f, "note: %s\n", SHUFFLE_WARNING);
        return;
    }
    cli_format_shortest(q, sizeof q, (double)r->b / (double)r->n);
    fprintf(f, "sampling: poisson: every step keeps each example independently with probability "
           "q = B/N = %s; add/remove neighbours\n", q);
}

/* "steps: T = 14063 = ceil(60 * 60000 / 256) (step count: ceil of epochs * N / B)" */
static void print_steps(FILE *f, const run_desc *r, const char *how)
{
    char e[CLI_NUM_BUF], ep[CLI_NUM_BUF];
    if (r->epochs > 0) {
        cli_format_shortest(e, sizeof e, r->epochs);
        fprintf(f, "steps: T = %llu = ceil(%s * %llu / %llu)   (%s epochs; step count: ceil(epochs * N / B))\n",
               r->t, e, r->n, r->b, e);
        return;
    }
    cli_format(ep, sizeof ep, (double)r->t * (double)r->b / (double)r->n, 6, DPA_ROUND_DOWN);
    fprintf(f, "steps: T = %llu   (%s; %s epochs = T * B / N, %llu whole)\n", r->t, how, ep,
           whole_epochs(r->t, r->b, r->n));
}

static void print_run_line(FILE *f, const run_desc *r, int show_noise)
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
 * neighboring, spec (the spec object), warning. */
static void put_run(json_t *o, const cli_args *a, const run_desc *r, const char *step_count, int *ok)
{
    char *spec = canonical_spec(r);
    json_t *sj = spec ? json_loads(spec, 0, NULL) : NULL;
    free(spec);
#define PUT(k, v) do { json_t *v_ = (v); if (!v_ || json_object_set_new(o, (k), v_)) *ok = 0; } while (0)
    PUT("dataset_size", json_integer((json_int_t)r->n));
    PUT("batch_size", json_integer((json_int_t)r->b));
    PUT("sample_rate", json_real((double)r->b / (double)r->n));
    PUT("steps", json_integer((json_int_t)r->t));
    PUT("epochs", json_real(r->epochs > 0 ? r->epochs : (double)r->t * (double)r->b / (double)r->n));
    PUT("whole_epochs", json_integer((json_int_t)whole_epochs(r->t, r->b, r->n)));
    PUT("step_count", json_string(step_count));
    PUT("noise_multiplier", json_real(r->noise));
    PUT("sampling", json_string(sampling_name(r)));
    PUT("neighboring", json_string(r->wor ? "replace" : "add_remove"));
    PUT("spec", sj);
    if (a->sampling == CLI_SAMPLING_SHUFFLE)
        PUT("warning", json_string(SHUFFLE_WARNING));
#undef PUT
}

static const char *step_count_text(const run_desc *r, int solve)
{
    if (solve == SOLVE_STEPS)
        return "calibrated";
    return r->epochs > 0 ? "ceil(epochs * dataset_size / batch_size)" : "given";
}

/* ------------------------------------------------------ evaluation --- */

/* eps bounds of the run at delta (r complete). gdp: also the mu-GDP
 * bracket (NULL: not asked). */
static int evaluate(const cli_args *a, const run_desc *run, dpa_result *res, dpa_gdp_mu *g)
{
    char text[SPEC_BUF];
    dpa_error err;
    dpa_spec *spec;
    dpa_accountant *acc;
    dpa_status s;

    spec_text(text, sizeof text, run, 0, 0);
    dpa_error_clear(&err);
    spec = dpa_spec_from_json(text, &err);
    if (!spec)
        return cli_fail_status(DPA_EINVAL, &err);
    acc = dpa_accountant_new(spec, &a->opt, &err);
    dpa_spec_free(spec);
    if (!acc)
        return cli_fail_status(DPA_EINVAL, &err);
    cli_poison_result(res);
    dpa_error_clear(&err);
    s = dpa_accountant_epsilon(acc, a->delta, res, &err);
    if (s == DPA_OK && g) {
        dpa_error gerr;
        dpa_error_clear(&gerr);
        dpa_accountant_gdp_mu(acc, g, &gerr);
    }
    dpa_accountant_free(acc);
    if (s != DPA_OK)
        return cli_fail_status(s, &err);
    int rc = cli_check_result(res, 1);
    if (rc == CLI_EXIT_OK && g)
        rc = cli_check_gdp_mu(g);
    return rc;
}

static int too_many_steps(const run_desc *r)
{
    char e[CLI_NUM_BUF];
    cli_format_shortest(e, sizeof e, r->epochs);
    return cli_fail(CLI_EXIT_USAGE, "dpsgd: %s epochs of %llu examples in batches of %llu is more than "
                    "1e15 steps", e, r->n, r->b);
}

static int run_epsilon(const cli_args *a, run_desc *run)
{
    dpa_result res;
    dpa_gdp_mu g, *gp = a->gdp_mu ? &g : NULL;
    int rc = evaluate(a, run, &res, gp);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (a->json) {
        int ok = 1;
        json_t *o = cli_json_query(a, a->delta, &res, gp);
        if (!o)
            return cli_emit_json(NULL, 0);
        json_object_set_new(o, "query", json_string("dpsgd"));
        put_run(o, a, run, step_count_text(run, SOLVE_NONE), &ok);
        return cli_emit_json(o, ok);
    }
    /* the run's description goes between "at delta" and the method */
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem)
        return cli_fail(CLI_EXIT_FAIL, "out of memory");
    print_run_line(mem, run, 1);
    print_steps(mem, run, "given with --steps");
    print_sampling(mem, a, run);
    if (fclose(mem) != 0 || !buf) {
        free(buf);
        return cli_fail(CLI_EXIT_FAIL, "out of memory");
    }
    cli_human_epsilon(a, a->delta, &res, gp, buf);
    free(buf);
    return CLI_EXIT_OK;
}

/* ---------------------------------------------------- calibration --- */

typedef struct calib_out {
    double value;        /* noise, steps or batch size */
    double infeasible;   /* NAN: none */
    dpa_result at;       /* bounds at value */
    int evaluations;
} calib_out;

/* The run with batch size b: its step count (with --epochs it moves with b). */
static int set_batch(run_desc *run, unsigned long long b)
{
    run->b = b;
    if (run->epochs > 0) {
        run->t = cli_dpsgd_steps(run->epochs, run->n, b);
        if (run->t == 0)
            return too_many_steps(run);
    }
    return CLI_EXIT_OK;
}

/* Feasibility of the run with the batch size (SOLVE_BATCH) or the step
 * count (SOLVE_STEPS) set to v. */
static int feasible_at(const cli_args *a, run_desc *run, int solve, unsigned long long v, dpa_result *res,
                       int *ok, int *evals)
{
    int rc = CLI_EXIT_OK;
    if (solve == SOLVE_BATCH)
        rc = set_batch(run, v);
    else
        run->t = v;
    if (rc == CLI_EXIT_OK)
        rc = evaluate(a, run, res, NULL);
    if (rc != CLI_EXIT_OK)
        return rc;
    ++*evals;
    *ok = res->upper <= a->epsilon;
    return CLI_EXIT_OK;
}

/* Bisection of the integer parameter `solve` between a feasible *good and
 * an infeasible *bad (0: none, nothing to bisect) until they are adjacent;
 * with geometric, geometric midpoints while the ends are more than a
 * factor 4 apart.  *rgood: the result at *good. */
static int bisect_count(const cli_args *a, run_desc *run, int solve, int geometric, unsigned long long *good,
                        unsigned long long *bad, dpa_result *rgood, int *evals)
{
    dpa_result res;
    int ok, rc;
    while (*bad != 0 && *bad - *good > 1) {
        unsigned long long mid = *good + (*bad - *good) / 2;
        if (geometric && *bad / *good > 4) {
            mid = (unsigned long long)llround(sqrt((double)*good * (double)*bad));
            if (mid <= *good)
                mid = *good + 1;
            if (mid >= *bad)
                mid = *bad - 1;
        }
        rc = feasible_at(a, run, solve, mid, &res, &ok, evals);
        if (rc != CLI_EXIT_OK)
            return rc;
        if (ok) {
            *good = mid;
            *rgood = res;
        } else {
            *bad = mid;
        }
    }
    return CLI_EXIT_OK;
}

/* The step count from dpa_calibrate, made sure: T + 1 is evaluated at the
 * caller's accuracy and must be infeasible (the library's final bracket can
 * end on a value it evaluated only with its coarse accuracy); if it is
 * feasible, the search goes on upwards (increments 2, 4, 8, ... until one
 * is infeasible, then bisection), so the step count reported always has
 * an infeasible T + 1. */
static int finish_steps(const cli_args *a, run_desc *run, calib_out *out)
{
    unsigned long long good = run->t, bad = 0, inc = 1;
    dpa_result res, rgood = out->at;
    int ok, rc;

    while (bad == 0) {
        unsigned long long v = good + inc;
        if (v > CLI_MAX_DPSGD_COUNT)
            v = CLI_MAX_DPSGD_COUNT;
        if (v <= good)
            break; /* the whole domain meets the target */
        rc = feasible_at(a, run, SOLVE_STEPS, v, &res, &ok, &out->evaluations);
        if (rc != CLI_EXIT_OK)
            return rc;
        if (ok) {
            good = v;
            rgood = res;
            inc *= 2;
        } else {
            bad = v;
        }
    }
    rc = bisect_count(a, run, SOLVE_STEPS, 0, &good, &bad, &rgood, &out->evaluations);
    if (rc != CLI_EXIT_OK)
        return rc;
    run->t = good;
    out->value = (double)good;
    out->infeasible = bad ? (double)bad : NAN;
    out->at = rgood;
    return CLI_EXIT_OK;
}

/* noise or steps: a template, dpa_calibrate. */
static int calibrate_template(const cli_args *a, run_desc *run, int solve, calib_out *out)
{
    char text[SPEC_BUF];
    dpa_error err;
    dpa_template *t;
    dpa_calibration c;
    dpa_status s;
    int rc;

    spec_text(text, sizeof text, run, solve == SOLVE_NOISE, solve == SOLVE_STEPS);
    dpa_error_clear(&err);
    t = dpa_template_from_json(text, &err);
    if (!t)
        return cli_fail_status(DPA_EINVAL, &err);
    memset(&c, 0, sizeof c);
    cli_poison_result(&c.at_value);
    c.value = NAN;
    c.infeasible = -HUGE_VAL;
    c.evaluations = -1;
    dpa_error_clear(&err);
    s = dpa_calibrate(t, a->epsilon, a->delta, &a->opt, a->tolerance, &c, &err);
    dpa_template_free(t);
    if (s != DPA_OK) {
        if (s == DPA_ENUMERIC)
            return cli_fail(CLI_EXIT_FAIL, "dpsgd: no %s meets epsilon <= %g at delta = %g (%s)",
                            solve == SOLVE_NOISE ? "noise multiplier" : "step count", a->epsilon, a->delta,
                            err.message);
        return cli_fail_status(s, &err);
    }
    rc = cli_check_result(&c.at_value, 1);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (!isfinite(c.value) || isinf(c.infeasible) || c.evaluations < 0)
        return cli_library_bug("an invalid calibration");
    if (!(c.at_value.upper <= a->epsilon))
        return cli_library_bug("a calibrated value that does not meet the target");
    out->value = c.value;
    out->infeasible = c.infeasible;
    out->at = c.at_value;
    out->evaluations = c.evaluations;
    if (solve == SOLVE_NOISE) {
        run->noise = c.value;
        return CLI_EXIT_OK;
    }
    run->t = (unsigned long long)c.value;
    return finish_steps(a, run, out);
}

/* The largest B in [1, N] whose certified epsilon meets the target, by
 * bisection on the assumption that epsilon does not decrease as B grows
 * (docs/cli.md): B = N first, then B = N/4, N/16, ... down to a feasible
 * value, then bisection (geometric while the ends are more than a factor 4
 * apart) until the ends are adjacent.  B + 1 has been evaluated and is
 * infeasible, unless B = N. */
static int calibrate_batch(const cli_args *a, run_desc *run, calib_out *out)
{
    unsigned long long good = 0, bad = 0, b = run->n;
    dpa_result res, rgood, rbad;
    int ok, rc, evals = 0;

    cli_poison_result(&rgood);
    cli_poison_result(&rbad);
    for (;;) {
        rc = feasible_at(a, run, SOLVE_BATCH, b, &res, &ok, &evals);
        if (rc != CLI_EXIT_OK)
            return rc;
        if (ok) {
            good = b;
            rgood = res;
            break;
        }
        bad = b;
        rbad = res;
        if (b == 1) {
            char up[CLI_NUM_BUF];
            cli_format(up, sizeof up, rbad.upper, 5, DPA_ROUND_DOWN);
            return cli_fail(CLI_EXIT_FAIL, "dpsgd: no batch size in [1, %llu] meets epsilon <= %g at delta = %g: "
                            "batch size 1 gives epsilon <= %s", run->n, a->epsilon, a->delta, up);
        }
        b = b / 4 > 0 ? b / 4 : 1;
    }
    rc = bisect_count(a, run, SOLVE_BATCH, 1, &good, &bad, &rgood, &evals);
    if (rc != CLI_EXIT_OK)
        return rc;
    rc = set_batch(run, good);
    if (rc != CLI_EXIT_OK)
        return rc;
    out->value = (double)good;
    out->infeasible = bad ? (double)bad : NAN;
    out->at = rgood;
    out->evaluations = evals;
    return CLI_EXIT_OK;
}

static void format_value(char *buf, size_t n, const cli_args *a, int solve, double x, int safe_dir)
{
    int digits = (int)ceil(-log10(a->tolerance)) + 1;
    if (solve != SOLVE_NOISE) {
        snprintf(buf, n, "%.0f", x);
        return;
    }
    cli_format(buf, n, x, digits < 5 ? 5 : digits, safe_dir);
}

static const char *solve_name(int solve)
{
    return solve == SOLVE_NOISE ? "noise_multiplier" : solve == SOLVE_STEPS ? "steps" : "batch_size";
}

static int print_calibration(const cli_args *a, const run_desc *run, int solve, const calib_out *c)
{
    char v[CLI_NUM_BUF], x[CLI_NUM_BUF], e[CLI_NUM_BUF], d[CLI_NUM_BUF];
    int noise = solve == SOLVE_NOISE;

    if (a->json) {
        json_t *o = json_object();
        int ok = o != NULL;
#define PUT(k, val) do { json_t *v_ = (val); if (!v_ || !o || json_object_set_new(o, (k), v_)) ok = 0; } while (0)
        PUT("query", json_string("dpsgd"));
        PUT("solved", json_string(solve_name(solve)));
        PUT("value", noise ? json_real(c->value) : json_integer((json_int_t)c->value));
        PUT("epsilon", json_real(a->epsilon));
        PUT("delta", json_real(a->delta));
        PUT("epsilon_upper", json_real(c->at.upper));
        PUT("epsilon_lower", json_real(c->at.lower));
        PUT("infeasible", isnan(c->infeasible) ? json_null()
                          : noise ? json_real(c->infeasible) : json_integer((json_int_t)c->infeasible));
        PUT("evaluations", json_integer(c->evaluations));
        PUT("method", json_string(dpa_method_name(c->at.method)));
        PUT("accuracy_met", json_boolean(c->at.accuracy_met));
        PUT("certified", json_boolean(c->at.certified));
#undef PUT
        if (o)
            put_run(o, a, run, step_count_text(run, solve), &ok);
        return cli_emit_json(o, ok);
    }
    format_value(v, sizeof v, a, solve, c->value, noise ? DPA_ROUND_UP : DPA_ROUND_DOWN);
    cli_format_shortest(e, sizeof e, a->epsilon);
    cli_format_shortest(d, sizeof d, a->delta);
    printf("%s = %s   (%s value meeting epsilon <= %s at delta = %s)\n",
           noise ? "noise multiplier" : solve == SOLVE_STEPS ? "steps" : "batch size", v,
           noise ? "smallest" : "largest", e, d);
    if (solve == SOLVE_STEPS) {
        unsigned long long w = whole_epochs(run->t, run->b, run->n);
        char ep[CLI_NUM_BUF];
        cli_format(ep, sizeof ep, (double)run->t * (double)run->b / (double)run->n, 6, DPA_ROUND_DOWN);
        printf("epochs: %s   (= T * B / N); whole epochs: %llu (%llu steps = ceil(%llu * N / B))\n", ep, w,
               w ? cli_dpsgd_steps((double)w, run->n, run->b) : 0ull, w);
    }
    print_run_line(stdout, run, !noise);
    if (solve != SOLVE_STEPS)
        print_steps(stdout, run, "given with --steps");
    print_sampling(stdout, a, run);
    cli_human_bounds("epsilon", c->at.upper, c->at.lower, "certified upper bound at this value");
    if (isnan(c->infeasible)) {
        puts("nearest infeasible value: none (the whole domain meets the target)");
    } else {
        format_value(x, sizeof x, a, solve, c->infeasible, noise ? DPA_ROUND_DOWN : DPA_ROUND_UP);
        printf("nearest infeasible value: %s\n", x);
    }
    printf("evaluations: %d\n", c->evaluations);
    if (solve == SOLVE_BATCH)
        printf("search: integer bisection over B, assuming epsilon does not decrease as B grows%s "
               "(docs/cli.md)\n", run->epochs > 0 ? " (the step count ceil(epochs * N / B) falls as B grows)" : "");
    cli_human_method(&c->at);
    cli_human_accuracy(&c->at);
    return CLI_EXIT_OK;
}

static int run_calibrate(const cli_args *a, run_desc *run, int solve)
{
    calib_out c;
    int rc;
    memset(&c, 0, sizeof c);
    if (solve == SOLVE_BATCH)
        rc = calibrate_batch(a, run, &c);
    else
        rc = calibrate_template(a, run, solve, &c);
    return rc != CLI_EXIT_OK ? rc : print_calibration(a, run, solve, &c);
}

int cli_run_dpsgd(const cli_args *a)
{
    run_desc run;
    int solve = SOLVE_NONE, rc;

    memset(&run, 0, sizeof run);
    run.n = a->dataset_size;
    run.b = a->batch_size;
    run.epochs = a->epochs;
    run.noise = a->noise;
    run.wor = a->sampling != CLI_SAMPLING_POISSON;
    run.t = a->steps;
    if (a->epsilon > 0)
        solve = run.noise == 0 ? SOLVE_NOISE : run.b == 0 ? SOLVE_BATCH : SOLVE_STEPS;
    if (run.epochs > 0 && run.b > 0) {
        run.t = cli_dpsgd_steps(run.epochs, run.n, run.b);
        if (run.t == 0)
            return too_many_steps(&run);
    }
    if (a->sampling == CLI_SAMPLING_SHUFFLE && !a->json)
        fprintf(stderr, "dpacct: warning: %s\n", SHUFFLE_WARNING);
    if (solve == SOLVE_NONE)
        rc = run_epsilon(a, &run);
    else
        rc = run_calibrate(a, &run, solve);
    return rc;
}
