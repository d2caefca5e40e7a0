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
#include <sys/stat.h>
#include "cli.h"
#include "ledger_cli.h"

#define LEDGER_EXIT_REJECTED 3
/* Largest export `import` reads: the text and its parsed tree must fit in
 * memory (the tree takes several times the text). */
#define LEDGER_MAX_EXPORT_BYTES ((size_t)4 << 30)



static int only(const ledger_args *a, int allow_filter, int allow_units, int allow_spec,
                int allow_auto)
{
    int budget = a->filter || a->config || a->mu || a->epsilon || a->delta || a->rho || a->order ||
                 a->max_queries || a->allow_degraded;
    if (budget && !allow_filter)
        return cli_ledger_usage("%s: takes no filter or budget options", a->sub);
    if (a->nunits > (size_t)allow_units)
        return cli_ledger_usage(allow_units ? "%s: takes one --unit" : "%s: takes no --unit", a->sub);
    if (a->spec && !allow_spec)
        return cli_ledger_usage("%s: takes no --spec", a->sub);
    if (a->from && strcmp(a->sub, "import"))
        return cli_ledger_usage("%s: --from belongs to import", a->sub);
    if (a->auto_units && !allow_auto)
        return cli_ledger_usage("%s: --auto-units belongs to init", a->sub);
    if (a->anchor && strcmp(a->sub, "verify"))
        return cli_ledger_usage("%s: --anchor belongs to verify", a->sub);
    if (a->time_limit && strcmp(a->sub, "request"))
        return cli_ledger_usage("%s: --time-limit belongs to request", a->sub);
    return CLI_EXIT_OK;
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
    config = cli_ledger_filter_config(a, &rc);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (!config)
        return cli_ledger_usage("%s", "init needs --filter NAME and its budget (or --config JSON)");
    o.filter_config = config;
    o.auto_units = a->auto_units;
    o.units = a->units;
    o.nunits = a->nunits;
    for (size_t i = 0; i < a->nunits; i++)
        for (size_t j = 0; j < i; j++)
            if (!strcmp(a->units[i], a->units[j])) {
                free(config);
                return cli_ledger_usage("unit \"%s\" given twice", a->units[i]);
            }
    /* the ledger and its units in one transaction: a bad unit leaves nothing */
    {
        unsigned char *key;
        size_t len;
        dpa_status st;
        if ((rc = cli_ledger_key(a, &key, &len)) != CLI_EXIT_OK) {
            free(config);
            return rc;
        }
        st = dpa_ledger_create_keyed(a->path, &o, key, len, &err);
        free(key);
        if (st != DPA_OK) {
            free(config);
            return cli_ledger_lib_fail(&err);
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
        return cli_ledger_usage("%s", "add-unit needs --unit U");
    config = cli_ledger_filter_config(a, &rc);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (a->tenant || a->period || a->actor) {
        rc = cli_ledger_add_unit_ex(a, config);
        free(config);
        return rc;
    }
    l = cli_ledger_open(a, 0, &rc);
    if (!l) {
        free(config);
        return rc;
    }
    if (dpa_ledger_add_unit(l, a->units[0], config, &err) != DPA_OK) {
        free(config);
        dpa_ledger_close(l);
        return cli_ledger_lib_fail(&err);
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
        return cli_ledger_usage("%s", "request needs --unit U");
    if (!a->spec)
        return cli_ledger_usage("%s", "request needs --spec SPEC");
    rc = cli_read_spec(a->spec, &text, &to_free);
    if (rc != CLI_EXIT_OK)
        return rc;
    l = cli_ledger_open(a, 0, &rc);
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
            return cli_ledger_usage("--time-limit: seconds in [0, 1e6] (0: no limit), got \"%s\"", a->time_limit);
        }
    }
    if (a->idem_key || a->reserve || a->actor) {
        dpa_ledger_request_opts o = {a->actor, a->idem_key, a->reserve};
        rc = dpa_ledger_request_ex(l, a->units[0], text, &o, &d, &err);
    } else {
        rc = dpa_ledger_request(l, a->units[0], text, &d, &err);
    }
    if (rc != DPA_OK) {
        free(to_free);
        dpa_ledger_close(l);
        return cli_ledger_lib_fail(&err);
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
        if (a->idem_key || a->reserve || a->actor) {
            json_object_set_new(o, "status", json_string(d.status));
            json_object_set_new(o, "replayed", json_boolean(d.replayed));
            json_object_set_new(o, "generation", json_integer(d.generation));
        }
        s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        json_decref(o);
        if (!s) {
            dpa_ledger_decision_clear(&d);
            return cli_fail(CLI_EXIT_FAIL, "out of memory");
        }
        puts(s);
        free(s);
    } else {
        printf("%s (request %lld, unit %s)%s%s\n", d.accepted ? "accepted" : "rejected", d.request_id,
               a->units[0], d.replayed ? ", replayed: nothing charged again" : "",
               !strcmp(d.status, "reserved") ? ", reserved: commit or release it" : "");
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
    dpa_ledger *l = cli_ledger_open(a, 1, &rc);
    dpa_status st;
    if (!l)
        return rc;
    st = fn(l, unit, json, &err);
    dpa_ledger_close(l);
    return st == DPA_OK ? CLI_EXIT_OK : cli_ledger_lib_fail(&err);
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
    if ((rc = only(a, 0, 1, 0, 0)) != CLI_EXIT_OK)
        return rc;
    if (a->after || a->since || a->until || a->limit)
        return cli_ledger_history_page(a);
    if ((rc = ledger_json(a, dpa_ledger_history_json, a->nunits ? a->units[0] : NULL, &json)) != CLI_EXIT_OK ||
        (rc = json_or_parse(a, json, "ledger history JSON does not parse", &arr)) != CLI_EXIT_OK || !arr)
        return rc;
    json_array_foreach(arr, i, r) {
        /* 12 digits for reading; --json has the spec exactly */
        const char *kind = json_string_value(json_object_get(r, "kind"));
        char *spec = json_dumps(json_object_get(r, "spec"), JSON_COMPACT | JSON_ENCODE_ANY |
                                JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
        const char *reason = json_string_value(json_object_get(r, "reason"));
        printf("%lld  %s  %-8s  %s  %s%s%s\n", (long long)json_integer_value(json_object_get(r, "id")),
               json_string_value(json_object_get(r, "time")),
               kind ? kind : json_string_value(json_object_get(r, "decision")),
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
    l = cli_ledger_open(a, 1, &rc);
    if (!l)
        return rc;
    if (dpa_ledger_verify_anchor(l, a->anchor, &ok, &report, &err) != DPA_OK) {
        dpa_ledger_close(l);
        return cli_ledger_lib_fail(&err);
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
        return cli_ledger_usage("%s", "export always prints JSON (no --json)");
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
        return cli_ledger_usage("%s", "import needs --from FILE (or - for standard input)");
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
        if ((rc = cli_ledger_key(a, &key, &len)) != CLI_EXIT_OK) {
            free(to_free);
            return rc;
        }
        st = dpa_ledger_import_json_keyed(a->path, text, key, len, &err);
        free(key);
        if (st != DPA_OK) {
            free(to_free);
            return cli_ledger_lib_fail(&err);
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
    if ((rc = only(a, 0, 0, 0, 0)) != CLI_EXIT_OK || (rc = cli_ledger_key(a, &key, &len)) != CLI_EXIT_OK)
        return rc;
    st = dpa_ledger_upgrade(a->path, key, len, &err);
    free(key);
    if (st != DPA_OK)
        return cli_ledger_lib_fail(&err);
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
            return cli_ledger_usage("%s", "missing subcommand (init, add-unit, request, status, history, verify, export or import)");
        cli_print_ledger_help();
        return CLI_EXIT_OK;
    }
    rc = cli_ledger_parse(argc, argv, &a);
    if (rc != CLI_EXIT_OK)
        return rc;
    rc = cli_ledger_admin(&a);
    if (rc >= 0)
        return rc;
    if (cli_ledger_stray_service_option(&a, &rc))
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
    return cli_ledger_usage("unknown subcommand \"%s\" (init, add-unit, request, status, history, verify, export or import)", a.sub);
}
