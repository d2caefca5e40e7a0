/* Tests of the event tree, its JSON form and calibration templates.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "dpacct/event.h"
#include "event/event_internal.h"
#include "parse_check.h"

/* ---- helpers ---- */

/* Like expect_err for inputs without a path (syntax errors): phrase only. */
static void expect_err_phrase(const char *text, const char *phrase)
{
    dpa_error err = {DPA_OK, ""};
    dpa_spec *s = dpa_spec_from_json(text, &err);
    if (s) {
        dpa_spec_free(s);
        fail_msg("accepted invalid spec %s", text);
    }
    assert_int_equal(err.status, DPA_EINVAL);
    if (!strstr(err.message, phrase))
        fail_msg("for %s: message \"%s\" lacks \"%s\"", text, err.message, phrase);
}

static double param(const dpa_event *e, const char *name)
{
    double v = NAN;
    assert_int_equal(dpa_event_get_param(e, name, &v), DPA_OK);
    return v;
}

/* to_json(s), then from_json/to_json again: the two texts must be equal. */
static void assert_round_trip(const dpa_spec *s)
{
    char *a = dpa_spec_to_json(s), *b;
    dpa_spec *s2;
    assert_non_null(a);
    s2 = parse_ok(a);
    b = dpa_spec_to_json(s2);
    assert_non_null(b);
    assert_string_equal(a, b);
    free(a);
    free(b);
    dpa_spec_free(s2);
}

/* Nested text: `depth` events "{"repeat":{"count":2,"event":" around a gdp leaf. */
static char *nested_repeats(int depth)
{
    const char *open = "{\"repeat\":{\"count\":2,\"event\":";
    const char *leaf = "{\"gdp\":{\"mu\":1}}";
    size_t n = (size_t)depth * (strlen(open) + 2) + strlen(leaf) + 1;
    char *t = malloc(n), *p = t;
    assert_non_null(t);
    for (int i = 0; i < depth; i++)
        p += sprintf(p, "%s", open);
    p += sprintf(p, "%s", leaf);
    for (int i = 0; i < depth; i++)
        p += sprintf(p, "}}");
    return t;
}

static dpa_template *template_ok(const char *text)
{
    dpa_error err = {DPA_OK, ""};
    dpa_template *t = dpa_template_from_json(text, &err);
    if (!t)
        fail_msg("unexpected template error for %s: %s", text, err.message);
    return t;
}

/* ---- parsing valid specs ---- */

static void test_parse_gaussian_defaults(void **state)
{
    (void)state;
    dpa_spec *s = parse_ok("{\"gaussian\": {\"sigma\": 1.1}}");
    const dpa_event *e = dpa_spec_root(s);
    assert_int_equal(dpa_event_get_kind(e), DPA_EV_GAUSSIAN);
    assert_true(param(e, "sigma") == 1.1);
    assert_true(param(e, "sensitivity") == 1.0);
    assert_int_equal(dpa_event_num_children(e), 0);
    assert_int_equal(dpa_spec_neighboring(s), DPA_ADD_REMOVE);
    dpa_spec_free(s);
}

static void test_parse_all_leaves(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        dpa_event_kind kind;
        const char *n0, *n1;
        double v0, v1;
    } cases[] = {
        {"{\"gaussian\":{\"sigma\":2,\"sensitivity\":3}}", DPA_EV_GAUSSIAN, "sigma", "sensitivity", 2, 3},
        {"{\"laplace\":{\"scale\":2}}", DPA_EV_LAPLACE, "scale", "sensitivity", 2, 1},
        {"{\"discrete_laplace\":{\"scale\":0.5,\"sensitivity\":4}}", DPA_EV_DISCRETE_LAPLACE, "scale", "sensitivity", 0.5, 4},
        {"{\"discrete_gaussian\":{\"sigma\":3}}", DPA_EV_DISCRETE_GAUSSIAN, "sigma", "sensitivity", 3, 1},
        {"{\"discrete_gaussian\":{\"sigma\":1e5,\"sensitivity\":1e6}}", DPA_EV_DISCRETE_GAUSSIAN, "sigma", "sensitivity", 1e5, 1e6},
        {"{\"randomized_response\":{\"epsilon\":1}}", DPA_EV_RANDOMIZED_RESPONSE, "epsilon", NULL, 1, 0},
        {"{\"pure\":{\"epsilon\":0.5}}", DPA_EV_PURE, "epsilon", NULL, 0.5, 0},
        {"{\"pure\":{\"epsilon\":0}}", DPA_EV_PURE, "epsilon", NULL, 0, 0},
        {"{\"approx\":{\"epsilon\":0.1,\"delta\":1e-8}}", DPA_EV_APPROX, "epsilon", "delta", 0.1, 1e-8},
        {"{\"approx\":{\"epsilon\":0,\"delta\":1}}", DPA_EV_APPROX, "epsilon", "delta", 0, 1},
        {"{\"zcdp\":{\"rho\":0.1}}", DPA_EV_ZCDP, "rho", NULL, 0.1, 0},
        {"{\"gdp\":{\"mu\":1}}", DPA_EV_GDP, "mu", NULL, 1, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dpa_spec *s = parse_ok(cases[i].text);
        const dpa_event *e = dpa_spec_root(s);
        assert_int_equal(dpa_event_get_kind(e), cases[i].kind);
        assert_true(param(e, cases[i].n0) == cases[i].v0);
        if (cases[i].n1)
            assert_true(param(e, cases[i].n1) == cases[i].v1);
        assert_round_trip(s);
        dpa_spec_free(s);
    }
}

static void test_parse_combinators(void **state)
{
    (void)state;
    dpa_spec *s = parse_ok(
        "{\"compose\": ["
        " {\"repeat\": {\"count\": 14063, \"event\": {\"poisson\": {\"rate\": 0.0042666667,"
        "   \"event\": {\"gaussian\": {\"sigma\": 1.1}}}}}},"
        " {\"sample\": {\"n\": 60000, \"m\": 256, \"event\": {\"laplace\": {\"scale\": 2}}}},"
        " {\"pure\": {\"epsilon\": 0.5}}]}");
    const dpa_event *c = dpa_spec_root(s), *r, *p, *g, *sm;
    assert_int_equal(dpa_event_get_kind(c), DPA_EV_COMPOSE);
    assert_int_equal(dpa_event_num_children(c), 3);
    r = dpa_event_child(c, 0);
    assert_int_equal(dpa_event_get_kind(r), DPA_EV_REPEAT);
    assert_true(param(r, "count") == 14063);
    assert_int_equal(dpa_event_num_children(r), 1);
    p = dpa_event_child(r, 0);
    assert_int_equal(dpa_event_get_kind(p), DPA_EV_POISSON);
    assert_true(param(p, "rate") == 0.0042666667);
    g = dpa_event_child(p, 0);
    assert_int_equal(dpa_event_get_kind(g), DPA_EV_GAUSSIAN);
    sm = dpa_event_child(c, 1);
    assert_int_equal(dpa_event_get_kind(sm), DPA_EV_SAMPLE);
    assert_true(param(sm, "n") == 60000);
    assert_true(param(sm, "m") == 256);
    assert_int_equal(dpa_event_get_kind(dpa_event_child(c, 2)), DPA_EV_PURE);
    assert_null(dpa_event_child(c, 3));
    assert_round_trip(s);
    dpa_spec_free(s);
}

