/* dpacct command-line front end: declarations shared by its sources.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Flow: main.c picks the command (and only that: no file calls back into
 * it), args.c parses its options into a
 * cli_args, input.c reads the SPEC text, run.c calls the library and checks
 * what it returned, output.c prints (human text or one JSON object), with the
 * directed-rounding number formatting of format.c.  Nothing is printed on
 * stdout before every number to be printed is known and checked, so a
 * failure never leaves partial output there.  Every error is reported
 * through report_error.c: stderr prefixed "dpacct: ", or one JSON object
 * under --json; check.c checks what the library returned. */
#ifndef DPA_CLI_H
#define DPA_CLI_H

#include <stddef.h>
#include "dpacct/dpacct.h"

/* Exit statuses. */
enum {
    CLI_EXIT_OK = 0,
    CLI_EXIT_FAIL = 1,  /* library or system failure, output error */
    CLI_EXIT_USAGE = 2  /* bad command line, bad option value, bad or unsupported spec */
};

typedef enum cli_command {
    CLI_EPSILON = 0,
    CLI_DELTA,
    CLI_PROFILE,
    CLI_CALIBRATE,
    CLI_RENYI,
    CLI_CURVE,
    CLI_REPORT,
    CLI_DPSGD,
    CLI_TAIL,
    CLI_NCOMMANDS
} cli_command;

/* curve --kind; the kinds from CLI_KIND_PLD on are the representations
 * (curve_rep.c): tables only, one SPEC */
enum { CLI_KIND_PROFILE = 0, CLI_KIND_TRADEOFF, CLI_KIND_RENYI, CLI_KIND_PLD, CLI_KIND_PHI, CLI_KIND_LT };
enum { CLI_FORMAT_DEFAULT = 0, CLI_FORMAT_CSV, CLI_FORMAT_JSON, CLI_FORMAT_SVG, CLI_FORMAT_PNG, CLI_FORMAT_TEXT,
       CLI_FORMAT_PDF };
/* curve --log-scale: bits */
enum { CLI_LOG_NONE = 0, CLI_LOG_X = 1, CLI_LOG_Y = 2, CLI_LOG_DEFAULT = 4 };
/* curve: most SPECs on one plot, and the longest --title */
#define CLI_MAX_SPECS 8
#define CLI_MAX_TITLE 200
/* dpsgd --sampling */
enum { CLI_SAMPLING_POISSON = 0, CLI_SAMPLING_WOR, CLI_SAMPLING_SHUFFLE, CLI_SAMPLING_RA };

/* Bounds of the accepted option values (the library's documented domains). */
#define CLI_MAX_POINTS 1000000u
#define CLI_MIN_ACCURACY 1e-8
#define CLI_MIN_GRID_STEP 1e-7
#define CLI_MIN_MAX_GRID ((size_t)1 << 10)
#define CLI_MAX_MAX_GRID ((size_t)1 << 26)
#define CLI_MIN_TOLERANCE 1e-12
#define CLI_MAX_TOLERANCE 0.1
#define CLI_DEFAULT_TOLERANCE 1e-4
#define CLI_DEFAULT_POINTS 21u
/* most values of a list option (epsilon --delta 1e-5,1e-6; delta --epsilon 1,2) */
#define CLI_MAX_VALUES 1000u
/* dpsgd: largest dataset size, batch size and step count (DPA_MAX_COUNT) */
#define CLI_MAX_DPSGD_COUNT 1000000000000000ull
/* curve --group: largest group size (dpa_tf_group takes k <= 2^20) */
#define CLI_MAX_GROUP 1048576ull

