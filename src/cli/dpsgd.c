/* dpacct command-line front end: `dpacct dpsgd`, DP-SGD in its own terms:
 * the run's evaluation, the calibration of one quantity, and the output.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * dpsgd_run.c says which spec each sampling is accounted as.  The command
 * builds that spec and runs it through the library as `dpacct epsilon` would
 * (so the two agree bit for bit), or calibrates one quantity:
 *   --noise       a template with sigma "?", dpa_calibrate (smallest);
 *   --epochs/--steps  a template with count "?", dpa_calibrate (largest
 *                 count: steps, or epochs where epochs are the unit);
 *   --batch-size  an integer search over B (the step count moves with B
 *                 when the epochs are fixed, so no template has B as its
 *                 one parameter): docs/cli.md says what it assumes.
 * shuffle is a bracket of two specs: its upper bound (and every
 * calibration) from the certified no-amplification spec, its lower bound
 * from the lower-bound pair's spec. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dpsgd_run.h"

enum { SOLVE_NONE = 0, SOLVE_NOISE, SOLVE_STEPS, SOLVE_BATCH };

static const char *step_count_text(const run_desc *r, int solve)
{
    if (solve == SOLVE_STEPS)
        return "calibrated";
    return r->epochs > 0 ? "ceil(epochs * dataset_size / batch_size)" : "given";
}

/* ------------------------------------------------------ evaluation --- */

/* eps bounds at a->delta of the spec `text`, quietly: the library's status,
 * its message in *err.  g: also the mu-GDP bracket (NULL: not asked). */
static dpa_status evaluate_quiet(const cli_args *a, const dpa_options *opt, const char *text, dpa_result *res,
                                 dpa_gdp_mu *g, dpa_error *err)
{
    dpa_spec *spec;
    dpa_accountant *acc;
    dpa_status s;

    dpa_error_clear(err);
    spec = dpa_spec_from_json(text, err);
    if (!spec)
        return DPA_EINVAL;
    acc = dpa_accountant_new(spec, opt, err);
    dpa_spec_free(spec);
    if (!acc)
        return err->status ? err->status : DPA_EINVAL;
    cli_poison_result(res);
    dpa_error_clear(err);
    s = dpa_accountant_epsilon(acc, a->delta, res, err);
    if (s == DPA_OK && g) {
        dpa_error gerr;
        dpa_error_clear(&gerr);
        dpa_accountant_gdp_mu(acc, g, &gerr);
    }
    dpa_accountant_free(acc);
    return s;
}

/* The same, errors reported; an exit status. */
static int evaluate_text(const cli_args *a, const char *text, dpa_result *res, dpa_gdp_mu *g)
{
    dpa_error err;
    dpa_status s = evaluate_quiet(a, &a->opt, text, res, g, &err);
    if (s != DPA_OK)
        return cli_fail_status(s, &err);
    int rc = cli_check_result(res, 1);
    if (rc == CLI_EXIT_OK && g)
        rc = cli_check_gdp_mu(g);
    return rc;
}

/* The shuffle lower pair's evaluation without --accuracy, --grid-step or
 * --max-grid: the largest FFT length (the random allocation lattice gets an
 * eighth of it) and a fixed grid step (one build, no refinement: README
 * run 14.1614 against 14.1758 with the defaults, 0.06-0.09 s for the whole command against
 * 1.6 s; 2^17 gave 14.1724 in 0.10-0.12 s, above issue 23's 100 ms). */
#define SHUFFLE_LOWER_GRID ((size_t)1 << 16)
#define SHUFFLE_LOWER_STEP 4e-3

/* shuffle: the lower end of the bracket from the lower-bound pair's spec
 * (0 when no epoch is complete, or when the pair cannot be computed within
 * the grid limits: then the note says why); res holds the upper spec's
 * result. */
