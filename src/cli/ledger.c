/* dpacct command-line front end: the privacy-budget ledger.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 *   dpacct ledger init PATH --filter NAME [budget options] [--unit U]... [--auto-units]
 *   dpacct ledger add-unit PATH --unit U [--filter NAME budget options]
 *   dpacct ledger request PATH --unit U --spec SPEC [--json]
 *   dpacct ledger status PATH [--unit U] [--json]
 *   dpacct ledger history PATH [--unit U] [--json]
 *   dpacct ledger verify PATH [--json]
 *   dpacct ledger export PATH                 (JSON on standard output)
 *   dpacct ledger import PATH --from FILE|-
 *   dpacct ledger upgrade PATH                (format 1 -> the hash chain)
 *   --key-file FILE (or DPACCT_LEDGER_KEY): the hash chain's secret key
 *
 * Exit status of request: 0 accepted, 3 rejected, 2 bad input, 1 failure
 * (docs/ledger.md). */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <getopt.h>
#include <sys/stat.h>
#include "cli.h"

#define LEDGER_EXIT_REJECTED 3
#define LEDGER_MAX_UNITS_ARGS 256
/* Largest export `import` reads: the text and its parsed tree must fit in
 * memory (the tree takes several times the text). */
#define LEDGER_MAX_EXPORT_BYTES ((size_t)4 << 30)

typedef struct ledger_args {
    const char *sub, *path;
    const char *filter, *config, *spec, *from;
    const char *mu, *epsilon, *delta, *rho, *order, *max_queries;
    const char *units[LEDGER_MAX_UNITS_ARGS];
    size_t nunits;
    int allow_degraded, auto_units, json;
    const char *key_file, *anchor, *time_limit;
} ledger_args;

static const char ledger_help[] =
    "Usage: dpacct ledger init PATH --filter NAME [BUDGET] [--unit U]... [--auto-units]\n"
    "       dpacct ledger add-unit PATH --unit U [--filter NAME BUDGET]\n"
    "       dpacct ledger request PATH --unit U --spec SPEC [--json]\n"
    "       dpacct ledger status PATH [--unit U] [--json]\n"
    "       dpacct ledger history PATH [--unit U] [--json]\n"
    "       dpacct ledger verify PATH [--json]\n"
    "       dpacct ledger export PATH > FILE\n"
    "       dpacct ledger import PATH --from FILE|-\n"
    "       dpacct ledger upgrade PATH\n"
    "\n"
    "A durable privacy-budget ledger: per unit (a dataset, a user, ...) a\n"
    "privacy filter that accepts or rejects each query before it runs, so that\n"
    "the whole adaptive interaction stays within the budget.  PATH is an SQLite\n"
    "database file, or a PostgreSQL connection URI (postgresql://user@host/db)\n"
    "for a ledger shared by several hosts; init creates it and never overwrites\n"
    "one.  Every request is one transaction: many processes may use one ledger\n"
    "at once, and a process killed at any moment loses nothing accepted.\n"
    "export writes the whole ledger as JSON; import creates a new ledger from\n"
    "it (e.g. to move an SQLite ledger to PostgreSQL), replaying it first.\n"
    "\n"
    "Filters (--filter) and their budgets (docs/filters.md):\n"
    "  pure            --epsilon E          sum of pure epsilons <= E\n"
    "  basic           --epsilon E --delta D  (epsilon, delta) composition,\n"
    "                                       prod (1 - delta_i) >= 1 - D\n"
    "  rdp             --rho R --order A    Renyi DP at order A (comma lists for a\n"
    "                                       vector of orders)\n"
    "  zcdp            --rho R              zero-concentrated DP\n"
    "  gdp             --mu M               Gaussian DP, naive: sum mu_i^2 <= M^2\n"
    "  gdp-residue     --mu M               Gaussian DP residue filter (RF Thm 5):\n"
    "                                       never worse than gdp, better for\n"
    "                                       non-Gaussian queries\n"
    "  natural         --mu M | --delta D   natural filter for GDP or (0, delta) queries\n"
    "  natural-approx  --epsilon E --delta D --allow-degraded --max-queries K\n"
    "                                       natural (epsilon, delta) filter: NOT free,\n"
    "                                       reports its degraded guarantee (RF Thm 9)\n"
    "                                       for at most K queries\n"
    "  --config JSON   the filter configuration as JSON instead\n"
    "                  ({\"filter\": \"gdp-residue\", \"mu\": 1})\n"
    "\n"
    "Options:\n"
    "  --unit U        the unit (init, add-unit: may be repeated in init)\n"
    "  --auto-units    init: a request for an unknown unit creates it with the\n"
    "                  default filter (otherwise it is refused as bad input)\n"
    "  --spec SPEC     request: the query's event spec (docs/spec.md): JSON text,\n"
    "                  a file path, or - for standard input\n"
    "  --from FILE     import: the export to read (- for standard input)\n"
    "  --key-file FILE the secret key of the ledger's hash chain (HMAC-SHA-256),\n"
    "                  or the environment variable DPACCT_LEDGER_KEY; never stored\n"
    "                  in the ledger: give it to init and to every later command\n"
    "  --anchor L:H    verify: the \"head\" of an earlier verify, kept elsewhere:\n"
    "                  also detects a history cut or rolled back (docs/ledger.md)\n"
    "  --time-limit S  request: refuse a decision that takes longer than S\n"
    "                  seconds as too costly (default 5; 0: no limit)\n"
    "  --json          print one JSON object\n"
    "  -h, --help      print this help and exit\n"
    "\n"
    "Exit status: request: 0 accepted, 3 rejected, 2 bad input (unknown unit,\n"
    "malformed spec, a spec the filter cannot account, a decision too costly\n"
    "within --time-limit: nothing recorded or charged),\n"
    "1 failure (storage: nothing recorded or charged).  verify: 0 the history\n"
    "replays to the stored state, 1 it does not (the problems are listed).\n"
    "Other subcommands: 0 success, 2 bad input, 1 failure.\n"
    "\n"
    "Example:\n"
    "  dpacct ledger init budgets.db --filter gdp-residue --mu 1 --unit alice\n"
    "  dpacct ledger request budgets.db --unit alice --spec '{\"pure\": {\"epsilon\": 0.5}}'\n";