typedef struct cli_args {
    cli_command cmd;
    double delta, epsilon, from, to, tolerance;
    size_t points;
    unsigned long long given; /* bit (1ull << option id) for each option seen */
    dpa_options opt;
    int all_methods;     /* --method all (epsilon and delta) */
    double order_re, order_im; /* renyi --order */
    const char *order_text;
    /* curve */
    int kind;            /* CLI_KIND_* */
    int format;          /* CLI_FORMAT_* */
    const char *output;  /* -o / --output FILE; NULL: standard output */
    double at;           /* --at X (tradeoff) */
    /* tradeoff operations, applied in this order (docs/fdp.md §11):
     * --subsample P (0: none), --group K (0: none), --inverse, --symmetrize */
    double subsample;
    size_t group;
    int tf_inverse, tf_symmetrize;
    int given_from, given_to, given_points, given_at;
    int json;
    const char *spec;    /* the SPEC argument (borrowed from argv); curve: the first */
    /* curve: every SPEC (borrowed), their legend labels (--label), the
     * figure's title, size in points, PNG resolution, log axes */
    const char *specs[CLI_MAX_SPECS];
    size_t nspecs;
    char labels[CLI_MAX_SPECS][64];
    size_t nlabels;
    const char *title;
    double width, height, dpi;
    int log_scale_axes;  /* CLI_LOG_* bits; CLI_LOG_DEFAULT: the kind's default */
    char spec_name[256]; /* the label ("name") of the spec's root event, "" if none:
                          * echoed in the output (docs/spec.md, Labels) */
    /* epsilon --delta / delta --epsilon: the list of values (values[0] is
     * also in delta / epsilon) */
    double values[CLI_MAX_VALUES];
    size_t nvalues;
    int log_scale;       /* profile --log */
    int gdp_mu;          /* epsilon/dpsgd --gdp-mu: also the mu-GDP bracket */
    char fft_cache_dir[4096]; /* opt.fft_cache_dir points here (dpa_wisdom_default_dir) */
    /* dpsgd */
    unsigned long long dataset_size, batch_size, steps;
    double epochs, noise;
    int sampling;        /* CLI_SAMPLING_* */
    /* epsilon/delta under --method gdp or clt: the CLT quantities and, for
     * gdp, the certified check (clt_out.c); set by run_query on its own copy
     * of the arguments, NULL otherwise */
    const struct cli_clt_out *clt;
    /* tail: the loss value t (--loss) and the direction (--direction) */
    double loss;
    dpa_direction direction;
    int given_direction; /* curve --kind pld: --direction was given (else both) */
    int given_grid_opts; /* --accuracy, --grid-step or --max-grid was given (dpsgd shuffle:
                          * its lower pair is then evaluated with them, not the fast grid) */
} cli_args;

/* ---- clt_out.c ---- */
/* What `--method gdp` and `--method clt` print besides the result
 * (docs/cli.md): the composition's CLT quantities (dpa_accountant_clt_info)
 * and, for gdp, method auto's certified bracket at each value (the
 * estimate's measured error). */
typedef struct cli_clt_out {
    dpa_clt_info info;
    dpa_result *check;   /* one per value (a->values): auto's result; NULL: none */
    dpa_method check_method; /* the method auto used */
    size_t n;
} cli_clt_out;
/* Fill c for the accountant acc (gdp or clt) and, for gdp, run method auto
 * on spec at the n values (a failure there leaves check NULL: the estimate
 * is printed without its check).  Returns DPA_OK or the status of a failed
 * clt_info (a library bug). */
dpa_status cli_clt_collect(const cli_args *a, const dpa_accountant *acc, const dpa_spec *spec,
                           cli_clt_out *c, dpa_error *err);
void cli_clt_clear(cli_clt_out *c);
/* Human lines for the value at index i (after the method and binding lines). */
void cli_clt_human(const cli_args *a, size_t i, const dpa_result *r);
/* The "clt" JSON member for the value at index i; NULL when out of memory. */
struct json_t *cli_clt_json(const cli_args *a, size_t i, const dpa_result *r);
/* The index of value `at` in a->values (0 if not found). */
size_t cli_value_index(const cli_args *a, double at);

/* ---- report_error.c ---- */
/* Print "dpacct: MESSAGE\n" on stderr; returns code.  When JSON errors are
 * on (cli_set_json_errors), the message is kept instead, and main prints one
 * JSON object {"error": {"message", "path", "exit_status"}} on stderr when
 * the command ends with a non-zero status. */
