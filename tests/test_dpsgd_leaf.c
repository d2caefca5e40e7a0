/* Tests of the dpsgd spec leaf (issue 12 item 1, docs/spec.md): a DP-SGD
 * run as an event that composes with others, expanded at parse time into
 * the tree `dpacct dpsgd` builds, so every method's result is bit-identical
 * to the expanded spec's.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "dpacct/accountant.h"
#include "dpacct/calibrate.h"
#include "dpacct/event.h"
#include "parse_check.h"

/* eps at delta of a spec text with a method */
static dpa_result eps_of(const char *text, dpa_method m, double delta)
{
    dpa_error err = {DPA_OK, ""};
    dpa_options opt;
    dpa_result r;
    dpa_spec *s = parse_ok(text);
    dpa_options_init(&opt);
    opt.method = m;
    opt.threads = 1;
    dpa_accountant *a = dpa_accountant_new(s, &opt, &err);
    if (!a)
        fail_msg("accountant for %s: %s", text, err.message);
    if (dpa_accountant_epsilon(a, delta, &r, &err) != DPA_OK)
        fail_msg("epsilon for %s: %s", text, err.message);
    dpa_accountant_free(a);
    dpa_spec_free(s);
    return r;
}

static void assert_same(const char *a, const char *b, dpa_method m, double delta)
{
    dpa_result ra = eps_of(a, m, delta), rb = eps_of(b, m, delta);
    if (memcmp(&ra.upper, &rb.upper, sizeof ra.upper) || memcmp(&ra.lower, &rb.lower, sizeof ra.lower) ||
        ra.method != rb.method)
        fail_msg("%s: [%.17g, %.17g] vs %s: [%.17g, %.17g]", a, ra.lower, ra.upper, b, rb.lower, rb.upper);
}

#define MNIST "{\"dpsgd\":{\"dataset_size\":60000,\"batch_size\":256,\"epochs\":60,\"noise\":1.1}}"
#define MNIST_EXPANDED                                                                                          \
    "{\"repeat\":{\"count\":14063,\"event\":{\"poisson\":{\"rate\":0.0042666666666666669,\"event\":"         \
    "{\"gaussian\":{\"sigma\":1.1,\"sensitivity\":1}}}}}}"

/* The reference: `dpacct dpsgd --dataset-size 60000 --batch-size 256
 * --epochs 60 --noise 1.1 --delta 1e-5 --json` gives epsilon_upper
 * 2.3817507848756874 (and the same spec expanded by hand). */
static void test_mnist_reference(void **state)
{
    (void)state;
    dpa_result r = eps_of(MNIST, DPA_METHOD_AUTO, 1e-5);
    assert_true(r.upper == 2.3817507848756874);
    assert_true(r.lower == 2.3815618252560724);
    assert_same(MNIST, MNIST_EXPANDED, DPA_METHOD_AUTO, 1e-5);
    assert_same(MNIST, MNIST_EXPANDED, DPA_METHOD_RDP, 1e-5);
    /* steps instead of epochs: the same run */
    assert_same("{\"dpsgd\":{\"dataset_size\":60000,\"batch_size\":256,\"steps\":14063,\"noise\":1.1,"
                "\"sampling\":\"poisson\"}}",
                MNIST_EXPANDED, DPA_METHOD_AUTO, 1e-5);
}

static void test_without_replacement(void **state)
{
    (void)state;
    const char *leaf = "{\"dpsgd\":{\"dataset_size\":1000,\"batch_size\":100,\"epochs\":5,\"noise\":2,"
                       "\"sampling\":\"without_replacement\"},\"neighboring\":\"replace\"}";
    const char *tree = "{\"repeat\":{\"count\":50,\"event\":{\"sample\":{\"n\":1000,\"m\":100,\"event\":"
                       "{\"gaussian\":{\"sigma\":2,\"sensitivity\":2}}}}},\"neighboring\":\"replace\"}";
    assert_same(leaf, tree, DPA_METHOD_AUTO, 1e-6);
    assert_same(leaf, tree, DPA_METHOD_RDP, 1e-6);
}