static void test_canonical_output(void **state)
{
    (void)state;
    dpa_spec *s = parse_ok("{ \"neighboring\" : \"replace\", \"repeat\": {\"event\": "
                           "{\"gaussian\": {\"sigma\": 2}}, \"count\": 10.0}}");
    char *j = dpa_spec_to_json(s);
    assert_string_equal(j, "{\"repeat\":{\"count\":10,\"event\":{\"gaussian\":{\"sigma\":2,"
                           "\"sensitivity\":1}}},\"neighboring\":\"replace\"}");
    free(j);
    dpa_spec_free(s);
    s = parse_ok("{\"sample\":{\"m\":2,\"event\":{\"approx\":{\"delta\":0.5,\"epsilon\":0.1}},\"n\":7}}");
    j = dpa_spec_to_json(s);
    assert_string_equal(j, "{\"sample\":{\"n\":7,\"m\":2,\"event\":{\"approx\":{\"epsilon\":"
                           "0.10000000000000001,\"delta\":0.5}}},\"neighboring\":\"add_remove\"}");
    free(j);
    dpa_spec_free(s);
}

static void test_round_trip_many(void **state)
{
    (void)state;
    static const char *texts[] = {
        "{\"gaussian\":{\"sigma\":0.30000000000000004}}",
        "{\"laplace\":{\"scale\":1e-300,\"sensitivity\":1e300}}",
        "{\"compose\":[{\"zcdp\":{\"rho\":0.1}},{\"gdp\":{\"mu\":2}},{\"compose\":[{\"pure\":{\"epsilon\":3}}]}]}",
        "{\"poisson\":{\"rate\":1,\"event\":{\"discrete_laplace\":{\"scale\":3,\"sensitivity\":2}}},\"neighboring\":\"replace\"}",
        "{\"repeat\":{\"count\":1e15,\"event\":{\"randomized_response\":{\"p\":0.9}}}}",
        "{\"sample\":{\"n\":1,\"m\":1,\"event\":{\"discrete_gaussian\":{\"sigma\":0.1}}}}",
        "{\"approx\":{\"epsilon\":1.7976931348623157e308,\"delta\":4.9e-324}}",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        dpa_spec *s = parse_ok(texts[i]);
        assert_round_trip(s);
        dpa_spec_free(s);
    }
}

static void test_neighboring(void **state)
{
    (void)state;
    dpa_spec *s = parse_ok("{\"gdp\":{\"mu\":1},\"neighboring\":\"replace\"}");
    assert_int_equal(dpa_spec_neighboring(s), DPA_REPLACE);
    dpa_spec_free(s);
    s = parse_ok("{\"neighboring\":\"add_remove\",\"gdp\":{\"mu\":1}}");
    assert_int_equal(dpa_spec_neighboring(s), DPA_ADD_REMOVE);
    dpa_spec_free(s);
    expect_err("{\"gdp\":{\"mu\":1},\"neighboring\":\"swap\"}", "/neighboring",
               "must be \"add_remove\" or \"replace\", got \"swap\"");
    expect_err("{\"gdp\":{\"mu\":1},\"neighboring\":1}", "/neighboring",
               "expected a string, got number");
    expect_err("{\"repeat\":{\"count\":2,\"event\":{\"gdp\":{\"mu\":1},\"neighboring\":\"replace\"}}}",
               "/repeat/event/neighboring", "only allowed at the top level");
    expect_err("{\"neighboring\":\"replace\"}", "/", "found 0");
}

static void test_randomized_response_p(void **state)
{
    (void)state;
    dpa_spec *s = parse_ok("{\"randomized_response\":{\"p\":0.75}}");
    char *j;
    assert_true(fabs(param(dpa_spec_root(s), "epsilon") - log(3.0)) <= 1e-15);
    j = dpa_spec_to_json(s);
    assert_non_null(strstr(j, "\"epsilon\":1.09861228866810"));
    assert_null(strstr(j, "\"p\""));
    free(j);
    dpa_spec_free(s);
    s = parse_ok("{\"randomized_response\":{\"p\":0.5}}");
    assert_true(param(dpa_spec_root(s), "epsilon") == 0);
    dpa_spec_free(s);
    expect_err("{\"randomized_response\":{\"p\":1}}", "/randomized_response/p",
               "must be in [0.5, 1), got 1");
    expect_err("{\"randomized_response\":{\"p\":0.4}}", "/randomized_response/p",
               "got 0.4");
    expect_err("{\"randomized_response\":{\"p\":0.6,\"epsilon\":1}}", "/randomized_response",
               "exactly one of \"epsilon\" and \"p\"");
    expect_err("{\"randomized_response\":{}}", "/randomized_response",
               "missing key \"epsilon\" (or \"p\")");
    expect_err("{\"randomized_response\":{\"q\":1}}", "/randomized_response",
               "unknown key \"q\" (expected epsilon, k, p)");
}

static void test_integers(void **state)
{
    (void)state;
    dpa_spec *s = parse_ok("{\"repeat\":{\"count\":14063.0,\"event\":{\"gdp\":{\"mu\":1}}}}");
    assert_true(param(dpa_spec_root(s), "count") == 14063);
    dpa_spec_free(s);
    s = parse_ok("{\"repeat\":{\"count\":1000000000000000,\"event\":{\"gdp\":{\"mu\":1}}}}");
    assert_true(param(dpa_spec_root(s), "count") == 1e15);
    assert_round_trip(s);
    dpa_spec_free(s);
    expect_err("{\"repeat\":{\"count\":2.5,\"event\":{\"gdp\":{\"mu\":1}}}}", "/repeat/count",
               "must be an integer >= 1, got 2.5");
    expect_err("{\"repeat\":{\"count\":0,\"event\":{\"gdp\":{\"mu\":1}}}}", "/repeat/count",
               "must be an integer >= 1, got 0");
    expect_err("{\"repeat\":{\"count\":1000000000000000000,\"event\":{\"gdp\":{\"mu\":1}}}}",
               "/repeat/count", "must be an integer <= 1e+15, got 1e+18");
    expect_err("{\"sample\":{\"n\":10,\"m\":2.5,\"event\":{\"gdp\":{\"mu\":1}}}}", "/sample/m",
               "must be an integer >= 0, got 2.5"); /* (m = 0 is the no-op) */
    expect_err("{\"sample\":{\"n\":10,\"m\":11,\"event\":{\"gdp\":{\"mu\":1}}}}", "/sample/m",
               "must be an integer <= n (10), got 11");
    expect_err("{\"sample\":{\"n\":0.5,\"m\":1,\"event\":{\"gdp\":{\"mu\":1}}}}", "/sample/n",
               "must be an integer >= 1, got 0.5");
    expect_err("{\"discrete_laplace\":{\"scale\":1,\"sensitivity\":1.5}}",
               "/discrete_laplace/sensitivity", "must be an integer >= 1, got 1.5");
    expect_err("{\"discrete_gaussian\":{\"sigma\":1,\"sensitivity\":2000000}}",
               "/discrete_gaussian/sensitivity", "must be an integer <= 1e+06, got 2e+06");
}

/* ---- errors with paths ---- */