void cli_print_ledger_help(void)
{
    fputs(ledger_help, stdout);
}

static int usage(const char *fmt, const char *arg)
{
    char msg[600];
    snprintf(msg, sizeof msg, fmt, arg);
    cli_fail(CLI_EXIT_USAGE, "ledger: %s", msg);
    if (!cli_json_errors())
        fputs("Try 'dpacct ledger --help'.\n", stderr);
    return CLI_EXIT_USAGE;
}

/* The options: the valued ones first, in the order of ledger_args' slots. */
enum { L_FILTER, L_CONFIG, L_SPEC, L_MU, L_EPSILON, L_DELTA, L_RHO, L_ORDER, L_FROM, L_MAX_QUERIES,
       L_KEY_FILE, L_ANCHOR, L_TIME_LIMIT, L_UNIT, L_JSON, L_AUTO_UNITS, L_ALLOW_DEGRADED, L_COUNT };

static const struct option ledger_options[L_COUNT + 1] = {
    {"filter", required_argument, NULL, 256 + L_FILTER},
    {"config", required_argument, NULL, 256 + L_CONFIG},
    {"spec", required_argument, NULL, 256 + L_SPEC},
    {"mu", required_argument, NULL, 256 + L_MU},
    {"epsilon", required_argument, NULL, 256 + L_EPSILON},
    {"delta", required_argument, NULL, 256 + L_DELTA},
    {"rho", required_argument, NULL, 256 + L_RHO},
    {"order", required_argument, NULL, 256 + L_ORDER},
    {"from", required_argument, NULL, 256 + L_FROM},
    {"max-queries", required_argument, NULL, 256 + L_MAX_QUERIES},
    {"key-file", required_argument, NULL, 256 + L_KEY_FILE},
    {"anchor", required_argument, NULL, 256 + L_ANCHOR},
    {"time-limit", required_argument, NULL, 256 + L_TIME_LIMIT},
    {"unit", required_argument, NULL, 256 + L_UNIT},
    {"json", no_argument, NULL, 256 + L_JSON},
    {"auto-units", no_argument, NULL, 256 + L_AUTO_UNITS},
    {"allow-degraded", no_argument, NULL, 256 + L_ALLOW_DEGRADED},
    {NULL, 0, NULL, 0},
};

/* The option argv element elem names exactly ("--name", "--name=value" for
 * the valued ones); -1 if none.  getopt_long also takes unambiguous
 * prefixes ("--fil"); the ledger does not. */
static int exact_ledger_option(const char *elem)
{
    const char *eq;
    size_t len;
    if (elem[0] != '-' || elem[1] != '-' || !elem[2])
        return -1;
    eq = strchr(elem + 2, '=');
    len = eq ? (size_t)(eq - elem - 2) : strlen(elem + 2);
    for (int k = 0; k < L_COUNT; k++)
        if (strlen(ledger_options[k].name) == len && !strncmp(ledger_options[k].name, elem + 2, len))
            return eq && ledger_options[k].has_arg == no_argument ? -1 : k;
    return -1;
}