static int shuffle_lower(const cli_args *a, const run_desc *run, dpa_result *res)
{
    char text[SPEC_BUF];
    dpa_result low;
    dpa_error err;
    double upper = res->upper;
    const char *why = NULL;
    if (!dpsgd_spec_text(text, sizeof text, run, 0, 0, RUN_SPEC_LOWER)) {
        res->lower = 0;
        why = "no complete epoch";
    } else {
        /* without --accuracy, --grid-step or --max-grid: one build on a
         * fixed grid, its lattice at most SHUFFLE_LOWER_GRID / 8 points
         * (the lower end needs the lower measure only; the big atoms'
         * staircase keeps it within about 2e-4 eps of the full lattice's
         * here, docs/sampling.md §4); with any of them, the user's options */
        dpa_options lopt = a->opt;
        if (!a->given_grid_opts) {
            lopt.max_grid = SHUFFLE_LOWER_GRID;
            lopt.grid_step = SHUFFLE_LOWER_STEP;
        }
        dpa_status s = evaluate_quiet(a, &lopt, text, &low, NULL, &err);
        if (s == DPA_ENOMEM || s == DPA_ENUMERIC) {
            /* a lower bound that cannot be computed is 0, said plainly */
            res->lower = 0;
            why = err.message;
        } else if (s != DPA_OK) {
            return cli_fail_status(s, &err);
        } else {
            int rc = cli_check_result(&low, 1);
            if (rc != CLI_EXIT_OK)
                return rc;
            /* the pair's eps is at most the no-amplification bound: the
             * random allocation pair is a post-processing of the Gaussian one */
            if (!(low.lower <= upper))
                return cli_library_bug("a shuffle lower bound above its upper bound");
            res->lower = low.lower;
            res->certified = res->certified && low.certified;
            res->accuracy_met = res->accuracy_met && low.accuracy_met;
        }
    }
    if (why)
        snprintf(res->note, sizeof res->note, "shuffle: upper with no amplification; lower 0, its pair not "
                 "computed (%.60s)", why);
    else
        snprintf(res->note, sizeof res->note, "shuffle bracket: upper with no amplification, lower from Chua et "
                 "al.'s pair of datasets (docs/training.md)");
    return CLI_EXIT_OK;
}

/* eps bounds of the run at delta (r complete). g: also the mu-GDP
 * bracket (NULL: not asked; refused for shuffle by the caller).  lower:
 * shuffle's lower end too (searches need only the certified upper end). */
static int evaluate(const cli_args *a, const run_desc *run, dpa_result *res, dpa_gdp_mu *g, int lower)
{
    char text[SPEC_BUF];
    dpsgd_spec_text(text, sizeof text, run, 0, 0, RUN_SPEC_MAIN);
    int rc = evaluate_text(a, text, res, g);
    if (rc == CLI_EXIT_OK && run->sampling == CLI_SAMPLING_SHUFFLE && lower)
        rc = shuffle_lower(a, run, res);
    return rc;
}