static void test_errors_domains(void **state)
{
    (void)state;
    expect_err("{\"repeat\":{\"count\":3,\"event\":{\"poisson\":{\"rate\":1.5,\"event\":"
               "{\"gaussian\":{\"sigma\":1}}}}}}", "/repeat/event/poisson/rate",
               "must be in [0, 1], got 1.5");
    /* (rate 0 is the no-op, accepted: tests/test_pure_dp.c) */
    expect_err("{\"poisson\":{\"rate\":-0.5,\"event\":{\"gdp\":{\"mu\":1}}}}", "/poisson/rate",
               "must be in [0, 1], got -0.5");
    expect_err("{\"gaussian\":{\"sigma\":-1}}", "/gaussian/sigma", "must be > 0 and finite, got -1");
    expect_err("{\"gaussian\":{\"sigma\":0}}", "/gaussian/sigma", "must be > 0 and finite, got 0");
    expect_err("{\"gaussian\":{\"sigma\":1,\"sensitivity\":0}}", "/gaussian/sensitivity",
               "must be > 0");
    expect_err("{\"laplace\":{\"scale\":-2}}", "/laplace/scale", "must be > 0");
    expect_err("{\"discrete_gaussian\":{\"sigma\":100001}}", "/discrete_gaussian/sigma",
               "must be in (0, 100000], got 100001");
    expect_err("{\"pure\":{\"epsilon\":-0.5}}", "/pure/epsilon", "must be >= 0 and finite, got -0.5");
    expect_err("{\"approx\":{\"epsilon\":1,\"delta\":1.01}}", "/approx/delta",
               "must be in [0, 1], got 1.01");
    expect_err("{\"zcdp\":{\"rho\":-1e-3}}", "/zcdp/rho", "must be >= 0");
    expect_err("{\"gdp\":{\"mu\":-1}}", "/gdp/mu", "must be >= 0");
    expect_err("{\"randomized_response\":{\"epsilon\":-1}}", "/randomized_response/epsilon",
               "must be >= 0");
    expect_err("{\"compose\":[{\"gdp\":{\"mu\":1}},{\"compose\":[{\"pure\":{\"epsilon\":1}},"
               "{\"zcdp\":{\"rho\":-2}}]}]}", "/compose/1/compose/1/zcdp/rho", "got -2");
}

static void test_errors_keys(void **state)
{
    (void)state;
    expect_err("{\"compose\":[{\"gdp\":{\"mu\":1}},{\"gdp\":{\"mu\":1}},{\"gaussian\":"
               "{\"sigm\":1}}]}", "/compose/2/gaussian",
               "unknown key \"sigm\" (expected sigma, sensitivity)");
    expect_err("{\"repeat\":{\"count\":2}}", "/repeat", "missing key \"event\"");
    expect_err("{\"gaussian\":{}}", "/gaussian", "missing key \"sigma\"");
    expect_err("{\"approx\":{\"epsilon\":1}}", "/approx", "missing key \"delta\"");
    expect_err("{\"sample\":{\"n\":3,\"event\":{\"gdp\":{\"mu\":1}}}}", "/sample", "missing key \"m\"");
    expect_err("{\"poisson\":{\"rate\":0.5,\"event\":{\"gdp\":{\"mu\":1}},\"count\":3}}", "/poisson",
               "unknown key \"count\" (expected rate, event)");
    expect_err("{\"gdp\":{\"mu\":1,\"event\":{}}}", "/gdp", "unknown key \"event\" (expected mu)");
    expect_err("{\"gaussian\":{\"sigma\":1},\"laplace\":{\"scale\":1}}", "/",
               "expected exactly one event key (gaussian, laplace, ");
    expect_err("{\"gaussian\":{\"sigma\":1},\"laplace\":{\"scale\":1}}", "/",
               "found 2: \"gaussian\", \"laplace\"");
    expect_err("{\"gausian\":{\"sigma\":1}}", "/", "unknown event kind \"gausian\"");
    expect_err("{\"repeat\":{\"count\":2,\"event\":{\"lapalce\":{}}}}", "/repeat/event",
               "unknown event kind \"lapalce\"");
    /* An unknown kind lists the valid ones, as an unknown key does
     * (test_unknown_kind_lists_kinds checks the list is complete). */
    expect_err("{\"repeat\":{\"count\":2,\"event\":{\"lapalce\":{}}}}", "/repeat/event",
               "unknown event kind \"lapalce\" (expected gaussian, laplace, discrete_laplace, "
               "discrete_gaussian, randomized_response, pure, approx, zcdp, gdp, compose, repeat, "
               "poisson, sample, no_op, non_private, privacy_loss, privacy_profile, mixture_of_gaussians, sample_with_replacement, "
               "truncated_poisson, exponential_mechanism, permute_and_flip, report_noisy_max, tree_aggregation, "
               "repeat_and_select, laplace_svt, gaussian_svt, random_allocation, dpsgd, bandmf, tradeoff_curve)");
    expect_err("{\"gausian\":{\"sigma\":1}}", "/",
               "unknown event kind \"gausian\" (expected gaussian, laplace, discrete_laplace, "
               "discrete_gaussian, randomized_response, pure, approx, zcdp, gdp, compose, repeat, "
               "poisson, sample, no_op, non_private, privacy_loss, privacy_profile, mixture_of_gaussians, sample_with_replacement, "
               "truncated_poisson, exponential_mechanism, permute_and_flip, report_noisy_max, tree_aggregation, "
               "repeat_and_select, laplace_svt, gaussian_svt, random_allocation, dpsgd, bandmf, tradeoff_curve, or the top-level key neighboring)");
    expect_err("{\"repeat\":{\"count\":2,\"event\":{}}}", "/repeat/event", "found 0");
    /* Odd characters in keys are escaped in the message. */
    expect_err("{\"gaussian\":{\"a\\\"b\\n\":1}}", "/gaussian", "unknown key \"a\\\"b\\x0a\"");
}

/* The list of kinds in the "unknown event kind" message names every kind
 * of the table (event_kinds.c) exactly once, and nothing else. */
static void test_unknown_kind_lists_kinds(void **state)
{
    (void)state;
    dpa_error err = {DPA_OK, ""};
    dpa_spec *s = dpa_spec_from_json("{\"compose\":[{\"nope\":{}}]}", &err);
    assert_null(s);
    const char *open = strstr(err.message, "(expected ");
    assert_non_null(open);
    char list[DPA_ERROR_MESSAGE_MAX];
    snprintf(list, sizeof list, "%s", open + strlen("(expected "));
    char *close = strchr(list, ')');
    assert_non_null(close);
    *close = '\0';
    int seen[DPA_EV_RANDOM_ALLOCATION + 1] = {0}, n = 0;
    for (char *tok = strtok(list, ", "); tok; tok = strtok(NULL, ", ")) {
        dpa_event_kind k;
        if (!strcmp(tok, "dpsgd") || !strcmp(tok, "bandmf") || !strcmp(tok, "tradeoff_curve"))
            continue; /* template kinds, expanded when read (test_dpsgd_leaf.c, test_bandmf.c,
                       * test_tradeoff_curve_leaf.c) */
        if (!dpa_ev_kind_from_name(tok, &k))
            fail_msg("\"%s\" in the list of kinds is not a kind", tok);
        seen[k]++;
        n++;
    }
    assert_int_equal(n, DPA_EV_RANDOM_ALLOCATION + 1);
    for (int k = 0; k <= DPA_EV_RANDOM_ALLOCATION; k++)
        if (seen[k] != 1)
            fail_msg("kind %s listed %d times", dpa_ev_kind_name((dpa_event_kind)k), seen[k]);
}

