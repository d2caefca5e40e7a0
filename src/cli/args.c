/* dpacct command-line front end: option parsing.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Long options only (-h and curve/report's -o aside), as "--opt value" or
 * "--opt=value", before or after the one SPEC argument; "--" ends the
 * options.  glibc's getopt_long splits the command line (in order, SPECs
 * returned in place, so errors come in command-line order); dpacct keeps
 * its own messages and its strictness: an option's exact name only (no
 * prefixes: "--del" is unknown), "-o FILE" only as two arguments, and the
 * next argument is a value even when it starts with '-' ("--from -3").  Values are parsed
 * strictly: the whole string must be a number (no blanks, no trailing text),
 * within the range of double (subnormals such as 1e-320 are accepted, as
 * rounded by strtod), and inside the option's domain; an option may be
 * given once. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "plot.h"

typedef enum opt_id {
    OPT_DELTA, OPT_EPSILON, OPT_FROM, OPT_TO, OPT_POINTS, OPT_TOLERANCE,
    OPT_METHOD, OPT_ACCURACY, OPT_GRID_STEP, OPT_MAX_GRID, OPT_THREADS, OPT_RDP_CONV, OPT_ORDER, OPT_KIND,
    OPT_FORMAT, OPT_OUTPUT, OPT_AT, OPT_JSON, OPT_LOG, OPT_GDP_MU,
    OPT_DATASET_SIZE, OPT_BATCH_SIZE, OPT_EPOCHS, OPT_STEPS, OPT_NOISE, OPT_SAMPLING,
    OPT_TITLE, OPT_SIZE, OPT_DPI, OPT_LOG_SCALE, OPT_LABEL, OPT_LOSS, OPT_DIRECTION,
    OPT_SUBSAMPLE, OPT_GROUP, OPT_INVERSE, OPT_SYMMETRIZE, OPT_COUNT
} opt_id;

#define BIT(c) (1ull << (c))
/* the commands that account (renyi takes only --order and --json) */
#define ALL_COMMANDS \
    (BIT(CLI_EPSILON) | BIT(CLI_DELTA) | BIT(CLI_PROFILE) | BIT(CLI_CALIBRATE) | BIT(CLI_CURVE) | BIT(CLI_REPORT) | \
     BIT(CLI_DPSGD) | BIT(CLI_TAIL))

typedef struct opt_def {
    const char *name;   /* without the leading "--" */
    unsigned commands;  /* BIT(cmd) for each command that takes it */
    int has_value;
} opt_def;

static const opt_def options[OPT_COUNT] = {
    [OPT_DELTA] = {"delta", BIT(CLI_EPSILON) | BIT(CLI_CALIBRATE) | BIT(CLI_DPSGD), 1},
    [OPT_EPSILON] = {"epsilon", BIT(CLI_DELTA) | BIT(CLI_CALIBRATE) | BIT(CLI_DPSGD), 1},
    [OPT_FROM] = {"from", BIT(CLI_PROFILE) | BIT(CLI_CURVE), 1},
    [OPT_TO] = {"to", BIT(CLI_PROFILE) | BIT(CLI_CURVE), 1},
    [OPT_POINTS] = {"points", BIT(CLI_PROFILE) | BIT(CLI_CURVE), 1},
    [OPT_TOLERANCE] = {"tolerance", BIT(CLI_CALIBRATE) | BIT(CLI_DPSGD), 1},
    [OPT_METHOD] = {"method", ALL_COMMANDS, 1},
    [OPT_ACCURACY] = {"accuracy", ALL_COMMANDS, 1},
    [OPT_GRID_STEP] = {"grid-step", ALL_COMMANDS, 1},
    [OPT_MAX_GRID] = {"max-grid", ALL_COMMANDS, 1},
    [OPT_THREADS] = {"threads", ALL_COMMANDS, 1},
    [OPT_RDP_CONV] = {"rdp-conversion", ALL_COMMANDS, 1},
    [OPT_ORDER] = {"order", BIT(CLI_RENYI), 1},
    [OPT_KIND] = {"kind", BIT(CLI_CURVE), 1},
    [OPT_FORMAT] = {"format", BIT(CLI_CURVE) | BIT(CLI_EPSILON) | BIT(CLI_DELTA) | BIT(CLI_PROFILE), 1},
    [OPT_OUTPUT] = {"output", BIT(CLI_CURVE) | BIT(CLI_REPORT), 1},
    [OPT_AT] = {"at", BIT(CLI_CURVE), 1},
    /* curve --kind tradeoff: f-DP operations on the curve (docs/fdp.md §3) */
    [OPT_SUBSAMPLE] = {"subsample", BIT(CLI_CURVE), 1},
    [OPT_GROUP] = {"group", BIT(CLI_CURVE), 1},
    [OPT_INVERSE] = {"inverse", BIT(CLI_CURVE), 0},
    [OPT_SYMMETRIZE] = {"symmetrize", BIT(CLI_CURVE), 0},
    [OPT_JSON] = {"json", ALL_COMMANDS | BIT(CLI_RENYI), 0},
    [OPT_LOG] = {"log", BIT(CLI_PROFILE), 0},
    [OPT_GDP_MU] = {"gdp-mu", BIT(CLI_EPSILON) | BIT(CLI_DPSGD), 0},
    [OPT_DATASET_SIZE] = {"dataset-size", BIT(CLI_DPSGD), 1},
    [OPT_BATCH_SIZE] = {"batch-size", BIT(CLI_DPSGD), 1},
    [OPT_EPOCHS] = {"epochs", BIT(CLI_DPSGD), 1},
    [OPT_STEPS] = {"steps", BIT(CLI_DPSGD), 1},
    [OPT_NOISE] = {"noise", BIT(CLI_DPSGD), 1},
    [OPT_SAMPLING] = {"sampling", BIT(CLI_DPSGD), 1},
    [OPT_TITLE] = {"title", BIT(CLI_CURVE), 1},
    [OPT_SIZE] = {"size", BIT(CLI_CURVE), 1},
    [OPT_DPI] = {"dpi", BIT(CLI_CURVE), 1},
    [OPT_LOG_SCALE] = {"log-scale", BIT(CLI_CURVE), 1},
    [OPT_LABEL] = {"label", BIT(CLI_CURVE), 1},
    [OPT_LOSS] = {"loss", BIT(CLI_TAIL), 1},
    [OPT_DIRECTION] = {"direction", BIT(CLI_TAIL) | BIT(CLI_CURVE), 1},
};

