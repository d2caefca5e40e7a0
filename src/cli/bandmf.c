/* dpacct command-line front end: `dpacct bandmf`, banded matrix
 * factorization (DP-BandMF / DP-FTRL, docs/bandmf.md) in its own terms: its
 * options (getopt_long), help text, the bracket of epsilon for a delta, and
 * the calibration of the noise multiplier for a target epsilon.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The run is the bandmf spec leaf (docs/spec.md), built as JSON and read by
 * the library.  Its upper bound is the leaf's; its lower bound is that of
 * dpa_event_bandmf_instance (for cyclic Poisson participation an attained
 * instance with the norms rounded down; for fixed participation the leaf
 * itself), so the printed bracket holds for BandMF. */
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

#define BANDMF_MAX_BANDS 1000000

static const char bandmf_help[] =
    "Usage: dpacct bandmf (--coefficients C0,C1,... | --bands B) --noise S\n"
    "                     --iterations N (--rate Q | --epochs K [--separation M])\n"
    "                     --delta D [--epsilon X] [OPTIONS]\n"
    "\n"
    "The privacy of banded matrix factorization (DP-BandMF, DP-FTRL with a banded\n"
    "strategy): N steps releasing C X + Z, C the N x N lower-triangular Toeplitz\n"
    "matrix whose first column is C0, C1, ... (B bands), X the per-example\n"
    "gradients clipped to norm 1, Z Gaussian of standard deviation S (add/remove\n"
    "neighbours; docs/bandmf.md).\n"
    "  Cyclic Poisson participation (--rate Q): the data in B groups, group\n"
    "  i mod B sampled with probability Q at step i; ceil(N/B) rounds of a\n"
    "  Poisson-subsampled Gaussian of sensitivity ||c||_2 (Choquette-Choo et al.\n"
    "  2023). The upper bound is that theorem's; the lower bound is an attained\n"
    "  instance's.\n"
    "  Fixed participation (--epochs K): each example in at most K steps at\n"
    "  least M >= B apart (default M = B); the Gaussian mechanism of sensitivity\n"
    "  sqrt(sum over its K columns of their squared norms), truncated at step N.\n"
    "With --epsilon X: the smallest noise multiplier whose certified epsilon at D\n"
    "is <= X.\n"
    "\n"
    "  --coefficients L comma-separated c0 > 0, c1, ... (any signs)\n"
    "  --bands B        instead: the first B coefficients of (1 - x)^(-1/2),\n"
    "                   c_l = binom(2l, l) / 4^l, divided by their L2 norm (max\n"
    "                   column norm 1, jax_privacy's normalization)\n"
    "  --noise S        noise multiplier, number > 0\n"
    "  --iterations N   integer in [1, 1e15] (>= B with --rate)\n"
    "  --rate Q         cyclic Poisson sampling probability in (0, 1]\n"
    "  --epochs K       fixed participation: at most K times, integer >= 1\n"
    "  --separation M   with --epochs: at least M steps apart, integer >= B\n"
    "  --delta D        required, in (0, 1)\n"
    "  --epsilon X      calibrate the noise multiplier to epsilon <= X (> 0)\n"
    "  --method M       auto (default), exact, pld, phi, rdp, clt or gdp\n"
    "  --tolerance T    calibration: relative width of the final bracket, in\n"
    "                   [1e-12, 0.1] (default 1e-4)\n"
    "  --json           print one JSON object instead of text\n"
    "  -h, --help       print this help and exit\n"
    "\n"
    "Examples:\n"
    "  dpacct bandmf --bands 64 --noise 1 --iterations 2000 --rate 0.05 --delta 1e-6\n"
    "  dpacct bandmf --coefficients 1,0.5,0.25 --noise 2 --iterations 100 --epochs 4 --delta 1e-5\n"
    "  dpacct bandmf --bands 64 --iterations 2000 --rate 0.05 --delta 1e-6 --epsilon 2\n";

void cli_print_bandmf_help(void)
{
    fputs(bandmf_help, stdout);
}