static void test_errors_types(void **state)
{
    (void)state;
    expect_err("{\"poisson\":{\"rate\":\"0.5\",\"event\":{\"gdp\":{\"mu\":1}}}}", "/poisson/rate",
               "expected a number, got string");
    expect_err("{\"gaussian\":{\"sigma\":true}}", "/gaussian/sigma", "expected a number, got boolean");
    expect_err("{\"gaussian\":{\"sigma\":null}}", "/gaussian/sigma", "expected a number, got null");
    expect_err("{\"gaussian\":{\"sigma\":[1]}}", "/gaussian/sigma", "expected a number, got array");
    expect_err("{\"gaussian\":{\"sigma\":{}}}", "/gaussian/sigma", "expected a number, got object");
    expect_err("{\"gaussian\":1}", "/gaussian", "expected an object, got number");
    expect_err("{\"compose\":{}}", "/compose", "expected an array of events, got object");
    expect_err("{\"compose\":[]}", "/compose", "non-empty array");
    expect_err("{\"compose\":[1]}", "/compose/0", "expected an event object, got number");
    expect_err("{\"repeat\":{\"count\":2,\"event\":\"gdp\"}}", "/repeat/event",
               "expected an event object, got string");
    expect_err("{\"gaussian\":{\"sigma\":\"?\"}}", "/gaussian/sigma",
               "\"?\" is only allowed in a calibration template");
}

static void test_errors_syntax(void **state)
{
    (void)state;
    expect_err_phrase("{\"gaussian\":{\"sigma\":1}", "JSON syntax error at line 1 column");
    expect_err_phrase("{\"gaussian\":{\"sigma\":1}} x", "JSON syntax error at line 1");
    expect_err_phrase("{\n\"gaussian\":\n{\"sigma\":1,}}", "JSON syntax error at line 3");
    expect_err_phrase("{\"gaussian\":{\"sigma\":1,\"sigma\":2}}", "duplicate");
    expect_err_phrase("{\"gaussian\":{\"sigma\":NaN}}", "JSON syntax error");
    expect_err_phrase("{\"gaussian\":{\"sigma\":1e999}}", "JSON syntax error");
    expect_err_phrase("", "empty input");
    expect_err_phrase(" \n\t ", "empty input");
    expect_err_phrase(NULL, "no input");
}

static void test_garbage_inputs(void **state)
{
    (void)state;
    expect_err("[]", "/", "expected an event object, got array");
    expect_err("{}", "/", "expected exactly one event key");
    expect_err("null", "/", "expected an event object, got null");
    expect_err("123", "/", "got number");
    expect_err("\"gaussian\"", "/", "got string");
    expect_err("true", "/", "got boolean");
    expect_err("{\"gaussian\": 1}", "/gaussian", "expected an object");
    expect_err_phrase("{\"gauss", "JSON syntax error");
    expect_err_phrase("\xff\xfe{}", "JSON syntax error");
    /* err == NULL is allowed. */
    assert_null(dpa_spec_from_json("{}", NULL));
    assert_null(dpa_template_from_json("{}", NULL));
}

static void test_deeply_nested_arrays(void **state)
{
    (void)state;
    size_t n = 100000;
    char *t = malloc(2 * n + 1);
    assert_non_null(t);
    memset(t, '[', n);
    memset(t + n, ']', n);
    t[2 * n] = '\0';
    expect_err_phrase(t, "JSON syntax error"); /* jansson's own depth limit */
    memcpy(t, "{\"compose\":", 11);            /* now an unbalanced compose: syntax */
    expect_err_phrase(t, "JSON syntax error");
    free(t);
    expect_err("[[[[[[[[[[]]]]]]]]]]", "/", "expected an event object, got array");
}

static void test_event_depth_limit(void **state)
{
    (void)state;
    dpa_error err = {DPA_OK, ""};
    char *ok = nested_repeats(255), *bad = nested_repeats(256);
    dpa_spec *s = parse_ok(ok); /* 255 repeats + the leaf = 256 levels */
    assert_round_trip(s);
    dpa_spec_free(s);
    assert_null(dpa_spec_from_json(bad, &err));
    assert_int_equal(err.status, DPA_EINVAL);
    assert_non_null(strstr(err.message, "events nested deeper than 256 levels"));
    assert_true(strncmp(err.message, "/repeat/event/repeat/event", 26) == 0);
    assert_non_null(strstr(err.message, "/.../")); /* the long path is elided */
    free(ok);
    free(bad);
}

/* Every prefix of a valid spec is rejected (EINVAL), never a crash; byte
 * mutations give either a valid spec or EINVAL. */
static void test_truncated_and_mutated(void **state)
{
    (void)state;
    const char *text = "{\"compose\":[{\"repeat\":{\"count\":14063,\"event\":{\"poisson\":"
                       "{\"rate\":0.0042,\"event\":{\"gaussian\":{\"sigma\":1.1}}}}}},"
                       "{\"sample\":{\"n\":60000,\"m\":256,\"event\":{\"randomized_response\":"
                       "{\"p\":0.75}}}}],\"neighboring\":\"replace\"}";
    size_t len = strlen(text);
    char *buf = malloc(len + 1);
    uint32_t rng = 12345;
    assert_non_null(buf);
    for (size_t cut = 0; cut < len; cut++) {
        dpa_error err = {DPA_OK, ""};
        memcpy(buf, text, cut);
        buf[cut] = '\0';
        assert_null(dpa_spec_from_json(buf, &err));
        assert_int_equal(err.status, DPA_EINVAL);
    }
    for (int iter = 0; iter < 3000; iter++) {
        dpa_error err = {DPA_OK, ""};
        dpa_spec *s;
        memcpy(buf, text, len + 1);
        for (int k = 0; k < 3; k++) {
            rng = rng * 1664525u + 1013904223u;
            size_t pos = (rng >> 8) % len;
            rng = rng * 1664525u + 1013904223u;
            buf[pos] = (char)(" {}[]:,\"?.-e0123456789xpnm"[(rng >> 8) % 26]);
        }
        s = dpa_spec_from_json(buf, &err);
        if (s) {
            assert_round_trip(s);
            dpa_spec_free(s);
        } else {
            assert_int_equal(err.status, DPA_EINVAL);
            assert_true(err.message[0] != '\0');
        }
    }
    free(buf);
}

/* ---- C constructors ---- */

static void test_ctor_valid_and_params(void **state)
{
    (void)state;
    dpa_error err = {DPA_OK, ""};
    dpa_event *kids[3];
    dpa_event *c, *r;
    double v;
    kids[0] = dpa_event_gaussian(2, 1, &err);
    kids[1] = dpa_event_approx(0.5, 1e-6, &err);
    kids[2] = dpa_event_sample(100, 10, dpa_event_discrete_laplace(3, 2, &err), &err);
    c = dpa_event_compose(kids, 3, &err);
    assert_non_null(c);
    r = dpa_event_repeat(7, dpa_event_poisson(0.25, c, &err), &err);
    assert_non_null(r);
    assert_true(param(r, "count") == 7);
    assert_true(param(dpa_event_child(r, 0), "rate") == 0.25);
    assert_true(param(dpa_event_child(dpa_event_child(r, 0), 0)->child[1], "delta") == 1e-6);
    assert_int_equal(dpa_event_get_param(r, "sigma", &v), DPA_EINVAL);
    assert_int_equal(dpa_event_get_param(r, NULL, &v), DPA_EINVAL);
    assert_int_equal(dpa_event_get_param(NULL, "count", &v), DPA_EINVAL);
    assert_int_equal(dpa_event_get_param(c, "n", &v), DPA_EINVAL);
    /* Slot layout read by other modules. */
    assert_true(kids[2]->p[0] == 100 && kids[2]->p[1] == 10);
    assert_int_equal(c->nchild, 3);
    assert_ptr_equal(c->child[0], kids[0]);
    dpa_event_free(r);
    dpa_event_free(NULL);
}