/* Options each command requires. */
static const unsigned required[CLI_NCOMMANDS] = {
    [CLI_EPSILON] = BIT(OPT_DELTA),
    [CLI_DELTA] = BIT(OPT_EPSILON),
    [CLI_PROFILE] = BIT(OPT_FROM) | BIT(OPT_TO),
    [CLI_CALIBRATE] = BIT(OPT_EPSILON) | BIT(OPT_DELTA),
    [CLI_RENYI] = BIT(OPT_ORDER),
    [CLI_DPSGD] = BIT(OPT_DATASET_SIZE) | BIT(OPT_DELTA),
    [CLI_TAIL] = BIT(OPT_LOSS),
};

/* A finite double, the whole string, no leading blank.  Returns 0, -1 for
 * text that is not a number (or is inf/nan), -2 for a number beyond the
 * range of double (strtod: ERANGE with +-HUGE_VAL), 1 for a non-zero number
 * that rounds to 0 (e.g. 1e-400; *out is set).  strtod also sets ERANGE
 * when the result underflows (|v| below DBL_MIN, e.g. 1e-320, which is
 * stored as a subnormal): those are finite values and are accepted as
 * rounded (return 0, or 1 if rounded to 0). */
static int parse_real(const char *s, double *out)
{
    char *end;
    double v;
    if (!*s || isspace((unsigned char)*s))
        return -1;
    errno = 0;
    v = strtod(s, &end);
    if (end == s || *end)
        return -1;
    if (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL))
        return -2;
    if (!isfinite(v))
        return -1;
    *out = v;
    return errno == ERANGE && v == 0;
}