static void test_composition(void **state)
{
    (void)state;
    /* pre-training then fine-tuning on the same data, plus a released count */
    const char *leaf = "{\"compose\":[{\"name\":\"pretraining\",\"dpsgd\":{\"dataset_size\":60000,\"batch_size\":256,"
                       "\"epochs\":10,\"noise\":1.1}},{\"name\":\"fine-tune\",\"dpsgd\":{\"dataset_size\":60000,"
                       "\"batch_size\":600,\"steps\":500,\"noise\":0.8}},{\"laplace\":{\"scale\":20}}]}";
    const char *tree =
        "{\"compose\":[{\"repeat\":{\"count\":2344,\"event\":{\"poisson\":{\"rate\":0.0042666666666666669,"
        "\"event\":{\"gaussian\":{\"sigma\":1.1}}}}}},{\"repeat\":{\"count\":500,\"event\":{\"poisson\":"
        "{\"rate\":0.01,\"event\":{\"gaussian\":{\"sigma\":0.8}}}}}},{\"laplace\":{\"scale\":20}}]}";
    assert_same(leaf, tree, DPA_METHOD_AUTO, 1e-5);
    assert_same(leaf, tree, DPA_METHOD_RDP, 1e-5);
    assert_same(leaf, tree, DPA_METHOD_PHI, 1e-5);
    /* several runs on one dataset: repeat of a dpsgd leaf */
    assert_same("{\"repeat\":{\"count\":3,\"event\":" MNIST "}}",
                "{\"repeat\":{\"count\":3,\"event\":" MNIST_EXPANDED "}}", DPA_METHOD_AUTO, 1e-5);
}

/* The step count: ceil(epochs N / B) exactly, a quotient within 1e-9 of an
 * integer counting as that integer (the CLI's and Python's convention). */
static void test_steps(void **state)
{
    (void)state;
    assert_true(dpa_dpsgd_steps(60, 60000, 256) == 14063);
    assert_true(dpa_dpsgd_steps(3, 10, 3) == 10);
    assert_true(dpa_dpsgd_steps(0.1, 30, 3) == 1);    /* 0.1 * 10 = 1.0000000000000000555 */
    assert_true(dpa_dpsgd_steps(0.3, 100, 10) == 3);  /* 0.3 * 10 = 2.9999999999999998890 */
    assert_true(dpa_dpsgd_steps(1e-9, 100, 100) == 1); /* at least one step */
    assert_true(dpa_dpsgd_steps(1.5, 7, 2) == 6);     /* 5.25 -> 6 */
    assert_true(dpa_dpsgd_steps(2e15, 1, 1) == 0);    /* more than 1e15 steps */
    assert_true(dpa_dpsgd_steps(1, 0, 1) == 0);
    assert_true(dpa_dpsgd_steps(-1, 10, 1) == 0);
    assert_true(dpa_dpsgd_steps(NAN, 10, 1) == 0);
}