static int take_positional(ledger_args *a, const char *arg, int *positional)
{
    if (*positional == 0)
        a->sub = arg;
    else if (*positional == 1)
        a->path = arg;
    else
        return usage("unexpected argument \"%s\"", arg);
    ++*positional;
    return CLI_EXIT_OK;
}

/* argv[2..]: SUBCOMMAND PATH and the options, split by getopt_long (in
 * order; opterr = 0, the messages are the ledger's own). */
static int parse(int argc, char **argv, ledger_args *a)
{
    int positional = 0;
    memset(a, 0, sizeof *a);
    opterr = 0;
    optind = 0; /* glibc: a full reset of getopt's state */
    for (;;) {
        int cur = optind ? optind : 1, k, rc;
        /* argv[1] ("ledger") stands in for argv[0] */
        int c = getopt_long(argc - 1, argv + 1, "-:", ledger_options, NULL);
        const char *elem = argv[1 + cur], **slot = NULL;
        char name[64];
        if (c == -1)
            break;
        if (c == 1) {
            if ((rc = take_positional(a, optarg, &positional)) != CLI_EXIT_OK)
                return rc;
            continue;
        }
        k = exact_ledger_option(elem);
        if (k < 0)
            return usage("unknown option %s", elem);
        snprintf(name, sizeof name, "--%s", ledger_options[k].name);
        if (c == ':')
            return usage("option %s needs a value", name);
        switch (k) {
        case L_FILTER: slot = &a->filter; break;
        case L_CONFIG: slot = &a->config; break;
        case L_SPEC: slot = &a->spec; break;
        case L_MU: slot = &a->mu; break;
        case L_EPSILON: slot = &a->epsilon; break;
        case L_DELTA: slot = &a->delta; break;
        case L_RHO: slot = &a->rho; break;
        case L_ORDER: slot = &a->order; break;
        case L_FROM: slot = &a->from; break;
        case L_MAX_QUERIES: slot = &a->max_queries; break;
        case L_KEY_FILE: slot = &a->key_file; break;
        case L_ANCHOR: slot = &a->anchor; break;
        case L_TIME_LIMIT: slot = &a->time_limit; break;
        case L_UNIT:
            if (a->nunits == LEDGER_MAX_UNITS_ARGS)
                return usage("at most %s --unit options", "256");
            a->units[a->nunits++] = optarg;
            break;
        case L_JSON: a->json = 1; break;
        case L_AUTO_UNITS: a->auto_units = 1; break;
        default: a->allow_degraded = 1; break;
        }
        if (slot) {
            if (*slot)
                return usage("option %s given twice", name);
            *slot = optarg;
        }
    }
    /* after "--": positional arguments only */
    for (int i = 1 + optind; i < argc; i++) {
        int rc = take_positional(a, argv[i], &positional);
        if (rc != CLI_EXIT_OK)
            return rc;
    }
    if (!a->sub)
        return usage("%s", "missing subcommand (init, add-unit, request, status, history, verify, export or import)");
    if (!a->path)
        return usage("%s", "missing the ledger PATH");
    return CLI_EXIT_OK;
}

/* A number, or a comma-separated list of numbers (as a JSON array). */
static json_t *number_json(const char *name, const char *text, int list_ok)
{
    json_t *arr = json_array();
    const char *p = text;
    for (;;) {
        char *end;
        double x;
        errno = 0;
        x = strtod(p, &end);
        if (end == p || errno == ERANGE || !isfinite(x) || (*end && *end != ',')) {
            json_decref(arr);
            cli_fail(CLI_EXIT_USAGE, "ledger: --%s: expected a finite number%s, got \"%s\"", name,
                     list_ok ? " or a comma-separated list" : "", text);
            return NULL;
        }
        json_array_append_new(arr, json_real(x));
        if (!*end)
            break;
        if (!list_ok) {
            json_decref(arr);
            cli_fail(CLI_EXIT_USAGE, "ledger: --%s: expected one number, got \"%s\"", name, text);
            return NULL;
        }
        p = end + 1;
    }
    if (json_array_size(arr) == 1) {
        json_t *one = json_incref(json_array_get(arr, 0));
        json_decref(arr);
        return one;
    }
    return arr;
}

/* The filter configuration JSON of the options (malloc'ed), NULL when no
 * filter option was given (*rc = OK) or on error (*rc set). */