/* A decimal unsigned integer, digits only. */
static int parse_uint(const char *s, unsigned long long *out)
{
    char *end;
    unsigned long long v;
    if (!isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (*end || errno == ERANGE)
        return -1;
    *out = v;
    return 0;
}

static int bad_value(opt_id id, const char *what, const char *val)
{
    return cli_fail(CLI_EXIT_USAGE, "--%s: must be %s, got \"%s\"", options[id].name, what, val);
}

/* A number too large for a double: say so (the domain alone would read as
 * if the text were not a number). */
static int overflow_value(opt_id id, const char *what, const char *val)
{
    return cli_fail(CLI_EXIT_USAGE, "--%s: must be %s, got \"%s\" (beyond the range of a double, about 1.8e308)",
                    options[id].name, what, val);
}

/* A real option value in [lo, hi], with open ends as flagged. */
static int real_in(opt_id id, const char *val, double lo, int lo_open, double hi, int hi_open,
                   const char *what, double *out)
{
    double v;
    int st = parse_real(val, &v);
    if (st == -2)
        return overflow_value(id, what, val);
    if (st < 0)
        return bad_value(id, what, val);
    /* (a value that underflows to 0 is refused even where 0 is allowed:
     * 1e-400 is not the delta 0 of pure DP) */
    if (v < lo || v > hi || (lo_open && v == lo) || (hi_open && v == hi) || (id == OPT_DELTA && st && v == 0))
        return st ? cli_fail(CLI_EXIT_USAGE, "--%s: must be %s, got \"%s\" (rounds to 0 in double precision)",
                             options[id].name, what, val)
                  : bad_value(id, what, val);
    *out = v;
    return CLI_EXIT_OK;
}

static int uint_in(opt_id id, const char *val, unsigned long long lo, unsigned long long hi,
                   const char *what, size_t *out)
{
    unsigned long long v;
    if (parse_uint(val, &v) || v < lo || v > hi)
        return bad_value(id, what, val);
    *out = (size_t)v;
    return CLI_EXIT_OK;
}

static int set_epsilon(cli_args *a, const char *val)
{
    if (a->cmd == CLI_CALIBRATE || a->cmd == CLI_DPSGD)
        return real_in(OPT_EPSILON, val, 0, 1, HUGE_VAL, 0, "a number > 0", &a->epsilon);
    return real_in(OPT_EPSILON, val, -HUGE_VAL, 0, HUGE_VAL, 0, "a finite number", &a->epsilon);
}

/* A comma-separated list of values (epsilon --delta, delta --epsilon), each
 * parsed as the single value would be; values[0] also goes to *first. */
static int set_list(cli_args *a, opt_id id, const char *val, double *first)
{
    const char *p = val;
    a->nvalues = 0;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char item[512];
        int rc;
        if (a->nvalues == CLI_MAX_VALUES)
            return cli_fail(CLI_EXIT_USAGE, "--%s: at most %u values, got more", options[id].name,
                            CLI_MAX_VALUES);
        if (len >= sizeof item)
            return bad_value(id, id == OPT_DELTA ? "a number in [0, 1)" : "a finite number", p);
        memcpy(item, p, len);
        item[len] = '\0';
        rc = id == OPT_DELTA ? real_in(id, item, 0, 0, 1, 1, "a number in [0, 1)", first)
                             : set_epsilon(a, item);
        if (rc != CLI_EXIT_OK)
            return rc;
        a->values[a->nvalues++] = *first;
        if (!comma)
            break;
        p = comma + 1;
    }
    *first = a->values[0];
    return CLI_EXIT_OK;
}

static int set_count(opt_id id, const char *val, unsigned long long *out)
{
    size_t v;
    int rc = uint_in(id, val, 1, CLI_MAX_DPSGD_COUNT, "an integer in [1, 1e15]", &v);
    if (rc == CLI_EXIT_OK)
        *out = (unsigned long long)v;
    return rc;
}

static int set_format(cli_args *a, const char *val)
{
    if (a->cmd == CLI_CURVE) {
        if (!strcmp(val, "csv")) a->format = CLI_FORMAT_CSV;
        else if (!strcmp(val, "json")) a->format = CLI_FORMAT_JSON;
        else if (!strcmp(val, "svg")) a->format = CLI_FORMAT_SVG;
        else if (!strcmp(val, "png")) a->format = CLI_FORMAT_PNG;
        else if (!strcmp(val, "pdf")) a->format = CLI_FORMAT_PDF;
        else return bad_value(OPT_FORMAT, "csv, json, svg, png or pdf", val);
        return CLI_EXIT_OK;
    }
    if (!strcmp(val, "text")) a->format = CLI_FORMAT_TEXT;
    else if (!strcmp(val, "csv")) a->format = CLI_FORMAT_CSV;
    else if (!strcmp(val, "json")) a->format = CLI_FORMAT_JSON;
    else return bad_value(OPT_FORMAT, "text, csv or json", val);
    return CLI_EXIT_OK;
}

/* --size WxH in points (1/72 inch), each in [CLI_PLOT_MIN_SIZE, CLI_PLOT_MAX_SIZE] */
static int set_size(cli_args *a, const char *val)
{
    char *end;
    double w, h;
    errno = 0;
    w = strtod(val, &end);
    if (end == val || (*end != 'x' && *end != 'X'))
        return bad_value(OPT_SIZE, "WIDTHxHEIGHT in points, each in [200, 5000]", val);
    const char *hs = end + 1;
    h = strtod(hs, &end);
    if (end == hs || *end || errno || !(w >= CLI_PLOT_MIN_SIZE && w <= CLI_PLOT_MAX_SIZE) ||
        !(h >= CLI_PLOT_MIN_SIZE && h <= CLI_PLOT_MAX_SIZE))
        return bad_value(OPT_SIZE, "WIDTHxHEIGHT in points, each in [200, 5000]", val);
    a->width = w;
    a->height = h;
    return CLI_EXIT_OK;
}