int cli_fail(int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Errors as JSON (set by main when the command line asks for JSON output:
 * --json, or --format json); a process-wide flag of the command-line tool. */
void cli_set_json_errors(int on);
int cli_json_errors(void);
/* Exit status for a library status: 2 for bad input, 1 otherwise. */
int cli_exit_for(dpa_status s);
/* Report a library error (message verbatim); returns the exit status. */
int cli_fail_lib(const dpa_error *err);
/* Report a library failure (fills an empty error from s) and return the
 * exit status. */
int cli_fail_status(dpa_status s, dpa_error *err);
/* A library bug (exit 1): "internal error: the library returned WHAT ...". */
int cli_library_bug(const char *what);
/* End of a run: a failed flush of stdout turns success into exit 1; under
 * JSON errors the kept messages are printed (one JSON object on failure).
 * Returns the exit status. */
int cli_finish(int rc);

/* ---- help.c ---- */
const char *cli_command_name(cli_command c);
/* Command by name; -1 if unknown. */
int cli_command_lookup(const char *name);
void cli_print_main_help(void);
void cli_print_command_help(cli_command c);
/* "Try 'dpacct [CMD ]--help'." on stderr. */
void cli_print_try_help(int cmd);

/* ---- args.c ---- */
/* Parse argv[first..argc-1] for command cmd.  Returns CLI_EXIT_OK or prints
 * the error and returns CLI_EXIT_USAGE. */
int cli_parse_args(cli_command cmd, int argc, char **argv, int first, cli_args *a);
/* 1 if argv[first..] asks for help (--help or -h before any "--"). */
int cli_wants_help(int argc, char **argv, int first);
/* 1 if argv[first..] asks for JSON output (--json, --format json,
 * --format=json before any "--"): decides how errors are reported before
 * the options are parsed. */
int cli_wants_json(int argc, char **argv, int first);

/* ---- input.c ---- */
/* Read the SPEC argument: "-" is stdin, text whose first non-space character
 * is '{' is inline JSON, anything else a file path.  On success *text is the
 * NUL-terminated spec text and *to_free what the caller must free() (NULL
 * for inline JSON, which is arg itself).  Returns an exit status (after
 * printing the error). */
int cli_read_spec(const char *arg, const char **text, char **to_free);
/* Like cli_read_spec for other JSON documents (kind names them in
 * messages: "ledger export"), up to max bytes. */
int cli_read_document(const char *arg, const char *kind, size_t max, const char **text, char **to_free);
/* The root event's "name" of a spec or template text into buf ("" if none or
 * if the text does not parse: the library reports that). */
void cli_spec_name(const char *text, char *buf, size_t n);

/* ---- format.c ---- */
#define CLI_NUM_BUF 64
/* x with `digits` significant digits (clamped to 1..17), %g-like layout,
 * rounded in direction dir (DPA_ROUND_*) exactly: dpa_decimal_format (the
 * printed decimal is >= x for UP, <= x for DOWN).  "inf" / "-inf" for
 * infinities, "0" for +-0, "nan" for NaN. */
void cli_format(char *buf, size_t n, double x, int digits, int dir);
/* Shortest decimal that reads back as exactly x. */
void cli_format_shortest(char *buf, size_t n, double x);
/* Significant digits to show a bracket [lower, upper]: 5, more (up to 10)
 * when the bracket is relatively narrower. */
int cli_digits_for(double upper, double lower);

/* ---- run.c: epsilon, delta, profile, calibrate ---- */
int cli_run(const cli_args *a, const char *spec_text);
/* The spec text's accountant under a's options; NULL (the failure reported,
 * its exit status in *rc) on error. */
dpa_accountant *cli_make_accountant(const cli_args *a, const char *text, int *rc);

/* ---- loss_tail.c: tail ---- */
int cli_run_tail(const cli_args *a, const char *spec_text);

/* ---- check.c ---- */
/* A result every check rejects until the library fills it, and the checks
 * of what the library returned (exit 1 after reporting a library bug). */
void cli_poison_result(dpa_result *r);
/* A method the library reports for a result (never AUTO). */
int cli_method_ok(dpa_method m);
int cli_check_result(const dpa_result *r, int eps_query);
int cli_check_gdp_mu(const dpa_gdp_mu *g);

/* ---- dpsgd.c: `dpacct dpsgd` (no SPEC; the spec is built from the options) ---- */
int cli_run_dpsgd(const cli_args *a);
/* The step count ceil(epochs * n / b), a quotient within 1e-9 (relative)
 * of an integer counting as that integer, at least 1 (the Python package's
 * dpsgd_steps): dpa_dpsgd_steps.  0 if it exceeds CLI_MAX_DPSGD_COUNT. */
unsigned long long cli_dpsgd_steps(double epochs, unsigned long long n, unsigned long long b);

/* ---- bandmf.c: `dpacct bandmf` (argv[1] is "bandmf"; its own options) ---- */
int cli_run_bandmf(int argc, char **argv);
void cli_print_bandmf_help(void);

/* ---- curve.c ---- */
int cli_run_curve(const cli_args *a, const char *spec_text);
/* ---- renyi (curve.c), report (report.c) ---- */
int cli_run_renyi(const cli_args *a, const char *spec_text);
int cli_run_report(const cli_args *a, const char *spec_text);

/* ---- ledger.c: `dpacct ledger SUBCOMMAND PATH ...` (argv[1] is "ledger") ---- */
int cli_run_ledger(int argc, char **argv);
void cli_print_ledger_help(void);

/* ---- serve.c: `dpacct serve [OPTIONS]` (argv[1] is "serve") ---- */
int cli_run_serve(int argc, char **argv);
void cli_print_serve_help(void);

/* ---- output.c ---- */
typedef struct cli_profile_out {
    size_t n;
    const double *eps, *upper, *lower;
    dpa_method method;
} cli_profile_out;

/* Each returns an exit status: CLI_EXIT_OK, or CLI_EXIT_FAIL (after printing
 * the error) if the output could not be built or written. */
/* g: the smallest mu-GDP of the composition (epsilon queries; NULL: none). */
int cli_print_query(const cli_args *a, const dpa_result *r, const dpa_gdp_mu *g);
/* Several values of one query (a->values[0..n-1], results r[0..n-1], the
 * mu-GDP brackets g[0..n-1] or NULL): human blocks, CSV rows, JSON
 * {"results": [...]} (n == 1: exactly cli_print_query). */
int cli_print_queries(const cli_args *a, const dpa_result *r, size_t n, const dpa_gdp_mu *g);
/* A query's JSON object (as printed by cli_print_query) at value `at`; NULL
 * when out of memory.  For dpsgd, cmd is taken as CLI_EPSILON. */
struct json_t;
struct json_t *cli_json_query(const cli_args *a, double at, const dpa_result *r, const dpa_gdp_mu *g);
/* Human output of an epsilon query at delta `at`, as `dpacct epsilon`
 * prints it, with `extra` lines (may be NULL) after the "at delta" line. */
void cli_human_epsilon(const cli_args *a, double at, const dpa_result *r, const dpa_gdp_mu *g,
                       const char *extra);
/* Human calibration lines shared with dpsgd: the bounds at the value, and
 * the method and accuracy lines. */
void cli_human_bounds(const char *name, double up, double lo, const char *note);
void cli_human_method(const dpa_result *r);
void cli_human_accuracy(const dpa_result *r);
/* Write o as one line on stdout and release it (nothing if !ok). */
int cli_emit_json(struct json_t *o, int ok);
int cli_print_profile(const cli_args *a, const cli_profile_out *p);
int cli_print_calibration(const cli_args *a, const dpa_param_info *info,
                          const dpa_calibration *c);
/* --method all: one row per method. */
typedef struct cli_method_row {
    dpa_method method;
    int ok;              /* 1: result holds; 0: refused or failed, reason in why */
    dpa_result result;
    double seconds;      /* accountant construction and the query, wall time */
    char why[512];
} cli_method_row;
int cli_print_methods(const cli_args *a, const cli_method_row *rows, size_t n);

/* "remove", "add", "both". */
const char *cli_direction_word(dpa_direction d);


#endif