static int run_epsilon(const cli_args *a, run_desc *run)
{
    dpa_result res;
    dpa_gdp_mu g, *gp = a->gdp_mu ? &g : NULL;
    int rc = evaluate(a, run, &res, gp, 1);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (a->json) {
        int ok = 1;
        json_t *o = cli_json_query(a, a->delta, &res, gp);
        if (!o)
            return cli_emit_json(NULL, 0);
        json_object_set_new(o, "query", json_string("dpsgd"));
        dpsgd_put_run(o, run, step_count_text(run, SOLVE_NONE), &ok);
        return cli_emit_json(o, ok);
    }
    /* the run's description goes between "at delta" and the method */
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem)
        return cli_fail(CLI_EXIT_FAIL, "out of memory");
    dpsgd_print_run_line(mem, run, 1);
    dpsgd_print_steps(mem, run, "given with --steps");
    dpsgd_print_sampling(mem, run);
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
    if (run->epochs > 0)
        return dpsgd_steps_from_epochs(run);
    return dpsgd_check_steps(run);
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
        run->t = v * dpsgd_unit(run);
    if (rc == CLI_EXIT_OK)
        rc = evaluate(a, run, res, NULL, 0);
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
    unsigned long long unit = dpsgd_unit(run), good = run->t / unit, bad = 0, inc = 1;
    dpa_result res, rgood = out->at;
    int ok, rc;

    while (bad == 0) {
        unsigned long long v = good + inc;
        if (v > CLI_MAX_DPSGD_COUNT / unit)
            v = CLI_MAX_DPSGD_COUNT / unit;
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
    run->t = good * unit;
    out->value = (double)run->t;
    out->infeasible = bad ? (double)(bad * unit) : NAN;
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

    dpsgd_spec_text(text, sizeof text, run, solve == SOLVE_NOISE, solve == SOLVE_STEPS, RUN_SPEC_MAIN);
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
                            solve == SOLVE_NOISE ? "noise multiplier" : dpsgd_unit(run) > 1 ? "epoch count" : "step count",
                            a->epsilon, a->delta,
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
    run->t = (unsigned long long)c.value * dpsgd_unit(run);
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
            dpsgd_put_run(o, run, step_count_text(run, solve), &ok);
        return cli_emit_json(o, ok);
    }
    format_value(v, sizeof v, a, solve, c->value, noise ? DPA_ROUND_UP : DPA_ROUND_DOWN);
    cli_format_shortest(e, sizeof e, a->epsilon);
    cli_format_shortest(d, sizeof d, a->delta);
    printf("%s = %s   (%s value meeting epsilon <= %s at delta = %s)\n",
           noise ? "noise multiplier" : solve == SOLVE_STEPS ? "steps" : "batch size", v,
           noise ? "smallest" : "largest", e, d);
    if (solve == SOLVE_STEPS) {
        unsigned long long w = dpsgd_whole_epochs(run->t, run->b, run->n);
        char ep[CLI_NUM_BUF];
        cli_format(ep, sizeof ep, (double)run->t * (double)run->b / (double)run->n, 6, DPA_ROUND_DOWN);
        printf("epochs: %s   (= T * B / N); whole epochs: %llu (%llu steps = ceil(%llu * N / B))\n", ep, w,
               w ? cli_dpsgd_steps((double)w, run->n, run->b) : 0ull, w);
    }
    dpsgd_print_run_line(stdout, run, !noise);
    if (solve != SOLVE_STEPS)
        dpsgd_print_steps(stdout, run, "given with --steps");
    dpsgd_print_sampling(stdout, run);
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
    /* shuffle: the calibration met the certified upper bound; the bracket
     * at the value found has the lower-bound pair's end too */
    if (rc == CLI_EXIT_OK && run->sampling == CLI_SAMPLING_SHUFFLE)
        rc = shuffle_lower(a, run, &c.at);
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
    run.sampling = a->sampling;
    run.t = a->steps;
    if (a->epsilon > 0)
        solve = run.noise == 0 ? SOLVE_NOISE : run.b == 0 ? SOLVE_BATCH : SOLVE_STEPS;
    if (run.epochs > 0 && run.b > 0 && (rc = dpsgd_steps_from_epochs(&run)) != CLI_EXIT_OK)
        return rc;
    if (run.t > 0 && run.b > 0 && (rc = dpsgd_check_steps(&run)) != CLI_EXIT_OK)
        return rc;
    if (a->gdp_mu && run.sampling == CLI_SAMPLING_SHUFFLE)
        return cli_fail(CLI_EXIT_USAGE, "dpsgd: --gdp-mu is not available for --sampling shuffle (its bracket "
                        "comes from two different pairs)");
    if (solve == SOLVE_NONE)
        rc = run_epsilon(a, &run);
    else
        rc = run_calibrate(a, &run, solve);
    return rc;
}