/* --label L1,L2,...: one legend label per SPEC (commas separate them) */
static int set_labels(cli_args *a, const char *val)
{
    size_t n = 0;
    const char *p = val;
    for (;;) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        if (n == CLI_MAX_SPECS || len == 0 || len >= sizeof a->labels[0])
            return bad_value(OPT_LABEL, "comma-separated labels, one per SPEC (at most 8, each 1 to 63 bytes)",
                             val);
        memcpy(a->labels[n], p, len);
        a->labels[n][len] = '\0';
        n++;
        if (!c) break;
        p = c + 1;
    }
    a->nlabels = n;
    return CLI_EXIT_OK;
}

static int set_grid_step(cli_args *a, const char *val)
{
    double v;
    int st = parse_real(val, &v);
    if (st == -2)
        return overflow_value(OPT_GRID_STEP, "0 or a number in [1e-07, 1]", val);
    if (st == 1) /* not "0" (automatic), a step too small for a double */
        return cli_fail(CLI_EXIT_USAGE, "--grid-step: must be 0 or a number in [1e-07, 1], got \"%s\" "
                        "(rounds to 0 in double precision)", val);
    if (st < 0 || (v != 0 && (v < CLI_MIN_GRID_STEP || v > 1)))
        return bad_value(OPT_GRID_STEP, "0 or a number in [1e-07, 1]", val);
    a->opt.grid_step = v;
    return CLI_EXIT_OK;
}

static int set_method(cli_args *a, const char *val)
{
    dpa_error err;
    if (!strcmp(val, "all")) {
        if (a->cmd != CLI_EPSILON && a->cmd != CLI_DELTA && a->cmd != CLI_CURVE)
            return cli_fail(CLI_EXIT_USAGE, "--method all: only for the epsilon, delta and curve commands");
        a->all_methods = 1;
        return CLI_EXIT_OK;
    }
    if (dpa_method_parse(val, &a->opt.method, &err) != DPA_OK)
        return bad_value(OPT_METHOD, a->cmd == CLI_EPSILON || a->cmd == CLI_DELTA || a->cmd == CLI_CURVE
                                         ? "auto, exact, pld, phi, rdp, clt, gdp or all"
                                         : "auto, exact, pld, phi, rdp, clt or gdp", val);
    return CLI_EXIT_OK;
}

static int set_order(cli_args *a, const char *val)
{
    dpa_error err;
    dpa_error_clear(&err);
    if (dpa_renyi_parse_order(val, &a->order_re, &a->order_im, &err) != DPA_OK)
        return cli_fail(CLI_EXIT_USAGE, "--order: %s", err.message);
    a->order_text = val;
    return CLI_EXIT_OK;
}

