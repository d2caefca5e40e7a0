/* Spec and template parsing checks shared by the tests of the JSON readers
 * (include after <cmocka.h>).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef DPA_TESTS_PARSE_CHECK_H
#define DPA_TESTS_PARSE_CHECK_H

#include <stdio.h>
#include <string.h>
#include "dpacct/calibrate.h"
#include "dpacct/event.h"

/* Parse text that must be valid; fails the test with the message otherwise. */
static inline dpa_spec *parse_ok(const char *text)
{
    dpa_error err = {DPA_OK, ""};
    dpa_spec *s = dpa_spec_from_json(text, &err);
    if (!s)
        fail_msg("unexpected error for %s: %s", text, err.message);
    return s;
}

/* An error of a refused text: DPA_EINVAL, a message that starts with "path:"
 * and contains phrase. */
static inline void expect_einval(const char *text, const dpa_error *err, const char *path, const char *phrase)
{
    char prefix[300];
    assert_int_equal(err->status, DPA_EINVAL);
    snprintf(prefix, sizeof prefix, "%s: ", path);
    if (strncmp(err->message, prefix, strlen(prefix)) != 0 || !strstr(err->message, phrase))
        fail_msg("for %s: message \"%s\" lacks path \"%s\" or phrase \"%s\"", text, err->message, path, phrase);
}

/* Parse a spec text that must fail (expect_einval). */
static inline void expect_err(const char *text, const char *path, const char *phrase)
{
    dpa_error err = {DPA_OK, ""};
    dpa_spec *s = dpa_spec_from_json(text, &err);
    if (s) {
        dpa_spec_free(s);
        fail_msg("accepted invalid spec %s", text);
    }
    expect_einval(text, &err, path, phrase);
}

/* Parse a template text that must fail (expect_einval). */
static inline void expect_template_err(const char *text, const char *path, const char *phrase)
{
    dpa_error err = {DPA_OK, ""};
    dpa_template *t = dpa_template_from_json(text, &err);
    if (t) {
        dpa_template_free(t);
        fail_msg("accepted invalid template %s", text);
    }
    expect_einval(text, &err, path, phrase);
}

#endif