static void expect_ctor_err(dpa_event *e, const dpa_error *err, const char *phrase)
{
    if (e) {
        dpa_event_free(e);
        fail_msg("constructor accepted a value outside its domain (%s)", phrase);
    }
    assert_int_equal(err->status, DPA_EINVAL);
    if (strncmp(err->message, phrase, strlen(phrase)) != 0)
        fail_msg("message \"%s\" does not start with \"%s\"", err->message, phrase);
}

static void test_ctor_reject_leaves(void **state)
{
    (void)state;
    dpa_error err;
    expect_ctor_err(dpa_event_gaussian(-1, 1, &err), &err, "gaussian: sigma must be > 0 and finite, got -1");
    expect_ctor_err(dpa_event_gaussian(NAN, 1, &err), &err, "gaussian: sigma must be > 0 and finite, got nan");
    expect_ctor_err(dpa_event_gaussian(INFINITY, 1, &err), &err, "gaussian: sigma must be > 0 and finite, got inf");
    expect_ctor_err(dpa_event_gaussian(1, 0, &err), &err, "gaussian: sensitivity must be > 0");
    expect_ctor_err(dpa_event_laplace(0, 1, &err), &err, "laplace: scale must be > 0");
    expect_ctor_err(dpa_event_laplace(1, -INFINITY, &err), &err, "laplace: sensitivity");
    expect_ctor_err(dpa_event_discrete_laplace(1, 0.5, &err), &err,
                    "discrete_laplace: sensitivity must be an integer >= 1, got 0.5");
    expect_ctor_err(dpa_event_discrete_laplace(1, INFINITY, &err), &err,
                    "discrete_laplace: sensitivity must be an integer <= 1e+06, got inf");
    expect_ctor_err(dpa_event_discrete_gaussian(1e5 * (1 + 1e-15), 1, &err), &err,
                    "discrete_gaussian: sigma must be in (0, 100000]");
    expect_ctor_err(dpa_event_discrete_gaussian(1, NAN, &err), &err,
                    "discrete_gaussian: sensitivity must be an integer >= 1, got nan");
    expect_ctor_err(dpa_event_randomized_response(-1e-300, &err), &err,
                    "randomized_response: epsilon must be >= 0 and finite");
    expect_ctor_err(dpa_event_pure(INFINITY, &err), &err, "pure: epsilon must be >= 0 and finite, got inf");
    expect_ctor_err(dpa_event_approx(1, NAN, &err), &err, "approx: delta must be in [0, 1], got nan");
    expect_ctor_err(dpa_event_approx(1, -0.1, &err), &err, "approx: delta must be in [0, 1]");
    expect_ctor_err(dpa_event_zcdp(NAN, &err), &err, "zcdp: rho must be >= 0");
    expect_ctor_err(dpa_event_gdp(-INFINITY, &err), &err, "gdp: mu must be >= 0");
}

static void test_ctor_boundaries(void **state)
{
    (void)state;
    dpa_error err;
    dpa_event *e;
    e = dpa_event_discrete_gaussian(1e5, 1e6, &err);
    assert_non_null(e);
    dpa_event_free(e);
    e = dpa_event_approx(0, 1, &err);
    assert_non_null(e);
    dpa_event_free(e);
    e = dpa_event_pure(0, &err);
    assert_non_null(e);
    dpa_event_free(e);
    e = dpa_event_gaussian(DBL_MIN, DBL_MAX, &err);
    assert_non_null(e);
    dpa_event_free(e);
    e = dpa_event_repeat(DPA_MAX_COUNT, dpa_event_gdp(0, &err), &err);
    assert_non_null(e);
    dpa_event_free(e);
    e = dpa_event_sample(5, 5, dpa_event_gdp(1, &err), &err);
    assert_non_null(e);
    dpa_event_free(e);
    /* -0 is stored as +0 so that serialization is canonical. */
    e = dpa_event_pure(-0.0, &err);
    assert_non_null(e);
    assert_false(signbit(e->p[0]));
    dpa_event_free(e);
}

/* Combinators free their children on failure (ASan reports a leak otherwise). */
static void test_ctor_frees_children(void **state)
{
    (void)state;
    dpa_error err;
    dpa_event *kids[3];
    expect_ctor_err(dpa_event_repeat(2.5, dpa_event_gdp(1, &err), &err), &err,
                    "repeat: count must be an integer >= 1, got 2.5");
    expect_ctor_err(dpa_event_repeat(2e15, dpa_event_gdp(1, &err), &err), &err,
                    "repeat: count must be an integer <= 1e+15, got 2e+15");
    expect_ctor_err(dpa_event_poisson(-0.5, dpa_event_gdp(1, &err), &err), &err,
                    "poisson: rate must be in [0, 1], got -0.5");
    expect_ctor_err(dpa_event_poisson(NAN, dpa_event_gdp(1, &err), &err), &err, "poisson: rate");
    expect_ctor_err(dpa_event_sample(5, 6, dpa_event_gdp(1, &err), &err), &err,
                    "sample: m must be an integer <= n (5), got 6");
    expect_ctor_err(dpa_event_sample(5.5, 1, dpa_event_gdp(1, &err), &err), &err,
                    "sample: n must be an integer >= 1, got 5.5");
    expect_ctor_err(dpa_event_repeat(3, NULL, &err), &err, "repeat: child event is NULL");
    /* A failed inner constructor yields NULL; the outer one reports it. */
    expect_ctor_err(dpa_event_poisson(0.5, dpa_event_gaussian(-1, 1, &err), &err), &err,
                    "poisson: child event is NULL");
    kids[0] = dpa_event_gdp(1, &err);
    kids[1] = NULL;
    kids[2] = dpa_event_pure(1, &err);
    expect_ctor_err(dpa_event_compose(kids, 3, &err), &err, "compose: child 1 is NULL");
    expect_ctor_err(dpa_event_compose(kids, 0, &err), &err, "compose: needs at least one child");
    expect_ctor_err(dpa_event_compose(NULL, 2, &err), &err, "compose: child array is NULL");
}

static void test_copy_and_specs(void **state)
{
    (void)state;
    dpa_error err;
    dpa_spec *s = parse_ok("{\"compose\":[{\"repeat\":{\"count\":3,\"event\":{\"gdp\":{\"mu\":1}}}},"
                           "{\"laplace\":{\"scale\":2}}],\"neighboring\":\"replace\"}");
    dpa_spec *c = dpa_spec_copy(s);
    char *a = dpa_spec_to_json(s), *b;
    dpa_event *e;
    assert_non_null(c);
    assert_ptr_not_equal(dpa_spec_root(c), dpa_spec_root(s));
    dpa_spec_free(s);
    b = dpa_spec_to_json(c);
    assert_string_equal(a, b);
    free(a);
    free(b);
    e = dpa_event_copy(dpa_spec_root(c));
    dpa_spec_free(c);
    assert_int_equal(dpa_event_num_children(e), 2);
    dpa_event_free(e);
    assert_null(dpa_event_copy(NULL));
    assert_null(dpa_spec_copy(NULL));
    assert_null(dpa_spec_to_json(NULL));
    dpa_spec_free(NULL);
    assert_null(dpa_spec_new(NULL, DPA_ADD_REMOVE, &err));
    assert_int_equal(err.status, DPA_EINVAL);
    assert_null(dpa_spec_new(dpa_event_gdp(1, &err), (dpa_neighboring)7, &err)); /* root freed */
    assert_non_null(strstr(err.message, "neighboring"));
    s = dpa_spec_new(dpa_event_gdp(1, &err), DPA_REPLACE, &err);
    assert_non_null(s);
    a = dpa_spec_to_json(s);
    assert_string_equal(a, "{\"gdp\":{\"mu\":1},\"neighboring\":\"replace\"}");
    free(a);
    dpa_spec_free(s);
}