static int set_value(cli_args *a, opt_id id, const char *val)
{
    switch (id) {
    case OPT_DELTA:
        if (a->cmd == CLI_EPSILON)
            return set_list(a, id, val, &a->delta);
        if (a->cmd == CLI_CALIBRATE) /* delta 0: calibration to pure DP */
            return real_in(id, val, 0, 0, 1, 1, "a number in [0, 1)", &a->delta);
        return real_in(id, val, 0, 1, 1, 1, "a number in (0, 1)", &a->delta);
    case OPT_EPSILON:
        if (a->cmd == CLI_DELTA)
            return set_list(a, id, val, &a->epsilon);
        return set_epsilon(a, val);
    case OPT_DATASET_SIZE:
        return set_count(id, val, &a->dataset_size);
    case OPT_BATCH_SIZE:
        return set_count(id, val, &a->batch_size);
    case OPT_STEPS:
        return set_count(id, val, &a->steps);
    case OPT_EPOCHS:
        return real_in(id, val, 0, 1, HUGE_VAL, 0, "a number > 0", &a->epochs);
    case OPT_NOISE:
        return real_in(id, val, 0, 1, HUGE_VAL, 0, "a number > 0", &a->noise);
    case OPT_SAMPLING:
        if (!strcmp(val, "poisson")) a->sampling = CLI_SAMPLING_POISSON;
        else if (!strcmp(val, "without_replacement")) a->sampling = CLI_SAMPLING_WOR;
        else if (!strcmp(val, "shuffle")) a->sampling = CLI_SAMPLING_SHUFFLE;
        else if (!strcmp(val, "random_allocation")) a->sampling = CLI_SAMPLING_RA;
        else return bad_value(id, "poisson, without_replacement, random_allocation or shuffle", val);
        return CLI_EXIT_OK;
    case OPT_FROM:
        a->given_from = 1;
        return real_in(id, val, -HUGE_VAL, 0, HUGE_VAL, 0, "a finite number", &a->from);
    case OPT_TO:
        a->given_to = 1;
        return real_in(id, val, -HUGE_VAL, 0, HUGE_VAL, 0, "a finite number", &a->to);
    case OPT_POINTS:
        a->given_points = 1;
        return uint_in(id, val, 2, CLI_MAX_POINTS, "an integer in [2, 1000000]", &a->points);
    case OPT_TOLERANCE:
        return real_in(id, val, CLI_MIN_TOLERANCE, 0, CLI_MAX_TOLERANCE, 0,
                       "a number in [1e-12, 0.1]", &a->tolerance);
    case OPT_METHOD:
        return set_method(a, val);
    case OPT_RDP_CONV: {
        dpa_error err;
        if (dpa_rdp_conv_parse(val, &a->opt.rdp_conversion, &err) != DPA_OK)
            return bad_value(id, "optimal, improved or classical", val);
        return CLI_EXIT_OK;
    }
    case OPT_ORDER:
        return set_order(a, val);
    case OPT_KIND:
        if (!strcmp(val, "profile")) a->kind = CLI_KIND_PROFILE;
        else if (!strcmp(val, "tradeoff")) a->kind = CLI_KIND_TRADEOFF;
        else if (!strcmp(val, "renyi")) a->kind = CLI_KIND_RENYI;
        else if (!strcmp(val, "pld")) a->kind = CLI_KIND_PLD;
        else if (!strcmp(val, "phi")) a->kind = CLI_KIND_PHI;
        else if (!strcmp(val, "lt")) a->kind = CLI_KIND_LT;
        else return bad_value(id, "profile, tradeoff, renyi, pld, phi or lt", val);
        return CLI_EXIT_OK;
    case OPT_FORMAT:
        return set_format(a, val);
    case OPT_OUTPUT:
        if (!*val) return bad_value(id, "a file path", val);
        a->output = val;
        return CLI_EXIT_OK;
    case OPT_TITLE:
        if (strlen(val) > CLI_MAX_TITLE) return bad_value(id, "a title of at most 200 bytes", val);
        a->title = val;
        return CLI_EXIT_OK;
    case OPT_SIZE:
        return set_size(a, val);
    case OPT_DPI:
        return real_in(id, val, CLI_PLOT_MIN_DPI, 0, CLI_PLOT_MAX_DPI, 0, "a number in [36, 1200]", &a->dpi);
    case OPT_LOG_SCALE:
        if (!strcmp(val, "none")) a->log_scale_axes = CLI_LOG_NONE;
        else if (!strcmp(val, "x")) a->log_scale_axes = CLI_LOG_X;
        else if (!strcmp(val, "y")) a->log_scale_axes = CLI_LOG_Y;
        else if (!strcmp(val, "xy")) a->log_scale_axes = CLI_LOG_X | CLI_LOG_Y;
        else return bad_value(id, "none, x, y or xy", val);
        return CLI_EXIT_OK;
    case OPT_LABEL:
        return set_labels(a, val);
    case OPT_LOSS:
        return real_in(id, val, -HUGE_VAL, 0, HUGE_VAL, 0, "a finite number", &a->loss);
    case OPT_DIRECTION:
        if (!strcmp(val, "remove")) a->direction = DPA_DIR_REMOVE;
        else if (!strcmp(val, "add")) a->direction = DPA_DIR_ADD;
        else return bad_value(id, "remove or add", val);
        a->given_direction = 1;
        return CLI_EXIT_OK;
    case OPT_AT:
        a->given_at = 1;
        return real_in(id, val, 0, 0, 1, 0, "a number in [0, 1]", &a->at);
    case OPT_SUBSAMPLE:
        return real_in(id, val, 0, 1, 1, 0, "a sampling probability in (0, 1]", &a->subsample);
    case OPT_GROUP:
        return uint_in(id, val, 1, CLI_MAX_GROUP, "an integer group size in [1, 1048576]", &a->group);
    case OPT_ACCURACY:
        a->given_grid_opts = 1;
        return real_in(id, val, CLI_MIN_ACCURACY, 0, 1, 0, "a number in [1e-08, 1]",
                       &a->opt.accuracy);
    case OPT_GRID_STEP:
        a->given_grid_opts = 1;
        return set_grid_step(a, val);
    case OPT_MAX_GRID:
        a->given_grid_opts = 1;
        return uint_in(id, val, CLI_MIN_MAX_GRID, CLI_MAX_MAX_GRID,
                       "an integer in [1024, 67108864]", &a->opt.max_grid);
    case OPT_THREADS: {
        size_t n;
        int rc = uint_in(id, val, 0, 64, "an integer in [0, 64]", &n);
        if (rc == CLI_EXIT_OK) a->opt.threads = (int)n;
        return rc;
    }
    default:
        return CLI_EXIT_OK;
    }
}

