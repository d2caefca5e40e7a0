/* dpacct ledger's command line: the help text, the options (getopt_long,
 * exact names only) and the filter configuration they give.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "ledger_cli.h"

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
    "       dpacct ledger tenant add PATH --tenant T\n"
    "       dpacct ledger token create PATH --tenant T --role read|request|admin [--label L]\n"
    "       dpacct ledger token list PATH [--tenant T] [--json]\n"
    "       dpacct ledger token revoke PATH --id ID\n"
    "       dpacct ledger freeze|unfreeze|archive PATH --unit U [--reason R]\n"
    "       dpacct ledger topup PATH --unit U --filter NAME BUDGET [--reason R]\n"
    "       dpacct ledger commit|release PATH --unit U --request ID\n"
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
    "  --tenant T      add-unit: the unit's tenant (default \"default\"); tenant add,\n"
    "                  token create, token list: the tenant\n"
    "  --period S      add-unit: the budget renews every S seconds (a new\n"
    "                  generation starts with the full budget; docs/ledger.md)\n"
    "  --role R        token create: read, request or admin; the token is printed\n"
    "                  once on standard output (only its SHA-256 is kept), its id\n"
    "                  on standard error\n"
    "  --label L       token create: a note for humans\n"
    "  --id ID         token revoke: the token's id (tok_...)\n"
    "  --idempotency-key K  request: a retry with the same key answers with the\n"
    "                  first decision and charges nothing\n"
    "  --reserve       request: charge as a reservation, settled by commit or\n"
    "                  release --request ID (release only before any output)\n"
    "  --request ID    commit, release: the reservation's request id\n"
    "  --reason R      freeze, unfreeze, archive, topup: recorded with the entry\n"
    "  --actor A       who is recorded as acting (default \"local\")\n"
    "  --after ID --since T --until T --limit N\n"
    "                  history: one page (JSON, with \"next\"), entries with id >\n"
    "                  ID, time in [T1, T2) (ISO 8601 UTC), at most N (1..1000)\n"
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

int cli_ledger_usage(const char *fmt, const char *arg)
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
       L_KEY_FILE, L_ANCHOR, L_TIME_LIMIT, L_TENANT, L_ROLE, L_LABEL, L_ID, L_REASON, L_REQUEST, L_IDEM_KEY,
       L_PERIOD, L_ACTOR, L_AFTER, L_SINCE, L_UNTIL, L_LIMIT, L_UNIT, L_JSON, L_AUTO_UNITS, L_RESERVE,
       L_ALLOW_DEGRADED, L_COUNT };

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
    {"tenant", required_argument, NULL, 256 + L_TENANT},
    {"role", required_argument, NULL, 256 + L_ROLE},
    {"label", required_argument, NULL, 256 + L_LABEL},
    {"id", required_argument, NULL, 256 + L_ID},
    {"reason", required_argument, NULL, 256 + L_REASON},
    {"request", required_argument, NULL, 256 + L_REQUEST},
    {"idempotency-key", required_argument, NULL, 256 + L_IDEM_KEY},
    {"period", required_argument, NULL, 256 + L_PERIOD},
    {"actor", required_argument, NULL, 256 + L_ACTOR},
    {"after", required_argument, NULL, 256 + L_AFTER},
    {"since", required_argument, NULL, 256 + L_SINCE},
    {"until", required_argument, NULL, 256 + L_UNTIL},
    {"limit", required_argument, NULL, 256 + L_LIMIT},
    {"unit", required_argument, NULL, 256 + L_UNIT},
    {"json", no_argument, NULL, 256 + L_JSON},
    {"auto-units", no_argument, NULL, 256 + L_AUTO_UNITS},
    {"reserve", no_argument, NULL, 256 + L_RESERVE},
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
    else if (*positional == 1 && (!strcmp(a->sub, "tenant") || !strcmp(a->sub, "token")) && !a->action) {
        a->action = arg; /* tenant add, token create|list|revoke: PATH comes next */
        return CLI_EXIT_OK;
    } else if (*positional == 1)
        a->path = arg;
    else
        return cli_ledger_usage("unexpected argument \"%s\"", arg);
    ++*positional;
    return CLI_EXIT_OK;
}

/* argv[2..]: SUBCOMMAND PATH and the options, split by getopt_long (in
 * order; opterr = 0, the messages are the ledger's own). */
int cli_ledger_parse(int argc, char **argv, ledger_args *a)
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
            return cli_ledger_usage("unknown option %s", elem);
        snprintf(name, sizeof name, "--%s", ledger_options[k].name);
        if (c == ':')
            return cli_ledger_usage("option %s needs a value", name);
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
        case L_TENANT: slot = &a->tenant; break;
        case L_ROLE: slot = &a->role; break;
        case L_LABEL: slot = &a->label; break;
        case L_ID: slot = &a->id; break;
        case L_REASON: slot = &a->reason; break;
        case L_REQUEST: slot = &a->request; break;
        case L_IDEM_KEY: slot = &a->idem_key; break;
        case L_PERIOD: slot = &a->period; break;
        case L_ACTOR: slot = &a->actor; break;
        case L_AFTER: slot = &a->after; break;
        case L_SINCE: slot = &a->since; break;
        case L_UNTIL: slot = &a->until; break;
        case L_LIMIT: slot = &a->limit; break;
        case L_RESERVE: a->reserve = 1; break;
        case L_UNIT:
            if (a->nunits == LEDGER_MAX_UNITS_ARGS)
                return cli_ledger_usage("at most %s --unit options", "256");
            a->units[a->nunits++] = optarg;
            break;
        case L_JSON: a->json = 1; break;
        case L_AUTO_UNITS: a->auto_units = 1; break;
        default: a->allow_degraded = 1; break;
        }
        if (slot) {
            if (*slot)
                return cli_ledger_usage("option %s given twice", name);
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
        return cli_ledger_usage("%s", "missing subcommand (init, add-unit, request, status, history, verify, export or import)");
    if (!a->path)
        return cli_ledger_usage("%s", "missing the ledger PATH");
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
char *cli_ledger_filter_config(const ledger_args *a, int *rc)
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
            *rc = cli_ledger_usage("%s", "--config replaces --filter and the budget options; give one or the other");
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
        *rc = cli_ledger_usage("%s", "budget options need --filter NAME");
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