static char *filter_config(const ledger_args *a, int *rc)
{
    struct { const char *key, *text; int list; } nums[] = {
        {"mu", a->mu, 0}, {"epsilon", a->epsilon, 0}, {"delta", a->delta, 0},
        {"rho", a->rho, 1}, {"order", a->order, 1}, {"max_queries", a->max_queries, 0},
    };
    json_t *o;
    char *s;
    int any = a->filter || a->allow_degraded;
    *rc = CLI_EXIT_OK;
    for (size_t k = 0; k < sizeof nums / sizeof *nums; k++)
        any |= nums[k].text != NULL;
    if (a->config) {
        if (any) {
            *rc = usage("%s", "--config replaces --filter and the budget options; give one or the other");
            return NULL;
        }
        s = strdup(a->config);
        if (!s)
            *rc = cli_fail(CLI_EXIT_FAIL, "out of memory");
        return s;
    }
    if (!any)
        return NULL;
    if (!a->filter) {
        *rc = usage("%s", "budget options need --filter NAME");
        return NULL;
    }
    o = json_object();
    json_object_set_new(o, "filter", json_string(a->filter));
    for (size_t k = 0; k < sizeof nums / sizeof *nums; k++) {
        json_t *v;
        if (!nums[k].text)
            continue;
        v = number_json(nums[k].key, nums[k].text, nums[k].list);
        if (!v) {
            json_decref(o);
            *rc = CLI_EXIT_USAGE;
            return NULL;
        }
        json_object_set_new(o, nums[k].key, v);
    }
    if (a->allow_degraded)
        json_object_set_new(o, "allow_degraded", json_true());
    s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    if (!s)
        *rc = cli_fail(CLI_EXIT_FAIL, "out of memory");
    return s;
}

static int lib_fail(const dpa_error *err);

static int only(const ledger_args *a, int allow_filter, int allow_units, int allow_spec,
                int allow_auto)
{
    int budget = a->filter || a->config || a->mu || a->epsilon || a->delta || a->rho || a->order ||
                 a->max_queries || a->allow_degraded;
    if (budget && !allow_filter)
        return usage("%s: takes no filter or budget options", a->sub);
    if (a->nunits > (size_t)allow_units)
        return usage(allow_units ? "%s: takes one --unit" : "%s: takes no --unit", a->sub);
    if (a->spec && !allow_spec)
        return usage("%s: takes no --spec", a->sub);
    if (a->from && strcmp(a->sub, "import"))
        return usage("%s: --from belongs to import", a->sub);
    if (a->auto_units && !allow_auto)
        return usage("%s: --auto-units belongs to init", a->sub);
    if (a->anchor && strcmp(a->sub, "verify"))
        return usage("%s: --anchor belongs to verify", a->sub);
    if (a->time_limit && strcmp(a->sub, "request"))
        return usage("%s: --time-limit belongs to request", a->sub);
    return CLI_EXIT_OK;
}

/* The chain's key: --key-file FILE (its bytes, a final newline dropped) or
 * DPACCT_LEDGER_KEY; none: *key = NULL.  An exit status. */
#define LEDGER_MAX_KEY_BYTES 4096
static int ledger_key(const ledger_args *a, unsigned char **key, size_t *len)
{
    const char *env = getenv("DPACCT_LEDGER_KEY");
    *key = NULL;
    *len = 0;
    if (a->key_file) {
        FILE *f = fopen(a->key_file, "rb");
        unsigned char *buf = malloc(LEDGER_MAX_KEY_BYTES + 1);
        size_t n = 0;
        if (!f || !buf) {
            free(buf);
            if (f)
                fclose(f);
            return cli_fail(CLI_EXIT_USAGE, "ledger: cannot read the key file \"%s\": %s", a->key_file,
                            strerror(errno));
        }
        n = fread(buf, 1, LEDGER_MAX_KEY_BYTES + 1, f);
        fclose(f);
        if (n > 0 && buf[n - 1] == '\n')
            n--;
        if (n == 0 || n > LEDGER_MAX_KEY_BYTES) {
            free(buf);
            return cli_fail(CLI_EXIT_USAGE, "ledger: the key file \"%s\" must hold 1 to %d bytes", a->key_file,
                            LEDGER_MAX_KEY_BYTES);
        }
        *key = buf;
        *len = n;
    } else if (env && *env) {
        *len = strlen(env);
        *key = (unsigned char *)strdup(env);
        if (!*key)
            return cli_fail(CLI_EXIT_FAIL, "out of memory");
    }
    return CLI_EXIT_OK;
}