typedef struct bandmf_args {
    double *c;
    size_t b;
    double noise, n, rate, k, sep, delta, epsilon, tolerance;
    dpa_method method;
    int json;
} bandmf_args;

static int usage(const char *fmt, const char *arg)
{
    char msg[600];
    snprintf(msg, sizeof msg, fmt, arg);
    cli_fail(CLI_EXIT_USAGE, "bandmf: %s", msg);
    if (!cli_json_errors())
        fputs("Try 'dpacct bandmf --help'.\n", stderr);
    return CLI_EXIT_USAGE;
}

/* A number option: the whole argument, finite. */
static int number(const char *opt, const char *s, double *out)
{
    char *end;
    *out = strtod(s, &end);
    if (end == s || *end || !isfinite(*out)) {
        char m[128];
        snprintf(m, sizeof m, "%s expects a finite number, got \"%%s\"", opt);
        return usage(m, s);
    }
    return CLI_EXIT_OK;
}

/* --coefficients: comma-separated numbers. */
static int coefficients(bandmf_args *a, const char *s)
{
    size_t cap = 1;
    for (const char *p = s; *p; p++)
        cap += *p == ',';
    if (cap > BANDMF_MAX_BANDS)
        return usage("--coefficients: more than 1000000 values in \"%.40s\"", s);
    free(a->c);
    if (!(a->c = malloc(cap * sizeof *a->c)))
        return cli_fail(CLI_EXIT_FAIL, "out of memory");
    a->b = 0;
    for (const char *p = s;;) {
        char *end;
        double v = strtod(p, &end);
        if (end == p || (*end && *end != ',') || !isfinite(v))
            return usage("--coefficients expects comma-separated finite numbers, got \"%.60s\"", s);
        a->c[a->b++] = v;
        if (!*end)
            return CLI_EXIT_OK;
        p = end + 1;
    }
}

/* --bands B: binom(2l, l) / 4^l for l < B (c_l = c_{l-1} (2l - 1) / (2l)),
 * divided by their norm. */
static int sqrt_bands(bandmf_args *a, const char *s)
{
    double b, norm = 0;
    if (number("--bands", s, &b))
        return CLI_EXIT_USAGE;
    if (!(b >= 1 && b <= BANDMF_MAX_BANDS && b == floor(b)))
        return usage("--bands expects an integer in [1, 1000000], got \"%s\"", s);
    free(a->c);
    a->b = (size_t)b;
    if (!(a->c = malloc(a->b * sizeof *a->c)))
        return cli_fail(CLI_EXIT_FAIL, "out of memory");
    a->c[0] = 1;
    for (size_t l = 1; l < a->b; l++)
        a->c[l] = a->c[l - 1] * (double)(2 * l - 1) / (double)(2 * l);
    for (size_t l = 0; l < a->b; l++)
        norm += a->c[l] * a->c[l];
    norm = sqrt(norm);
    for (size_t l = 0; l < a->b; l++)
        a->c[l] /= norm;
    return CLI_EXIT_OK;
}