/* The slot layout of event_internal.h, which other modules read directly. */
static void test_slot_layout(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        double p0, p1;
        size_t nchild;
    } cases[] = {
        {"{\"gaussian\":{\"sigma\":2,\"sensitivity\":3}}", 2, 3, 0},
        {"{\"laplace\":{\"scale\":4}}", 4, 1, 0},
        {"{\"discrete_laplace\":{\"scale\":5,\"sensitivity\":6}}", 5, 6, 0},
        {"{\"discrete_gaussian\":{\"sigma\":7,\"sensitivity\":8}}", 7, 8, 0},
        {"{\"randomized_response\":{\"epsilon\":9}}", 9, 2, 0}, /* k defaults to 2 */
        {"{\"pure\":{\"epsilon\":10}}", 10, 0, 0},
        {"{\"approx\":{\"epsilon\":11,\"delta\":0.5}}", 11, 0.5, 0},
        {"{\"zcdp\":{\"rho\":12}}", 12, 0, 0},
        {"{\"gdp\":{\"mu\":13}}", 13, 0, 0},
        {"{\"compose\":[{\"gdp\":{\"mu\":1}},{\"gdp\":{\"mu\":2}}]}", 0, 0, 2},
        {"{\"repeat\":{\"count\":14,\"event\":{\"gdp\":{\"mu\":1}}}}", 14, 0, 1},
        {"{\"poisson\":{\"rate\":0.25,\"event\":{\"gdp\":{\"mu\":1}}}}", 0.25, 0, 1},
        {"{\"sample\":{\"n\":16,\"m\":15,\"event\":{\"gdp\":{\"mu\":1}}}}", 16, 15, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dpa_spec *s = parse_ok(cases[i].text);
        const dpa_event *e = dpa_spec_root(s);
        assert_int_equal(e->kind, (dpa_event_kind)i); /* cases follow the enum order */
        assert_true(e->p[0] == cases[i].p0);
        assert_true(e->p[1] == cases[i].p1);
        assert_int_equal(e->nchild, cases[i].nchild);
        for (size_t c = 0; c < e->nchild; c++)
            assert_int_equal(e->child[c]->kind, DPA_EV_GDP);
        if (e->kind == DPA_EV_COMPOSE)
            assert_true(e->child[1]->p[0] == 2);
        dpa_spec_free(s);
    }
}

static void test_null_safety(void **state)
{
    (void)state;
    double v = 0;
    assert_int_equal(dpa_event_num_children(NULL), 0);
    assert_null(dpa_event_child(NULL, 0));
    assert_null(dpa_spec_root(NULL));
    assert_int_equal(dpa_spec_neighboring(NULL), DPA_ADD_REMOVE);
    assert_int_equal(dpa_event_get_param(NULL, "sigma", &v), DPA_EINVAL);
    dpa_template_free(NULL);
    dpa_event_free(NULL);
}

/* A huge unknown key is quoted in a bounded message. */
static void test_long_key_message(void **state)
{
    (void)state;
    dpa_error err;
    size_t n = 5000;
    char *t = malloc(n + 40);
    assert_non_null(t);
    strcpy(t, "{\"gaussian\":{\"");
    memset(t + strlen(t), 'k', n);
    strcpy(t + 14 + n, "\":1}}");
    assert_null(dpa_spec_from_json(t, &err));
    assert_int_equal(err.status, DPA_EINVAL);
    assert_true(strncmp(err.message, "/gaussian: unknown key \"kkkk", 28) == 0);
    assert_non_null(strstr(err.message, "...\" (expected sigma, sensitivity)"));
    assert_true(strlen(err.message) < 200);
    free(t);
    /* Non-ASCII keys are fine (UTF-8 is passed through). */
    expect_err("{\"gaussian\":{\"\xcf\x83\":1}}", "/gaussian", "unknown key \"\xcf\x83\"");
}

/* A wide compose: 20000 children parse, copy and round-trip. */
static void test_wide_compose(void **state)
{
    (void)state;
    size_t n = 20000;
    const char *leaf = "{\"gaussian\":{\"sigma\":1.5}},";
    char *t = malloc(n * strlen(leaf) + 64), *p = t;
    dpa_spec *s, *c;
    assert_non_null(t);
    p += sprintf(p, "{\"compose\":[");
    for (size_t i = 0; i < n; i++)
        p += sprintf(p, "%s", leaf);
    strcpy(p - 1, "]}");
    s = parse_ok(t);
    assert_int_equal(dpa_event_num_children(dpa_spec_root(s)), n);
    c = dpa_spec_copy(s);
    assert_non_null(c);
    assert_round_trip(c);
    dpa_spec_free(c);
    dpa_spec_free(s);
    free(t);
}

/* ---- templates ---- */

static void test_template_count(void **state)
{
    (void)state;
    dpa_template *t = template_ok("{\"repeat\":{\"count\":\"?\",\"event\":{\"poisson\":"
                                  "{\"rate\":0.01,\"event\":{\"gaussian\":{\"sigma\":1}}}}}}");
    const dpa_param_info *pi = dpa_template_param(t);
    dpa_error err;
    dpa_spec *s;
    assert_string_equal(pi->path, "/repeat/count");
    assert_string_equal(pi->name, "count");
    assert_int_equal(pi->role, DPA_ROLE_BUDGET);
    assert_true(pi->is_integer);
    assert_true(pi->lo == 1 && !pi->lo_open);
    assert_true(pi->hi == DPA_MAX_COUNT && !pi->hi_open);
    s = dpa_template_instantiate(t, 1000, &err);
    assert_non_null(s);
    assert_true(param(dpa_spec_root(s), "count") == 1000);
    assert_true(param(dpa_event_child(dpa_spec_root(s), 0), "rate") == 0.01);
    dpa_spec_free(s);
    assert_null(dpa_template_instantiate(t, 2.5, &err));
    assert_int_equal(err.status, DPA_EINVAL);
    assert_string_equal(err.message, "/repeat/count: must be an integer >= 1, got 2.5");
    assert_null(dpa_template_instantiate(t, 0, &err));
    assert_null(dpa_template_instantiate(t, 2e15, &err));
    assert_non_null(strstr(err.message, "<= 1e+15"));
    assert_null(dpa_template_instantiate(t, NAN, &err));
    dpa_template_free(t);
    dpa_template_free(NULL);
}