/* Open the ledger with its key (read-only for status, history, verify and
 * export: a read-only file or mount can be read).  NULL after reporting. */
static dpa_ledger *open_ledger(const ledger_args *a, int readonly, int *rc)
{
    unsigned char *key;
    size_t len;
    dpa_error err;
    dpa_ledger *l;
    if ((*rc = ledger_key(a, &key, &len)) != CLI_EXIT_OK)
        return NULL;
    l = dpa_ledger_open_keyed(a->path, readonly, key, len, &err);
    if (key)
        memset(key, 0, len);
    free(key);
    if (!l)
        *rc = lib_fail(&err);
    return l;
}

static int lib_fail(const dpa_error *err)
{
    const char *msg = err->message[0] ? err->message : dpa_status_string(err->status);
    return cli_fail(cli_exit_for(err->status), "%s", msg);
}

/* Print "key: value" lines of a JSON object (one level of nesting). */
static void print_fields(const char *indent, json_t *o)
{
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v) {
        if (json_is_object(v)) {
            printf("%s%s:\n", indent, key);
            char deeper[32];
            snprintf(deeper, sizeof deeper, "%s  ", indent);
            print_fields(deeper, v);
        } else if (json_is_real(v)) {
            /* remaining budgets: 10 digits, rounded down (never shows more
             * budget than there is; --json has the exact value); a delta is
             * the stated parameter of an (eps, delta) reading, shown as is */
            char buf[CLI_NUM_BUF];
            if (!strcmp(key, "delta") || !strcmp(key, "report_delta"))
                cli_format_shortest(buf, sizeof buf, json_real_value(v));
            else
                cli_format(buf, sizeof buf, json_real_value(v), 10, DPA_ROUND_DOWN);
            printf("%s%s: %s\n", indent, key, buf);
        } else {
            char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
            printf("%s%s: %s\n", indent, key, t ? t : "?");
            free(t);
        }
    }
}

static int run_init(const ledger_args *a)
{
    dpa_ledger_init_opts o;
    dpa_error err;
    int rc;
    char *config;
    if ((rc = only(a, 1, LEDGER_MAX_UNITS_ARGS, 0, 1)) != CLI_EXIT_OK)
        return rc;
    config = filter_config(a, &rc);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (!config)
        return usage("%s", "init needs --filter NAME and its budget (or --config JSON)");
    o.filter_config = config;
    o.auto_units = a->auto_units;
    o.units = a->units;
    o.nunits = a->nunits;
    for (size_t i = 0; i < a->nunits; i++)
        for (size_t j = 0; j < i; j++)
            if (!strcmp(a->units[i], a->units[j])) {
                free(config);
                return usage("unit \"%s\" given twice", a->units[i]);
            }
    /* the ledger and its units in one transaction: a bad unit leaves nothing */
    {
        unsigned char *key;
        size_t len;
        dpa_status st;
        if ((rc = ledger_key(a, &key, &len)) != CLI_EXIT_OK) {
            free(config);
            return rc;
        }
        st = dpa_ledger_create_keyed(a->path, &o, key, len, &err);
        free(key);
        if (st != DPA_OK) {
            free(config);
            return lib_fail(&err);
        }
    }
    free(config);
    if (a->json) {
        printf("{\"created\": true, \"units\": %zu}\n", a->nunits);
    } else {
        char shown[512];
        dpa_ledger_location_display(a->path, shown, sizeof shown);
        printf("created ledger %s with %zu unit%s\n", shown, a->nunits, a->nunits == 1 ? "" : "s");
    }
    return CLI_EXIT_OK;
}

static int run_add_unit(const ledger_args *a)
{
    dpa_error err;
    dpa_ledger *l;
    int rc;
    char *config;
    if ((rc = only(a, 1, 1, 0, 0)) != CLI_EXIT_OK)
        return rc;
    if (a->nunits != 1)
        return usage("%s", "add-unit needs --unit U");
    config = filter_config(a, &rc);
    if (rc != CLI_EXIT_OK)
        return rc;
    l = open_ledger(a, 0, &rc);
    if (!l) {
        free(config);
        return rc;
    }
    if (dpa_ledger_add_unit(l, a->units[0], config, &err) != DPA_OK) {
        free(config);
        dpa_ledger_close(l);
        return lib_fail(&err);
    }
    free(config);
    dpa_ledger_close(l);
    if (a->json)
        printf("{\"added\": true}\n");
    else
        printf("added unit %s\n", a->units[0]);
    return CLI_EXIT_OK;
}