static void test_round_trip(void **state)
{
    (void)state;
    const char *in[] = {
        MNIST,
        "{\"name\":\"run\",\"dpsgd\":{\"sampling\":\"without_replacement\",\"noise\":0.7,\"steps\":12,"
        "\"batch_size\":5,\"dataset_size\":50},\"neighboring\":\"replace\"}",
        "{\"compose\":[{\"gdp\":{\"mu\":0.5}},{\"name\":\"ft\",\"dpsgd\":{\"dataset_size\":1000,\"batch_size\":7,"
        "\"epochs\":2.5,\"noise\":3}}]}",
    };
    const char *want[] = {
        "{\"dpsgd\":{\"dataset_size\":60000,\"batch_size\":256,\"epochs\":60,\"noise\":1.1000000000000001,"
        "\"sampling\":\"poisson\"},\"neighboring\":\"add_remove\"}",
        "{\"name\":\"run\",\"dpsgd\":{\"dataset_size\":50,\"batch_size\":5,\"steps\":12,\"noise\":"
        "0.69999999999999996,\"sampling\":\"without_replacement\"},\"neighboring\":\"replace\"}",
        "{\"compose\":[{\"gdp\":{\"mu\":0.5}},{\"name\":\"ft\",\"dpsgd\":{\"dataset_size\":1000,\"batch_size\":7,"
        "\"epochs\":2.5,\"noise\":3,\"sampling\":\"poisson\"}}],\"neighboring\":\"add_remove\"}",
    };
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
        dpa_spec *s = parse_ok(in[i]);
        char *j = dpa_spec_to_json(s);
        assert_string_equal(j, want[i]);
        dpa_spec *c = dpa_spec_copy(s);
        char *j2 = dpa_spec_to_json(c);
        assert_string_equal(j2, want[i]);
        dpa_spec *s2 = parse_ok(j);
        char *j3 = dpa_spec_to_json(s2);
        assert_string_equal(j3, want[i]);
        free(j);
        free(j2);
        free(j3);
        dpa_spec_free(s);
        dpa_spec_free(c);
        dpa_spec_free(s2);
    }
    /* the event is the expanded tree */
    dpa_spec *s = parse_ok(MNIST);
    const dpa_event *r = dpa_spec_root(s);
    double v;
    assert_true(dpa_event_is_dpsgd(r));
    assert_int_equal(dpa_event_get_kind(r), DPA_EV_REPEAT);
    assert_int_equal(dpa_event_get_param(r, "count", &v), DPA_OK);
    assert_true(v == 14063);
    assert_int_equal(dpa_event_get_kind(dpa_event_child(r, 0)), DPA_EV_POISSON);
    assert_false(dpa_event_is_dpsgd(dpa_event_child(r, 0)));
    dpa_spec_free(s);
}

static void test_c_api(void **state)
{
    (void)state;
    dpa_error err = {DPA_OK, ""};
    dpa_event *e = dpa_event_dpsgd(60000, 256, 60, 0, 1.1, DPA_DPSGD_POISSON, &err);
    assert_non_null(e);
    dpa_spec *s = dpa_spec_new(e, DPA_ADD_REMOVE, &err);
    assert_non_null(s);
    char *j = dpa_spec_to_json(s);
    assert_string_equal(j, "{\"dpsgd\":{\"dataset_size\":60000,\"batch_size\":256,\"epochs\":60,\"noise\":"
                           "1.1000000000000001,\"sampling\":\"poisson\"},\"neighboring\":\"add_remove\"}");
    free(j);
    /* one neighbouring relation per spec: dpa_spec_new refuses a mismatch */
    dpa_event *kids[2] = {dpa_event_copy(dpa_spec_root(s)), dpa_event_gaussian(1, 1, &err)};
    dpa_event *c = dpa_event_compose(kids, 2, &err);
    assert_non_null(c);
    assert_null(dpa_spec_new(c, DPA_REPLACE, &err));
    assert_int_equal(err.status, DPA_EINVAL);
    assert_non_null(strstr(err.message, "/compose/0/dpsgd: a dpsgd run with sampling \"poisson\""));
    dpa_spec_free(s);
    e = dpa_event_dpsgd(10, 2, 0, 3, 1, DPA_DPSGD_WITHOUT_REPLACEMENT, &err);
    assert_non_null(e);
    assert_null(dpa_spec_new(e, DPA_ADD_REMOVE, &err));
    assert_non_null(strstr(err.message, "/dpsgd: a dpsgd run with sampling \"without_replacement\""));
    assert_null(dpa_event_dpsgd(10, 11, 1, 0, 1, DPA_DPSGD_POISSON, &err));
    assert_null(dpa_event_dpsgd(10, 2, 1, 3, 1, DPA_DPSGD_POISSON, &err));
    assert_null(dpa_event_dpsgd(10, 2, 0, 0, 1, DPA_DPSGD_POISSON, &err));
    assert_null(dpa_event_dpsgd(10, 2, 1, 0, 0, DPA_DPSGD_POISSON, &err));
    assert_null(dpa_event_dpsgd(10.5, 2, 1, 0, 1, DPA_DPSGD_POISSON, &err));
    assert_null(dpa_event_dpsgd(10, 2, 0, 2.5, 1, DPA_DPSGD_POISSON, &err));
    assert_null(dpa_event_dpsgd(1, 1, 2e15, 0, 1, DPA_DPSGD_POISSON, &err));
}