static void test_template_sigma(void **state)
{
    (void)state;
    dpa_error err;
    dpa_template *t = template_ok("{\"compose\":[{\"gdp\":{\"mu\":1}},{\"gaussian\":{\"sigma\":\"?\"}}],"
                                  "\"neighboring\":\"replace\"}");
    const dpa_param_info *pi = dpa_template_param(t);
    dpa_spec *s;
    assert_string_equal(pi->path, "/compose/1/gaussian/sigma");
    assert_string_equal(pi->name, "sigma");
    assert_int_equal(pi->role, DPA_ROLE_NOISE);
    assert_false(pi->is_integer);
    assert_true(pi->lo == 0 && pi->lo_open);
    assert_true(pi->hi == DBL_MAX && !pi->hi_open);
    s = dpa_template_instantiate(t, 0.7, &err);
    assert_non_null(s);
    assert_int_equal(dpa_spec_neighboring(s), DPA_REPLACE);
    assert_true(param(dpa_event_child(dpa_spec_root(s), 1), "sigma") == 0.7);
    dpa_spec_free(s);
    assert_null(dpa_template_instantiate(t, -1, &err));
    assert_string_equal(err.message, "/compose/1/gaussian/sigma: must be > 0 and finite, got -1");
    assert_null(dpa_template_instantiate(t, INFINITY, &err));
    dpa_template_free(t);

    t = template_ok("{\"discrete_gaussian\":{\"sigma\":\"?\",\"sensitivity\":2}}");
    pi = dpa_template_param(t);
    assert_int_equal(pi->role, DPA_ROLE_NOISE);
    assert_true(pi->hi == DPA_MAX_DISCRETE_GAUSSIAN_SIGMA && !pi->hi_open);
    assert_null(dpa_template_instantiate(t, 2e5, &err));
    assert_non_null(strstr(err.message, "/discrete_gaussian/sigma: must be in (0, 100000]"));
    dpa_template_free(t);

    t = template_ok("{\"laplace\":{\"scale\":\"?\"}}");
    assert_int_equal(dpa_template_param(t)->role, DPA_ROLE_NOISE);
    dpa_template_free(t);
}

static void test_template_rate(void **state)
{
    (void)state;
    dpa_error err;
    dpa_template *t = template_ok("{\"repeat\":{\"count\":100,\"event\":{\"poisson\":"
                                  "{\"rate\":\"?\",\"event\":{\"gaussian\":{\"sigma\":1}}}}}}");
    const dpa_param_info *pi = dpa_template_param(t);
    dpa_spec *s;
    assert_string_equal(pi->path, "/repeat/event/poisson/rate");
    assert_int_equal(pi->role, DPA_ROLE_BUDGET);
    assert_false(pi->is_integer);
    assert_true(pi->lo == 0 && !pi->lo_open); /* rate 0: the no-op */
    assert_true(pi->hi == 1 && !pi->hi_open);
    s = dpa_template_instantiate(t, 1, &err);
    assert_non_null(s);
    dpa_spec_free(s);
    s = dpa_template_instantiate(t, 0, &err); /* rate 0: the no-op */
    assert_non_null(s);
    dpa_spec_free(s);
    assert_null(dpa_template_instantiate(t, -0.5, &err));
    assert_string_equal(err.message, "/repeat/event/poisson/rate: must be in [0, 1], got -0.5");
    assert_null(dpa_template_instantiate(t, 1.5, &err));
    dpa_template_free(t);
}

static void test_template_sample(void **state)
{
    (void)state;
    dpa_error err;
    dpa_template *t = template_ok("{\"sample\":{\"n\":60000,\"m\":\"?\",\"event\":"
                                  "{\"gaussian\":{\"sigma\":1}}}}");
    const dpa_param_info *pi = dpa_template_param(t);
    dpa_spec *s;
    assert_string_equal(pi->path, "/sample/m");
    assert_string_equal(pi->name, "m");
    assert_int_equal(pi->role, DPA_ROLE_BUDGET);
    assert_true(pi->is_integer);
    assert_true(pi->lo == 0 && pi->hi == 60000); /* m = 0: the no-op */
    s = dpa_template_instantiate(t, 60000, &err);
    assert_non_null(s);
    dpa_spec_free(s);
    assert_null(dpa_template_instantiate(t, 60001, &err));
    assert_string_equal(err.message, "/sample/m: must be an integer <= n (60000), got 60001");
    dpa_template_free(t);

    t = template_ok("{\"sample\":{\"n\":\"?\",\"m\":256,\"event\":{\"gdp\":{\"mu\":1}}}}");
    pi = dpa_template_param(t);
    assert_string_equal(pi->path, "/sample/n");
    assert_true(pi->is_integer);
    assert_true(pi->lo == 256 && pi->hi == DPA_MAX_COUNT);
    assert_null(dpa_template_instantiate(t, 255, &err));
    assert_non_null(strstr(err.message, "/sample/m: must be an integer <= n (255), got 256"));
    dpa_template_free(t);

    /* The sibling of the placeholder is still validated on its own. */
    assert_null(dpa_template_from_json("{\"sample\":{\"n\":\"?\",\"m\":2.5,\"event\":"
                                       "{\"gdp\":{\"mu\":1}}}}", &err));
    assert_string_equal(err.message, "/sample/m: must be an integer >= 0, got 2.5");
}

static void test_template_other_params(void **state)
{
    (void)state;
    dpa_error err;
    dpa_spec *s;
    dpa_template *t = template_ok("{\"discrete_laplace\":{\"scale\":2,\"sensitivity\":\"?\"}}");
    const dpa_param_info *pi = dpa_template_param(t);
    assert_int_equal(pi->role, DPA_ROLE_BUDGET);
    assert_true(pi->is_integer);
    assert_true(pi->lo == 1 && pi->hi == 1e6);
    dpa_template_free(t);

    t = template_ok("{\"approx\":{\"epsilon\":1,\"delta\":\"?\"}}");
    pi = dpa_template_param(t);
    assert_string_equal(pi->name, "delta");
    assert_true(pi->lo == 0 && !pi->lo_open && pi->hi == 1 && !pi->hi_open);
    dpa_template_free(t);

    t = template_ok("{\"randomized_response\":{\"p\":\"?\"}}");
    pi = dpa_template_param(t);
    assert_string_equal(pi->name, "p");
    assert_string_equal(pi->path, "/randomized_response/p");
    assert_int_equal(pi->role, DPA_ROLE_BUDGET);
    assert_true(pi->lo == 0.5 && !pi->lo_open && pi->hi == 1 && pi->hi_open);
    s = dpa_template_instantiate(t, 0.75, &err);
    assert_non_null(s);
    assert_true(fabs(param(dpa_spec_root(s), "epsilon") - log(3.0)) <= 1e-15);
    dpa_spec_free(s);
    assert_null(dpa_template_instantiate(t, 1, &err));
    assert_string_equal(err.message, "/randomized_response/p: must be in [0.5, 1), got 1");
    dpa_template_free(t);

    t = template_ok("{\"gdp\":{\"mu\":\"?\"}}");
    pi = dpa_template_param(t);
    assert_true(pi->lo == 0 && !pi->lo_open && pi->hi == DBL_MAX);
    assert_int_equal(pi->role, DPA_ROLE_BUDGET);
    s = dpa_template_instantiate(t, 0, &err);
    assert_non_null(s);
    dpa_spec_free(s);
    dpa_template_free(t);
}