static int run_request(const ledger_args *a)
{
    dpa_error err;
    dpa_ledger *l;
    dpa_ledger_decision d;
    const char *text;
    char *to_free = NULL;
    int rc;
    json_t *rem;
    if ((rc = only(a, 0, 1, 1, 0)) != CLI_EXIT_OK)
        return rc;
    if (a->nunits != 1)
        return usage("%s", "request needs --unit U");
    if (!a->spec)
        return usage("%s", "request needs --spec SPEC");
    rc = cli_read_spec(a->spec, &text, &to_free);
    if (rc != CLI_EXIT_OK)
        return rc;
    l = open_ledger(a, 0, &rc);
    if (!l) {
        free(to_free);
        return rc;
    }
    if (a->time_limit) {
        char *end;
        double t = strtod(a->time_limit, &end);
        if (end == a->time_limit || *end || dpa_ledger_set_decision_limit(l, t, &err) != DPA_OK) {
            free(to_free);
            dpa_ledger_close(l);
            return usage("--time-limit: seconds in [0, 1e6] (0: no limit), got \"%s\"", a->time_limit);
        }
    }
    if (dpa_ledger_request(l, a->units[0], text, &d, &err) != DPA_OK) {
        free(to_free);
        dpa_ledger_close(l);
        return lib_fail(&err);
    }
    free(to_free);
    dpa_ledger_close(l);
    rem = json_loads(d.remaining, 0, NULL);
    if (a->json) {
        json_t *o = json_object();
        char *s;
        json_object_set_new(o, "accepted", json_boolean(d.accepted));
        json_object_set_new(o, "request", json_integer(d.request_id));
        json_object_set_new(o, "unit", json_string(a->units[0]));
        json_object_set_new(o, "remaining", rem ? rem : json_string(d.remaining));
        json_object_set_new(o, "reason", json_string(d.reason));
        s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        json_decref(o);
        if (!s) {
            dpa_ledger_decision_clear(&d);
            return cli_fail(CLI_EXIT_FAIL, "out of memory");
        }
        puts(s);
        free(s);
    } else {
        printf("%s (request %lld, unit %s)\n", d.accepted ? "accepted" : "rejected", d.request_id,
               a->units[0]);
        if (d.reason[0])
            printf("reason: %s\n", d.reason);
        printf("remaining:\n");
        if (rem)
            print_fields("  ", rem);
        else
            printf("  %s\n", d.remaining);
        json_decref(rem);
    }
    rc = d.accepted ? CLI_EXIT_OK : LEDGER_EXIT_REJECTED;
    dpa_ledger_decision_clear(&d);
    return rc;
}

/* Open the ledger, let `fn` build its JSON answer (for one unit, or all
 * when unit is NULL), close.  An exit status; *json on success. */
typedef dpa_status (*ledger_json_fn)(dpa_ledger *l, const char *unit, char **json, dpa_error *err);

static int ledger_json(const ledger_args *a, ledger_json_fn fn, const char *unit, char **json)
{
    dpa_error err;
    int rc;
    dpa_ledger *l = open_ledger(a, 1, &rc);
    dpa_status st;
    if (!l)
        return rc;
    st = fn(l, unit, json, &err);
    dpa_ledger_close(l);
    return st == DPA_OK ? CLI_EXIT_OK : lib_fail(&err);
}

/* --json: print the answer as is (*root = NULL); otherwise parse it for the
 * text output.  An exit status. */
static int json_or_parse(const ledger_args *a, char *json, const char *what, json_t **root)
{
    *root = NULL;
    if (a->json) {
        puts(json);
        free(json);
        return CLI_EXIT_OK;
    }
    *root = json_loads(json, 0, NULL);
    free(json);
    return *root ? CLI_EXIT_OK : cli_library_bug(what);
}