static int parse(int argc, char **argv, bandmf_args *a)
{
    enum { O_COEF = 256, O_BANDS, O_NOISE, O_ITER, O_RATE, O_EPOCHS, O_SEP, O_DELTA, O_EPS, O_METHOD, O_TOL, O_JSON };
    static const struct option opts[] = {
        {"coefficients", required_argument, NULL, O_COEF}, {"bands", required_argument, NULL, O_BANDS},
        {"noise", required_argument, NULL, O_NOISE},       {"iterations", required_argument, NULL, O_ITER},
        {"rate", required_argument, NULL, O_RATE},         {"epochs", required_argument, NULL, O_EPOCHS},
        {"separation", required_argument, NULL, O_SEP},    {"delta", required_argument, NULL, O_DELTA},
        {"epsilon", required_argument, NULL, O_EPS},       {"method", required_argument, NULL, O_METHOD},
        {"tolerance", required_argument, NULL, O_TOL},     {"json", no_argument, NULL, O_JSON},
        {NULL, 0, NULL, 0}};
    int c, rc = CLI_EXIT_OK, have_c = 0;
    dpa_error err;
    /* exact names only, as the other commands (getopt_long would take an
     * abbreviation) */
    for (int i = 2; i < argc && strcmp(argv[i], "--"); i++) {
        size_t len = strcspn(argv[i], "=");
        const struct option *o = opts;
        if (strncmp(argv[i], "--", 2))
            continue;
        while (o->name && !(strlen(o->name) == len - 2 && !strncmp(o->name, argv[i] + 2, len - 2)))
            o++;
        if (!o->name)
            return usage("unknown option %s", argv[i]);
        if (o->has_arg == required_argument && !argv[i][len])
            i++; /* its value */
    }
    optind = 2;
    opterr = 0;
    while (rc == CLI_EXIT_OK && (c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        const char *v = optarg;
        switch (c) {
        case O_COEF: rc = coefficients(a, v), have_c++; break;
        case O_BANDS: rc = sqrt_bands(a, v), have_c++; break;
        case O_NOISE: rc = number("--noise", v, &a->noise); break;
        case O_ITER: rc = number("--iterations", v, &a->n); break;
        case O_RATE: rc = number("--rate", v, &a->rate); break;
        case O_EPOCHS: rc = number("--epochs", v, &a->k); break;
        case O_SEP: rc = number("--separation", v, &a->sep); break;
        case O_DELTA: rc = number("--delta", v, &a->delta); break;
        case O_EPS: rc = number("--epsilon", v, &a->epsilon); break;
        case O_TOL: rc = number("--tolerance", v, &a->tolerance); break;
        case O_JSON: a->json = 1; break;
        case O_METHOD:
            if (dpa_method_parse(v, &a->method, &err) != DPA_OK)
                rc = usage("--method expects auto, exact, pld, phi, rdp, clt or gdp, got \"%s\"", v);
            break;
        case ':': rc = usage("option %s needs a value", argv[optind - 1]); break;
        default: rc = usage("unknown option %s", argv[optind - 1]); break;
        }
    }
    if (rc != CLI_EXIT_OK)
        return rc;
    if (optind < argc)
        return usage("takes no SPEC or other argument, got \"%s\"", argv[optind]);
    if (have_c != 1)
        return usage("%sgive exactly one of --coefficients and --bands", have_c ? "" : "missing the strategy: ");
    if (a->n == 0)
        return usage("%s", "missing --iterations N");
    if ((a->rate != 0) == (a->k != 0))
        return usage("%s", "give exactly one of --rate (cyclic Poisson) and --epochs (fixed participation)");
    if (a->sep != 0 && a->k == 0)
        return usage("%s", "--separation goes with --epochs");
    if (!(a->delta > 0 && a->delta < 1))
        return usage("%s", "--delta D in (0, 1) is required");
    if (a->epsilon != 0 && a->noise != 0)
        return usage("%s", "--epsilon calibrates the noise multiplier: leave out --noise");
    if (a->epsilon == 0 && !(a->noise > 0))
        return usage("%s", "--noise S > 0 is required (or --epsilon X to calibrate it)");
    if (a->epsilon != 0 && !(a->epsilon > 0))
        return usage("%s", "--epsilon X must be > 0");
    if (a->tolerance != 0 && !(a->tolerance >= 1e-12 && a->tolerance <= 0.1))
        return usage("%s", "--tolerance T must be in [1e-12, 0.1]");
    return CLI_EXIT_OK;
}

/* The bandmf spec (noise "?" when q) as JSON text; NULL when out of memory. */
static char *spec_text(const bandmf_args *a, int q)
{
    json_t *o = json_object(), *c = json_array(), *part = json_object(), *p = json_object();
    char *text = NULL;
    int ok = o && c && part && p;
    for (size_t l = 0; ok && l < a->b; l++)
        ok = !json_array_append_new(c, json_real(a->c[l]));
    if (ok && a->rate != 0)
        ok = !json_object_set_new(p, "rate", json_real(a->rate)) && !json_object_set(part, "poisson", p);
    else if (ok) {
        ok = !json_object_set_new(p, "epochs", json_real(a->k)) &&
             (a->sep == 0 || !json_object_set_new(p, "separation", json_real(a->sep))) &&
             !json_object_set(part, "fixed", p);
    }
    if (ok) {
        json_t *leaf = json_object();
        ok = leaf && !json_object_set(leaf, "coefficients", c) &&
             !json_object_set_new(leaf, "noise_multiplier", q ? json_string("?") : json_real(a->noise)) &&
             !json_object_set_new(leaf, "iterations", json_real(a->n)) && !json_object_set(leaf, "participation", part) &&
             !json_object_set_new(o, "bandmf", leaf);
    }
    if (ok)
        text = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(o);
    json_decref(c);
    json_decref(part);
    json_decref(p);
    return text;
}

/* eps(delta) of a spec under the options: DPA_OK and *r, or an error. */
static dpa_status eps_of(dpa_spec *s, const bandmf_args *a, dpa_result *r, dpa_error *err)
{
    dpa_options opt;
    dpa_accountant *acc;
    dpa_status st;
    dpa_options_init(&opt);
    opt.method = a->method;
    if (!(acc = dpa_accountant_new(s, &opt, err)))
        return err->status;
    st = dpa_accountant_epsilon(acc, a->delta, r, err);
    dpa_accountant_free(acc);
    return st;
}

/* The bracket at noise s: the leaf's upper bound, the instance's lower. */
static dpa_status bracket(const bandmf_args *a, double s, dpa_result *r, dpa_error *err)
{
    bandmf_args at = *a;
    char *text;
    dpa_spec *spec;
    dpa_status st;
    at.noise = s;
    if (!(text = spec_text(&at, 0)))
        return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    spec = dpa_spec_from_json(text, err);
    free(text);
    if (!spec)
        return err->status;
    st = eps_of(spec, &at, r, err);
    dpa_spec_free(spec);
    if (st == DPA_OK && a->rate != 0) {
        dpa_result lo;
        dpa_event *e = dpa_event_bandmf_instance(a->c, a->b, s, a->n, a->rate, 0, 0, err);
        if (!e || !(spec = dpa_spec_new(e, DPA_ADD_REMOVE, err)))
            return err->status;
        st = eps_of(spec, &at, &lo, err);
        dpa_spec_free(spec);
        if (st == DPA_OK)
            r->lower = fmin(r->upper, lo.lower);
    }
    return st;
}

static int print(const bandmf_args *a, double noise, const dpa_result *r, const dpa_calibration *cal)
{
    double sens = dpa_bandmf_sensitivity(a->c, a->b, a->n, a->rate != 0 ? 0 : a->k, a->sep, 1);
    double rounds = ceil(a->n / (double)a->b);
    char s1[CLI_NUM_BUF], s2[CLI_NUM_BUF], s3[CLI_NUM_BUF];
    if (a->json) {
        json_t *o = json_object();
        int ok = o != NULL;
        ok = ok && !json_object_set_new(o, "command", json_string("bandmf")) &&
             !json_object_set_new(o, "epsilon_upper", json_real(r->upper)) &&
             !json_object_set_new(o, "epsilon_lower", json_real(r->lower)) &&
             !json_object_set_new(o, "delta", json_real(a->delta)) &&
             !json_object_set_new(o, "method", json_string(dpa_method_name(r->method))) &&
             !json_object_set_new(o, "noise_multiplier", json_real(noise)) &&
             !json_object_set_new(o, "bands", json_integer((json_int_t)a->b)) &&
             !json_object_set_new(o, "iterations", json_integer((json_int_t)a->n)) &&
             !json_object_set_new(o, "participation", json_string(a->rate != 0 ? "poisson" : "fixed")) &&
             !json_object_set_new(o, "sensitivity_upper", json_real(sens));
        if (ok && a->rate != 0)
            ok = !json_object_set_new(o, "rate", json_real(a->rate)) && !json_object_set_new(o, "rounds", json_integer((json_int_t)rounds));
        else if (ok)
            ok = !json_object_set_new(o, "epochs", json_integer((json_int_t)a->k)) &&
                 !json_object_set_new(o, "separation", json_integer((json_int_t)(a->sep != 0 ? a->sep : (double)a->b)));
        if (ok && cal)
            ok = !json_object_set_new(o, "epsilon_target", json_real(a->epsilon)) &&
                 !json_object_set_new(o, "calibrated", json_string("noise_multiplier"));
        return cli_emit_json(o, ok);
    }
    if (cal) {
        cli_format(s1, sizeof s1, noise, 6, DPA_ROUND_UP);
        cli_format(s2, sizeof s2, a->epsilon, 17, DPA_ROUND_DOWN);
        printf("noise multiplier = %s   (the smallest found with certified epsilon <= %s)\n", s1, s2);
    }
    cli_human_bounds("epsilon", r->upper, r->lower, "certified upper bound; claim this");
    cli_format_shortest(s1, sizeof s1, a->delta);
    printf("at delta = %s\n", s1);
    cli_format_shortest(s1, sizeof s1, noise);
    cli_format_shortest(s2, sizeof s2, a->n);
    cli_format(s3, sizeof s3, sens, 10, DPA_ROUND_UP);
    printf("BandMF: %zu band%s, %s iterations, noise multiplier %s\n", a->b, a->b == 1 ? "" : "s", s2, s1);
    if (a->rate != 0) {
        cli_format_shortest(s1, sizeof s1, a->rate);
        cli_format_shortest(s2, sizeof s2, rounds);
        printf("participation: cyclic Poisson, rate %s: %s rounds of a Poisson-subsampled Gaussian, "
               "sensitivity ||c||_2 <= %s\n", s1, s2, s3);
    } else {
        cli_format_shortest(s1, sizeof s1, a->k);
        cli_format_shortest(s2, sizeof s2, a->sep != 0 ? a->sep : (double)a->b);
        printf("participation: fixed, at most %s times at least %s apart: one Gaussian, sensitivity <= %s\n", s1, s2,
               s3);
    }
    cli_human_method(r);
    return CLI_EXIT_OK;
}

static int run(bandmf_args *a)
{
    dpa_error err = {DPA_OK, ""};
    dpa_result r;
    if (a->epsilon != 0) {
        dpa_calibration cal;
        dpa_options opt;
        char *text = spec_text(a, 1);
        dpa_template *t;
        if (!text)
            return cli_fail(CLI_EXIT_FAIL, "out of memory");
        t = dpa_template_from_json(text, &err);
        free(text);
        if (!t)
            return cli_fail_lib(&err);
        dpa_options_init(&opt);
        opt.method = a->method;
        if (dpa_calibrate(t, a->epsilon, a->delta, &opt, a->tolerance, &cal, &err) != DPA_OK) {
            dpa_template_free(t);
            return cli_fail_lib(&err);
        }
        dpa_template_free(t);
        if (bracket(a, cal.value, &r, &err) != DPA_OK)
            return cli_fail_lib(&err);
        return print(a, cal.value, &r, &cal);
    }
    if (bracket(a, a->noise, &r, &err) != DPA_OK)
        return cli_fail_lib(&err);
    return print(a, a->noise, &r, NULL);
}

int cli_run_bandmf(int argc, char **argv)
{
    bandmf_args a;
    int rc;
    memset(&a, 0, sizeof a);
    a.method = DPA_METHOD_AUTO;
    for (int i = 2; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            cli_print_bandmf_help();
            return CLI_EXIT_OK;
        }
    rc = parse(argc, argv, &a);
    if (rc == CLI_EXIT_OK)
        rc = run(&a);
    free(a.c);
    return rc;
}