static void test_template_errors(void **state)
{
    (void)state;
    dpa_error err;
    assert_null(dpa_template_from_json("{\"gaussian\":{\"sigma\":1}}", &err));
    assert_int_equal(err.status, DPA_EINVAL);
    assert_non_null(strstr(err.message, "no \"?\" placeholder"));
    assert_null(dpa_template_from_json("{\"repeat\":{\"count\":\"?\",\"event\":"
                                       "{\"gaussian\":{\"sigma\":\"?\"}}}}", &err));
    assert_int_equal(err.status, DPA_EINVAL);
    assert_non_null(strstr(err.message, "/repeat/event/gaussian/sigma: more than one \"?\""));
    assert_non_null(strstr(err.message, "the first is at /repeat/count"));
    assert_null(dpa_template_from_json("{\"sample\":{\"n\":\"?\",\"m\":\"?\",\"event\":"
                                       "{\"gdp\":{\"mu\":1}}}}", &err));
    assert_non_null(strstr(err.message, "/sample/m: more than one"));
    assert_non_null(strstr(err.message, "first is at /sample/n"));
    /* "?" where no number is expected, or not exactly "?". */
    assert_null(dpa_template_from_json("{\"compose\":\"?\"}", &err));
    assert_non_null(strstr(err.message, "/compose: expected an array"));
    assert_null(dpa_template_from_json("{\"gdp\":{\"mu\":\"??\"}}", &err));
    assert_non_null(strstr(err.message, "/gdp/mu: expected a number, got string"));
    assert_null(dpa_template_from_json("{\"gdp\":{\"mu\":\"?\"},\"neighboring\":\"?\"}", &err));
    assert_non_null(strstr(err.message, "/neighboring: must be"));
    /* Errors elsewhere in a template are reported as for a spec. */
    assert_null(dpa_template_from_json("{\"repeat\":{\"count\":\"?\",\"event\":"
                                       "{\"gaussian\":{\"sigma\":-1}}}}", &err));
    assert_string_equal(err.message, "/repeat/event/gaussian/sigma: must be > 0 and finite, got -1");
    assert_null(dpa_template_from_json("", &err));
    assert_null(dpa_template_from_json("{\"gdp\":{\"mu\":\"?\"}", &err));
    assert_non_null(strstr(err.message, "JSON syntax error"));
    assert_null(dpa_template_instantiate(NULL, 1, &err));
    assert_null(dpa_template_param(NULL));
}

/* Instantiating many values gives independent specs that round-trip. */
static void test_template_instantiate_many(void **state)
{
    (void)state;
    dpa_error err;
    dpa_template *t = template_ok("{\"repeat\":{\"count\":\"?\",\"event\":{\"poisson\":{\"rate\":0.001,"
                                  "\"event\":{\"gaussian\":{\"sigma\":0.9}}}}},\"neighboring\":\"replace\"}");
    for (double k = 1; k <= 1e15; k *= 7) {
        dpa_spec *s = dpa_template_instantiate(t, floor(k), &err);
        assert_non_null(s);
        assert_true(param(dpa_spec_root(s), "count") == floor(k));
        assert_round_trip(s);
        dpa_spec_free(s);
    }
    dpa_template_free(t);
}

/* Issue 12 item 4: labels ("name" in an event object) */
static void test_event_names(void **state)
{
    (void)state;
    dpa_error err;
    const char *j = "{\"name\":\"pretraining\",\"compose\":[{\"gaussian\":{\"sigma\":1}},{\"name\":\"fine-tune \\\"2\\\"\","
                    "\"repeat\":{\"count\":3,\"event\":{\"laplace\":{\"scale\":1}}}}]}";
    dpa_spec *s = dpa_spec_from_json(j, &err);
    assert_non_null(s);
    const dpa_event *r = dpa_spec_root(s);
    assert_string_equal(dpa_event_get_name(r), "pretraining");
    assert_null(dpa_event_get_name(dpa_event_child(r, 0)));
    assert_string_equal(dpa_event_get_name(dpa_event_child(r, 1)), "fine-tune \"2\"");
    /* round trip through the writer and a copy */
    char *out = dpa_spec_to_json(s);
    assert_non_null(out);
    assert_non_null(strstr(out, "\"name\":\"pretraining\""));
    dpa_spec *s2 = dpa_spec_from_json(out, &err);
    assert_non_null(s2);
    char *out2 = dpa_spec_to_json(s2);
    assert_string_equal(out, out2);
    dpa_spec *s3 = dpa_spec_copy(s2);
    char *out3 = dpa_spec_to_json(s3);
    assert_string_equal(out, out3);
    free(out);
    free(out2);
    free(out3);
    dpa_spec_free(s);
    dpa_spec_free(s2);
    dpa_spec_free(s3);
    /* messages give the labels on the path */
    s = dpa_spec_from_json("{\"compose\":[{\"gaussian\":{\"sigma\":1}},{\"name\":\"fine-tune\",\"repeat\":{\"count\":0.5,"
                           "\"event\":{\"gaussian\":{\"sigma\":1}}}}]}", &err);
    assert_null(s);
    assert_non_null(strstr(err.message, "/compose/1 (\"fine-tune\")/repeat/count: "));
    /* invalid names */
    const char *bad[] = {"{\"name\":\"\",\"gaussian\":{\"sigma\":1}}", "{\"name\":3,\"gaussian\":{\"sigma\":1}}",
                         "{\"name\":\"a\\u0007b\",\"gaussian\":{\"sigma\":1}}"};
    for (size_t i = 0; i < 3; i++) {
        s = dpa_spec_from_json(bad[i], &err);
        assert_null(s);
        assert_int_equal(err.status, DPA_EINVAL);
        assert_non_null(strstr(err.message, "/name: "));
    }
    char big[260];
    memset(big, 'x', 201);
    big[201] = '\0';
    dpa_event *e = dpa_event_gaussian(1, 1, &err);
    assert_int_equal(dpa_event_set_name(e, big, &err), DPA_EINVAL);
    big[200] = '\0';
    assert_int_equal(dpa_event_set_name(e, big, &err), DPA_OK);
    assert_int_equal((int)strlen(dpa_event_get_name(e)), 200);
    assert_int_equal(dpa_event_set_name(e, NULL, &err), DPA_OK);
    assert_null(dpa_event_get_name(e));
    dpa_event_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_gaussian_defaults),
        cmocka_unit_test(test_parse_all_leaves),
        cmocka_unit_test(test_parse_combinators),
        cmocka_unit_test(test_canonical_output),
        cmocka_unit_test(test_round_trip_many),
        cmocka_unit_test(test_neighboring),
        cmocka_unit_test(test_randomized_response_p),
        cmocka_unit_test(test_integers),
        cmocka_unit_test(test_errors_domains),
        cmocka_unit_test(test_errors_keys),
        cmocka_unit_test(test_unknown_kind_lists_kinds),
        cmocka_unit_test(test_errors_types),
        cmocka_unit_test(test_errors_syntax),
        cmocka_unit_test(test_garbage_inputs),
        cmocka_unit_test(test_deeply_nested_arrays),
        cmocka_unit_test(test_event_depth_limit),
        cmocka_unit_test(test_truncated_and_mutated),
        cmocka_unit_test(test_ctor_valid_and_params),
        cmocka_unit_test(test_ctor_reject_leaves),
        cmocka_unit_test(test_ctor_boundaries),
        cmocka_unit_test(test_ctor_frees_children),
        cmocka_unit_test(test_copy_and_specs),
        cmocka_unit_test(test_slot_layout),
        cmocka_unit_test(test_null_safety),
        cmocka_unit_test(test_long_key_message),
        cmocka_unit_test(test_wide_compose),
        cmocka_unit_test(test_template_count),
        cmocka_unit_test(test_template_sigma),
        cmocka_unit_test(test_template_rate),
        cmocka_unit_test(test_template_sample),
        cmocka_unit_test(test_template_other_params),
        cmocka_unit_test(test_template_errors),
        cmocka_unit_test(test_template_instantiate_many),
        cmocka_unit_test(test_event_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