static int run_status(const ledger_args *a)
{
    char *json;
    int rc;
    json_t *root, *units, *u;
    size_t i;
    if ((rc = only(a, 0, 1, 0, 0)) != CLI_EXIT_OK ||
        (rc = ledger_json(a, dpa_ledger_status_json, a->nunits ? a->units[0] : NULL, &json)) != CLI_EXIT_OK ||
        (rc = json_or_parse(a, json, "ledger status JSON does not parse", &root)) != CLI_EXIT_OK || !root)
        return rc;
    units = json_object_get(root, "units");
    if (!a->nunits) {
        char *f = json_dumps(json_object_get(root, "default_filter"), JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
        printf("default filter: %s%s\n", f ? f : "?",
               json_is_true(json_object_get(root, "auto_units")) ? " (units created on first request)" : "");
        printf("units: %zu\n", json_array_size(units));
        free(f);
    }
    json_array_foreach(units, i, u) {
        char *f = json_dumps(json_object_get(u, "filter"), JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
        printf("\nunit %s\n", json_string_value(json_object_get(u, "unit")));
        printf("  filter: %s\n", f ? f : "?");
        printf("  requests: %lld (accepted %lld, rejected %lld)%s\n",
               (long long)json_integer_value(json_object_get(u, "requests")),
               (long long)json_integer_value(json_object_get(u, "accepted")),
               (long long)json_integer_value(json_object_get(u, "rejected")),
               json_is_true(json_object_get(u, "exhausted")) ? ", budget exhausted" : "");
        printf("  remaining:\n");
        print_fields("    ", json_object_get(u, "remaining"));
        free(f);
    }
    json_decref(root);
    return CLI_EXIT_OK;
}

static int run_history(const ledger_args *a)
{
    char *json;
    int rc;
    json_t *arr, *r;
    size_t i;
    if ((rc = only(a, 0, 1, 0, 0)) != CLI_EXIT_OK ||
        (rc = ledger_json(a, dpa_ledger_history_json, a->nunits ? a->units[0] : NULL, &json)) != CLI_EXIT_OK ||
        (rc = json_or_parse(a, json, "ledger history JSON does not parse", &arr)) != CLI_EXIT_OK || !arr)
        return rc;
    json_array_foreach(arr, i, r) {
        /* 12 digits for reading; --json has the spec exactly */
        char *spec = json_dumps(json_object_get(r, "spec"), JSON_COMPACT | JSON_ENCODE_ANY |
                                JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
        const char *reason = json_string_value(json_object_get(r, "reason"));
        printf("%lld  %s  %-8s  %s  %s%s%s\n", (long long)json_integer_value(json_object_get(r, "id")),
               json_string_value(json_object_get(r, "time")),
               json_string_value(json_object_get(r, "decision")),
               json_string_value(json_object_get(r, "unit")), spec ? spec : "?",
               reason && reason[0] ? "  # " : "", reason ? reason : "");
        free(spec);
    }
    if (json_array_size(arr) == 0)
        printf("no requests\n");
    json_decref(arr);
    return CLI_EXIT_OK;
}

static int run_verify(const ledger_args *a)
{
    dpa_error err;
    dpa_ledger *l;
    char *report;
    int rc, ok;
    if ((rc = only(a, 0, 0, 0, 0)) != CLI_EXIT_OK)
        return rc;
    l = open_ledger(a, 1, &rc);
    if (!l)
        return rc;
    if (dpa_ledger_verify_anchor(l, a->anchor, &ok, &report, &err) != DPA_OK) {
        dpa_ledger_close(l);
        return lib_fail(&err);
    }
    dpa_ledger_close(l);
    if (a->json) {
        puts(report);
    } else {
        json_t *root = json_loads(report, 0, NULL);
        json_t *p;
        size_t i;
        if (!root) {
            free(report);
            return cli_library_bug("ledger verify JSON does not parse");
        }
        printf("%s: %lld units, %lld requests replayed",
               ok ? "ok" : "INCONSISTENT",
               (long long)json_integer_value(json_object_get(root, "units")),
               (long long)json_integer_value(json_object_get(root, "requests")));
        if (!ok)
            printf(", %lld problems", (long long)json_integer_value(json_object_get(root, "problems_found")));
        printf("\n");
        if (ok)
            printf("head: %s (keep it elsewhere; verify --anchor checks it later)\n",
                   json_string_value(json_object_get(root, "head")));
        json_array_foreach(json_object_get(root, "problems"), i, p) {
            json_t *id = json_object_get(p, "request");
            printf("  unit %s", json_string_value(json_object_get(p, "unit")));
            if (id)
                printf(", request %lld", (long long)json_integer_value(id));
            printf(": %s\n", json_string_value(json_object_get(p, "problem")));
        }
        json_decref(root);
    }
    free(report);
    return ok ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

/* dpa_ledger_export_json in ledger_json's shape (exports the whole ledger) */
static dpa_status export_all(dpa_ledger *l, const char *unit, char **json, dpa_error *err)
{
    (void)unit;
    return dpa_ledger_export_json(l, json, err);
}

static int run_export(const ledger_args *a)
{
    char *json;
    int rc;
    if ((rc = only(a, 0, 0, 0, 0)) != CLI_EXIT_OK)
        return rc;
    if (a->json)
        return usage("%s", "export always prints JSON (no --json)");
    if ((rc = ledger_json(a, export_all, NULL, &json)) != CLI_EXIT_OK)
        return rc;
    puts(json);
    free(json);
    return CLI_EXIT_OK;
}

static int run_import(const ledger_args *a)
{
    dpa_error err;
    const char *text;
    char *to_free = NULL;
    char shown[512];
    int rc;
    if ((rc = only(a, 0, 0, 0, 0)) != CLI_EXIT_OK)
        return rc;
    if (!a->from)
        return usage("%s", "import needs --from FILE (or - for standard input)");
    /* the input's size before reading it: a file larger than the limit, or
     * one that is not a regular file or pipe (/dev/zero), is refused at once */
    {
        struct stat sb;
        int fd_ok = !strcmp(a->from, "-") ? fstat(0, &sb) == 0
                                          : (a->from[strspn(a->from, " \t\r\n")] != '{' && stat(a->from, &sb) == 0);
        if (fd_ok && !S_ISREG(sb.st_mode) && !S_ISFIFO(sb.st_mode) && !S_ISSOCK(sb.st_mode))
            return cli_fail(CLI_EXIT_USAGE, "ledger import: %s is not a regular file or a pipe",
                            strcmp(a->from, "-") ? a->from : "standard input");
        if (fd_ok && S_ISREG(sb.st_mode) && (unsigned long long)sb.st_size > LEDGER_MAX_EXPORT_BYTES)
            return cli_fail(CLI_EXIT_USAGE, "ledger import: %s is larger than %zu MiB",
                            strcmp(a->from, "-") ? a->from : "standard input", LEDGER_MAX_EXPORT_BYTES >> 20);
    }
    /* a file, - or inline JSON, like a SPEC, but without the spec's size
     * limit: a ledger's history can be large */
    rc = cli_read_document(a->from, "ledger export", LEDGER_MAX_EXPORT_BYTES, &text, &to_free);
    if (rc != CLI_EXIT_OK)
        return rc;
    /* the import replays the history inside its transaction and commits
     * only a ledger that verifies: no second replay here */
    {
        unsigned char *key;
        size_t len;
        dpa_status st;
        if ((rc = ledger_key(a, &key, &len)) != CLI_EXIT_OK) {
            free(to_free);
            return rc;
        }
        st = dpa_ledger_import_json_keyed(a->path, text, key, len, &err);
        free(key);
        if (st != DPA_OK) {
            free(to_free);
            return lib_fail(&err);
        }
    }
    free(to_free);
    if (a->json) {
        printf("{\"imported\": true, \"verified\": true}\n");
    } else {
        dpa_ledger_location_display(a->path, shown, sizeof shown);
        printf("imported into %s; verify: ok (the history was replayed before the import committed)\n", shown);
    }
    return CLI_EXIT_OK;
}

static int run_upgrade(const ledger_args *a)
{
    dpa_error err;
    unsigned char *key;
    size_t len;
    dpa_status st;
    int rc;
    if ((rc = only(a, 0, 0, 0, 0)) != CLI_EXIT_OK || (rc = ledger_key(a, &key, &len)) != CLI_EXIT_OK)
        return rc;
    st = dpa_ledger_upgrade(a->path, key, len, &err);
    free(key);
    if (st != DPA_OK)
        return lib_fail(&err);
    if (a->json)
        printf("{\"upgraded\": true}\n");
    else
        printf("upgraded; verify: ok (the history was replayed and chained before the upgrade committed)\n");
    return CLI_EXIT_OK;
}

int cli_run_ledger(int argc, char **argv)
{
    ledger_args a;
    int rc;
    if (cli_wants_help(argc, argv, 2) || argc == 2) {
        if (argc == 2)
            return usage("%s", "missing subcommand (init, add-unit, request, status, history, verify, export or import)");
        cli_print_ledger_help();
        return CLI_EXIT_OK;
    }
    rc = parse(argc, argv, &a);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (!strcmp(a.sub, "init"))
        return run_init(&a);
    if (!strcmp(a.sub, "add-unit"))
        return run_add_unit(&a);
    if (!strcmp(a.sub, "request"))
        return run_request(&a);
    if (!strcmp(a.sub, "status"))
        return run_status(&a);
    if (!strcmp(a.sub, "history"))
        return run_history(&a);
    if (!strcmp(a.sub, "verify"))
        return run_verify(&a);
    if (!strcmp(a.sub, "export"))
        return run_export(&a);
    if (!strcmp(a.sub, "import"))
        return run_import(&a);
    if (!strcmp(a.sub, "upgrade"))
        return run_upgrade(&a);
    return usage("unknown subcommand \"%s\" (init, add-unit, request, status, history, verify, export or import)", a.sub);
}