static int usage_error(const cli_args *a, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* "dpacct: CMD: MESSAGE" and a hint to the command's help. */
static int usage_error(const cli_args *a, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cli_fail(CLI_EXIT_USAGE, "%s: %s", cli_command_name(a->cmd), msg);
    cli_print_try_help((int)a->cmd);
    return CLI_EXIT_USAGE;
}

/* Option by exact name (name_len bytes of name); -1 if unknown. */
static int lookup_option(const char *name, size_t name_len)
{
    for (int i = 0; i < OPT_COUNT; i++)
        if (strlen(options[i].name) == name_len && !strncmp(options[i].name, name, name_len))
            return i;
    return -1;
}

/* The option an argv element names exactly: "--name" or "--name=value", or
 * "-o" (curve, report).  getopt_long also accepts unambiguous prefixes
 * ("--del") and glued short values ("-ofile"); dpacct does not, so the
 * element getopt_long took is looked up again here.  -1 if it names none. */
static int exact_option(const cli_args *a, const char *elem)
{
    if (elem[0] == '-' && elem[1] == '-' && elem[2]) {
        const char *eq = strchr(elem + 2, '=');
        return lookup_option(elem + 2, eq ? (size_t)(eq - elem - 2) : strlen(elem + 2));
    }
    if (!strcmp(elem, "-o") && (a->cmd == CLI_CURVE || a->cmd == CLI_REPORT))
        return OPT_OUTPUT;
    return -1;
}

/* The option argv element elem (which getopt_long took as an option),
 * value val (NULL: none given; missing: the value is missing), in the
 * order of the checks: known, applies, once, value. */
static int take_option(cli_args *a, const char *elem, const char *val, int missing)
{
    int id = exact_option(a, elem);
    const char *eq = elem[1] == '-' ? strchr(elem, '=') : NULL;

    if (id < 0)
        return usage_error(a, "unknown option %s", elem);
    if (!(options[id].commands & BIT(a->cmd)))
        return usage_error(a, "option --%s does not apply to this command", options[id].name);
    if (a->given & BIT(id))
        return usage_error(a, "option --%s given more than once", options[id].name);
    a->given |= BIT(id);
    if (!options[id].has_value) {
        if (eq)
            return usage_error(a, "option --%s takes no value", options[id].name);
        if (id == OPT_LOG)
            a->log_scale = 1;
        else if (id == OPT_GDP_MU)
            a->gdp_mu = 1;
        else if (id == OPT_INVERSE || id == OPT_SYMMETRIZE)
            ; /* read from a->given */
        else
            a->json = 1;
        return CLI_EXIT_OK;
    }
    if (missing || !val)
        return elem[1] == '-' ? usage_error(a, "option --%s needs a value", options[id].name)
                              : usage_error(a, "option %s needs a value", elem);
    return set_value(a, (opt_id)id, val);
}

static int take_spec(cli_args *a, const char *arg)
{
    if (a->cmd == CLI_DPSGD)
        return usage_error(a, "takes no SPEC (the run is described by its options), got \"%s\"", arg);
    if (a->cmd == CLI_CURVE) { /* several specs on one plot */
        if (a->nspecs == CLI_MAX_SPECS)
            return usage_error(a, "more than %d SPECs", CLI_MAX_SPECS);
        if (!a->spec) a->spec = arg;
        a->specs[a->nspecs++] = arg;
        return CLI_EXIT_OK;
    }
    if (a->spec)
        return usage_error(a, "more than one SPEC (\"%s\" and \"%s\"); give exactly one",
                           a->spec, arg);
    a->spec = arg;
    return CLI_EXIT_OK;
}

/* dpsgd: the run (N, B, epochs or steps, noise) complete, or with --epsilon
 * exactly one of noise, batch size and epochs/steps left out (calibrated). */
static int check_dpsgd(const cli_args *a)
{
    int has_noise = (a->given & BIT(OPT_NOISE)) != 0, has_batch = (a->given & BIT(OPT_BATCH_SIZE)) != 0;
    int has_epochs = (a->given & BIT(OPT_EPOCHS)) != 0, has_steps = (a->given & BIT(OPT_STEPS)) != 0;
    int calibrating = (a->given & BIT(OPT_EPSILON)) != 0;
    int missing = !has_noise + !has_batch + !(has_epochs || has_steps);

    if (has_epochs && has_steps)
        return usage_error(a, "give --epochs or --steps, not both");
    if (has_batch && a->batch_size > a->dataset_size)
        return usage_error(a, "--batch-size must be at most --dataset-size (%llu), got %llu",
                           a->dataset_size, a->batch_size);
    if (!calibrating) {
        if (a->given & BIT(OPT_TOLERANCE))
            return usage_error(a, "--tolerance applies to calibration (with --epsilon) only");
        if (!has_batch)
            return usage_error(a, "missing required option --batch-size (or give --epsilon to calibrate it)");
        if (!has_epochs && !has_steps)
            return usage_error(a, "missing --epochs or --steps (or give --epsilon to calibrate the steps)");
        if (!has_noise)
            return usage_error(a, "missing required option --noise (or give --epsilon to calibrate it)");
        return CLI_EXIT_OK;
    }
    if (a->gdp_mu)
        return usage_error(a, "--gdp-mu applies to an epsilon query (without --epsilon) only");
    if (missing == 0)
        return usage_error(a, "--epsilon calibrates one of --noise, --batch-size, --epochs/--steps: "
                           "leave out exactly that one (all are given)");
    if (missing > 1)
        return usage_error(a, "--epsilon calibrates one of --noise, --batch-size, --epochs/--steps: "
                           "leave out exactly one (missing: %s%s%s)",
                           has_noise ? "" : "--noise ", has_batch ? "" : "--batch-size ",
                           has_epochs || has_steps ? "" : "--epochs/--steps");
    return CLI_EXIT_OK;
}

static int check_complete(cli_args *a)
{
    unsigned long long missing = required[a->cmd] & ~a->given;
    for (int i = 0; i < OPT_COUNT; i++)
        if (missing & BIT(i))
            return usage_error(a, "missing required option --%s", options[i].name);
    if (a->cmd == CLI_DPSGD)
        return check_dpsgd(a);
    if (!a->spec)
        return usage_error(a, "missing SPEC (a file path, - for standard input, "
                           "or inline JSON)");
    if (a->cmd == CLI_CURVE && (a->given & BIT(OPT_DIRECTION)) && a->kind != CLI_KIND_PLD)
        return usage_error(a, "--direction applies to --kind pld only (phi and lt give both directions)");
    if (a->cmd == CLI_CURVE && a->kind == CLI_KIND_PLD && (a->given & (BIT(OPT_FROM) | BIT(OPT_TO) | BIT(OPT_POINTS))))
        return usage_error(a, "--from, --to and --points do not apply to --kind pld (it writes the whole grid)");
    if (a->cmd == CLI_CURVE && a->kind >= CLI_KIND_PLD &&
        (a->given & (BIT(OPT_TITLE) | BIT(OPT_SIZE) | BIT(OPT_DPI) | BIT(OPT_LOG_SCALE) | BIT(OPT_LABEL))))
        return usage_error(a, "--title, --size, --dpi, --log-scale and --label are figure options: --kind %s is a "
                           "table", a->kind == CLI_KIND_PLD ? "pld" : a->kind == CLI_KIND_PHI ? "phi" : "lt");
    if (a->cmd == CLI_CURVE && a->kind >= CLI_KIND_PLD && a->nspecs > 1)
        return usage_error(a, "--kind %s takes one SPEC, got %zu", a->kind == CLI_KIND_PLD ? "pld" : a->kind == CLI_KIND_PHI ? "phi" : "lt", a->nspecs);
    if (a->cmd == CLI_CURVE && (a->given & BIT(OPT_AT)) && a->kind != CLI_KIND_TRADEOFF)
        return usage_error(a, "--at applies to --kind tradeoff only");
    if (a->cmd == CLI_CURVE && (a->given & (BIT(OPT_SUBSAMPLE) | BIT(OPT_GROUP) | BIT(OPT_INVERSE) | BIT(OPT_SYMMETRIZE))) &&
        a->kind != CLI_KIND_TRADEOFF)
        return usage_error(a, "--subsample, --group, --inverse and --symmetrize apply to --kind tradeoff only");
    a->tf_inverse = (a->given & BIT(OPT_INVERSE)) != 0;
    a->tf_symmetrize = (a->given & BIT(OPT_SYMMETRIZE)) != 0;
    if (a->cmd == CLI_CURVE && a->nspecs > 1 && (a->given & BIT(OPT_AT)))
        return usage_error(a, "--at takes one SPEC, got %zu", a->nspecs);
    if (a->cmd == CLI_CURVE && a->nlabels && a->nlabels != a->nspecs)
        return usage_error(a, "--label gives %zu labels for %zu SPECs (one each)", a->nlabels, a->nspecs);
    if (a->cmd == CLI_CURVE && (a->given & BIT(OPT_FROM)) && (a->given & BIT(OPT_TO)) && !(a->from < a->to))
        return cli_fail(CLI_EXIT_USAGE, "--from must be less than --to, got %.17g and %.17g", a->from, a->to);
    if (a->cmd == CLI_PROFILE && !(a->from < a->to))
        return cli_fail(CLI_EXIT_USAGE, "--from must be less than --to, got %.17g and %.17g",
                        a->from, a->to);
    if (a->cmd == CLI_PROFILE && a->log_scale && !(a->from > 0))
        return usage_error(a, "--log needs --from > 0 (log-spaced epsilons), got %.17g", a->from);
    if ((a->given & BIT(OPT_JSON)) && (a->given & BIT(OPT_FORMAT)) && a->format != CLI_FORMAT_JSON &&
        a->cmd != CLI_CURVE)
        return usage_error(a, "--json and --format %s contradict each other",
                           a->format == CLI_FORMAT_CSV ? "csv" : "text");
    if (a->cmd != CLI_CURVE && a->format == CLI_FORMAT_JSON)
        a->json = 1;
    if (a->all_methods && a->nvalues > 1)
        return usage_error(a, "--method all takes one %s value, got %zu",
                           a->cmd == CLI_EPSILON ? "--delta" : "--epsilon", a->nvalues);
    if (a->all_methods && a->cmd != CLI_CURVE && a->format == CLI_FORMAT_CSV)
        return usage_error(a, "--method all has no CSV form here (dpacct curve --method all writes CSV)");
    /* the mu-GDP bracket is shown in text and JSON only */
    if (a->gdp_mu && a->all_methods)
        return usage_error(a, "--gdp-mu takes one method, not --method all");
    if (a->gdp_mu && a->format == CLI_FORMAT_CSV)
        return usage_error(a, "--gdp-mu has no CSV form (use --json)");
    return CLI_EXIT_OK;
}

static void init_args(cli_args *a, cli_command cmd)
{
    memset(a, 0, sizeof *a);
    a->cmd = cmd;
    a->tolerance = CLI_DEFAULT_TOLERANCE;
    a->points = CLI_DEFAULT_POINTS;
    a->nvalues = 1;
    a->log_scale_axes = CLI_LOG_DEFAULT;
    a->direction = DPA_DIR_REMOVE;
    dpa_options_init(&a->opt);
    /* the FFT plan cache of the PLD method (docs/cli.md "FFT plan cache") */
    a->opt.fft_cache_dir = dpa_wisdom_default_dir(a->fft_cache_dir, sizeof a->fft_cache_dir);
}

int cli_parse_args(cli_command cmd, int argc, char **argv, int first, cli_args *a)
{
    struct option longopts[OPT_COUNT + 1];
    /* "-": SPECs come back in place (code 1), so errors keep the order of
     * the command line; ":": a missing value is ':', not '?'; getopt_long
     * itself prints nothing (opterr = 0), dpacct says what was wrong */
    const char *shortopts = cmd == CLI_CURVE || cmd == CLI_REPORT ? "-:o:" : "-:";
    int rc = CLI_EXIT_OK;

    init_args(a, cmd);
    for (int i = 0; i < OPT_COUNT; i++)
        longopts[i] = (struct option){options[i].name, options[i].has_value ? required_argument : no_argument,
                                      NULL, 256 + i};
    longopts[OPT_COUNT] = (struct option){NULL, 0, NULL, 0};
    /* getopt_long scans argv[optind..]: the command's arguments, with
     * argv[first - 1] (the command name) standing in for argv[0] */
    opterr = 0;
    optind = 0; /* glibc: a full reset of getopt's state */
    while (rc == CLI_EXIT_OK) {
        int cur = optind ? optind : 1; /* the element getopt_long looks at */
        int c = getopt_long(argc - first + 1, argv + first - 1, shortopts, longopts, NULL);
        const char *elem = argv[first - 1 + cur];
        if (c == -1)
            break;
        if (c == 1)
            rc = take_spec(a, optarg);
        else if (c == '?' || c == ':')
            rc = take_option(a, elem, NULL, c == ':');
        else
            rc = take_option(a, elem, optarg, 0);
    }
    /* after "--": every argument is a SPEC */
    for (int i = first - 1 + optind; rc == CLI_EXIT_OK && i < argc; i++)
        rc = take_spec(a, argv[i]);
    return rc == CLI_EXIT_OK ? check_complete(a) : rc;
}

int cli_wants_help(int argc, char **argv, int first)
{
    for (int i = first; i < argc; i++) {
        if (!strcmp(argv[i], "--"))
            return 0;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return 1;
    }
    return 0;
}

/* 1 if the command line asks for JSON output: --json, --format json or
 * --format=json before any "--". */
int cli_wants_json(int argc, char **argv, int first)
{
    for (int i = first; i < argc; i++) {
        if (!strcmp(argv[i], "--"))
            return 0;
        if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "--format=json") ||
            (!strcmp(argv[i], "--format") && i + 1 < argc && !strcmp(argv[i + 1], "json")))
            return 1;
    }
    return 0;
}