static void calibrate(const char *text, double eps, double delta, dpa_calibration *out)
{
    dpa_error err = {DPA_OK, ""};
    dpa_options opt;
    dpa_template *t = dpa_template_from_json(text, &err);
    if (!t)
        fail_msg("template %s: %s", text, err.message);
    dpa_options_init(&opt);
    opt.threads = 1;
    if (dpa_calibrate(t, eps, delta, &opt, 0, out, &err) != DPA_OK)
        fail_msg("calibrate %s: %s", text, err.message);
    dpa_template_free(t);
}

static void test_templates(void **state)
{
    (void)state;
    dpa_error err = {DPA_OK, ""};
    dpa_calibration a, b;
    /* noise: the same value as the expanded template */
    calibrate("{\"compose\":[{\"dpsgd\":{\"dataset_size\":60000,\"batch_size\":256,\"epochs\":20,\"noise\":\"?\"}},"
              "{\"gaussian\":{\"sigma\":30}}]}",
              2, 1e-5, &a);
    calibrate("{\"compose\":[{\"repeat\":{\"count\":4688,\"event\":{\"poisson\":{\"rate\":0.0042666666666666669,"
              "\"event\":{\"gaussian\":{\"sigma\":\"?\"}}}}}},{\"gaussian\":{\"sigma\":30}}]}",
              2, 1e-5, &b);
    assert_true(a.value == b.value);
    assert_true(a.at_value.upper == b.at_value.upper && a.at_value.upper <= 2);
    /* steps */
    calibrate("{\"dpsgd\":{\"dataset_size\":60000,\"batch_size\":256,\"steps\":\"?\",\"noise\":1.1}}", 2, 1e-5, &a);
    calibrate("{\"repeat\":{\"count\":\"?\",\"event\":{\"poisson\":{\"rate\":0.0042666666666666669,"
              "\"event\":{\"gaussian\":{\"sigma\":1.1}}}}}}",
              2, 1e-5, &b);
    assert_true(a.value == b.value && a.value == floor(a.value) && a.value > 1000);
    /* epochs: the largest whose step count meets the target */
    calibrate("{\"dpsgd\":{\"dataset_size\":60000,\"batch_size\":256,\"epochs\":\"?\",\"noise\":1.1}}", 2, 1e-5, &a);
    assert_true(a.at_value.upper <= 2);
    assert_true(dpa_dpsgd_steps(a.value, 60000, 256) <= b.value);
    /* template parameters */
    dpa_template *t = dpa_template_from_json(
        "{\"compose\":[{\"gdp\":{\"mu\":1}},{\"name\":\"ft\",\"dpsgd\":{\"dataset_size\":100,\"batch_size\":10,"
        "\"epochs\":3,\"noise\":\"?\",\"sampling\":\"without_replacement\"}}],\"neighboring\":\"replace\"}",
        &err);
    assert_non_null(t);
    const dpa_param_info *pi = dpa_template_param(t);
    assert_string_equal(pi->path, "/compose/1 (\"ft\")/dpsgd/noise");
    assert_string_equal(pi->name, "noise");
    assert_int_equal(pi->role, DPA_ROLE_NOISE);
    dpa_spec *s = dpa_template_instantiate(t, 1.5, &err);
    assert_non_null(s);
    char *j = dpa_spec_to_json(s);
    assert_string_equal(j, "{\"compose\":[{\"gdp\":{\"mu\":1}},{\"name\":\"ft\",\"dpsgd\":{\"dataset_size\":100,"
                           "\"batch_size\":10,\"epochs\":3,\"noise\":1.5,\"sampling\":\"without_replacement\"}}],"
                           "\"neighboring\":\"replace\"}");
    free(j);
    dpa_spec_free(s);
    assert_null(dpa_template_instantiate(t, -1, &err));
    assert_non_null(strstr(err.message, "/dpsgd/noise"));
    dpa_template_free(t);
    t = dpa_template_from_json("{\"dpsgd\":{\"dataset_size\":100,\"batch_size\":10,\"steps\":\"?\",\"noise\":1}}",
                               &err);
    assert_non_null(t);
    pi = dpa_template_param(t);
    assert_int_equal(pi->role, DPA_ROLE_BUDGET);
    assert_true(pi->is_integer);
    assert_null(dpa_template_instantiate(t, 2.5, &err));
    dpa_template_free(t);
    t = dpa_template_from_json("{\"dpsgd\":{\"dataset_size\":100,\"batch_size\":10,\"epochs\":\"?\",\"noise\":1}}",
                               &err);
    assert_non_null(t);
    pi = dpa_template_param(t);
    assert_int_equal(pi->role, DPA_ROLE_BUDGET);
    assert_false(pi->is_integer);
    assert_true(pi->lo == 0 && pi->lo_open && pi->hi <= 1e14);
    s = dpa_template_instantiate(t, pi->hi, &err);
    assert_non_null(s);
    dpa_spec_free(s);
    dpa_template_free(t);
    /* batch size and dataset size: not monotone under epochs */
    expect_template_err("{\"dpsgd\":{\"dataset_size\":100,\"batch_size\":\"?\",\"epochs\":3,\"noise\":1}}",
                        "/dpsgd/batch_size", "not monotone");
    expect_template_err("{\"dpsgd\":{\"dataset_size\":\"?\",\"batch_size\":10,\"epochs\":3,\"noise\":1}}",
                        "/dpsgd/dataset_size", "not monotone");
    expect_template_err("{\"dpsgd\":{\"dataset_size\":100,\"batch_size\":10,\"epochs\":3,\"noise\":1,"
                        "\"sampling\":\"?\"}}",
                        "/dpsgd/sampling", "cannot be calibrated");
    expect_template_err("{\"dpsgd\":{\"dataset_size\":100,\"batch_size\":10,\"epochs\":\"?\",\"noise\":\"?\"}}",
                        "/dpsgd/noise", "more than one");
    /* a plain spec refuses "?" */
    expect_err("{\"dpsgd\":{\"dataset_size\":100,\"batch_size\":10,\"epochs\":3,\"noise\":\"?\"}}", "/dpsgd/noise",
               "only allowed in a calibration template");
}

static void test_bad_input(void **state)
{
    (void)state;
    expect_err("{\"dpsgd\":{\"batch_size\":10,\"epochs\":3,\"noise\":1}}", "/dpsgd", "missing key \"dataset_size\"");
    expect_err("{\"dpsgd\":{\"dataset_size\":100,\"epochs\":3,\"noise\":1}}", "/dpsgd", "missing key \"batch_size\"");
    expect_err("{\"dpsgd\":{\"dataset_size\":100,\"batch_size\":10,\"noise\":1}}", "/dpsgd",
               "missing key \"epochs\" (or \"steps\")");
    expect_err("{\"dpsgd\":{\"dataset_size\":100,\"batch_size\":10,\"epochs\":3}}", "/dpsgd", "missing key \"noise\"");
    expect_err("{\"dpsgd\":{\"dataset_size\":100,\"batch_size\":10,\"epochs\":3,\"steps\":30,\"noise\":1}}", "/dpsgd",
               "exactly one of \"epochs\" and \"steps\"");
    expect_err("{\"dpsgd\":{\"dataset_size\":100,\"batch_size\":10,\"epochs\":3,\"noise\":1,\"size\":3}}", "/dpsgd",
               "unknown key \"size\" (expected dataset_size, batch_size, epochs, steps, noise, sampling)");
    expect_err("{\"dpsgd\":{\"dataset_size\":100.5,\"batch_size\":10,\"epochs\":3,\"noise\":1}}",
               "/dpsgd/dataset_size", "integer");
    expect_err("{\"dpsgd\":{\"dataset_size\":0,\"batch_size\":10,\"epochs\":3,\"noise\":1}}", "/dpsgd/dataset_size",
               "must be");
    expect_err("{\"dpsgd\":{\"dataset_size\":100,\"batch_size\":101,\"epochs\":3,\"noise\":1}}", "/dpsgd/batch_size",
               "dataset_size");
    expect_err("{\"dpsgd\":{\"dataset_size\":100,\"batch_size\":10,\"epochs\":0,\"noise\":1}}", "/dpsgd/epochs",
               "must be");
    expect_err("{\"dpsgd\":{\"dataset_size\":1,\"batch_size\":1,\"epochs\":2e15,\"noise\":1}}", "/dpsgd/epochs",
               "more than 1e+15 steps");
    expect_err("{\"dpsgd\":{\"dataset_size\":100,\"batch_size\":10,\"steps\":2.5,\"noise\":1}}", "/dpsgd/steps",
               "integer");
    expect_err("{\"dpsgd\":{\"dataset_size\":100,\"batch_size\":10,\"steps\":3,\"noise\":0}}", "/dpsgd/noise",
               "must be");
    expect_err("{\"dpsgd\":{\"dataset_size\":100,\"batch_size\":10,\"steps\":3,\"noise\":\"1\"}}", "/dpsgd/noise",
               "expected a number, got string");
    expect_err("{\"dpsgd\":{\"dataset_size\":100,\"batch_size\":10,\"steps\":3,\"noise\":1,\"sampling\":\"shuffle\"}}",
               "/dpsgd/sampling", "\"shuffle\" has no single pair to compose");
    expect_err("{\"dpsgd\":{\"dataset_size\":100,\"batch_size\":10,\"steps\":3,\"noise\":1,\"sampling\":\"bogus\"}}",
               "/dpsgd/sampling", "must be \"poisson\", \"without_replacement\" or \"random_allocation\", got \"bogus\"");
    expect_err("{\"dpsgd\":{\"dataset_size\":100,\"batch_size\":10,\"steps\":3,\"noise\":1,"
               "\"sampling\":\"random_allocation\"}}",
               "/dpsgd", "steps must be a multiple of ceil(dataset_size / batch_size) = 10");
    expect_err("{\"dpsgd\":{\"dataset_size\":100,\"batch_size\":10,\"epochs\":1.5,\"noise\":1,"
               "\"sampling\":\"random_allocation\"}}",
               "/dpsgd/epochs", "must be an integer");
    expect_err("{\"dpsgd\":{\"dataset_size\":100,\"batch_size\":10,\"steps\":3,\"noise\":1,\"sampling\":1}}",
               "/dpsgd/sampling", "expected a string");
    expect_err("{\"dpsgd\":[1]}", "/dpsgd", "expected an object, got array");
    /* one neighbouring relation per spec */
    expect_err("{\"compose\":[{\"gdp\":{\"mu\":1}},{\"name\":\"ft\",\"dpsgd\":{\"dataset_size\":100,\"batch_size\":10,"
               "\"steps\":3,\"noise\":1,\"sampling\":\"without_replacement\"}}]}",
               "/compose/1 (\"ft\")/dpsgd", "spec is \"add_remove\"");
    expect_err("{\"dpsgd\":{\"dataset_size\":100,\"batch_size\":10,\"steps\":3,\"noise\":1},"
               "\"neighboring\":\"replace\"}",
               "/dpsgd", "spec is \"replace\"");
    expect_err("{\"dpsgd\":{\"dataset_size\":100,\"batch_size\":10,\"steps\":3,\"noise\":1},"
               "\"gaussian\":{\"sigma\":1}}",
               "/", "found 2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mnist_reference), cmocka_unit_test(test_without_replacement),
        cmocka_unit_test(test_composition),     cmocka_unit_test(test_steps),
        cmocka_unit_test(test_round_trip),      cmocka_unit_test(test_c_api),
        cmocka_unit_test(test_templates),       cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
