/* Deterministic robustness tests (fixed-seed xorshift64*, no libFuzzer):
 * "bad input of any kind gets a clear error, never a crash, a NaN result
 * or lost data".
 *
 *  - mutation (100000 specs, 20000 templates): seed specs and templates
 *    (from docs/spec.md and the tests) mutated byte-wise (flips, deletions,
 *    duplications, dictionary tokens, hostile numbers in place of numbers).  Every input either
 *    parses, or fails with DPA_EINVAL and a non-empty message.  A spec that
 *    parses serializes to canonical JSON that reparses to the same text
 *    (and dpa_spec_copy serializes the same).  A template that parses has a
 *    sane domain, and dpa_template_instantiate accepts a value exactly when
 *    it lies in the domain of its dpa_param_info (is_integer included); what
 *    it returns round-trips too.
 *  - generated trees (6000): random specs from the documented grammar, with
 *    values drawn from pools of ordinary, boundary and out-of-domain numbers, each
 *    printed in one of several number syntaxes.  A parse must succeed exactly
 *    when every value is in its domain (and nesting is at most 256 levels).
 *  - accountant (600 specs): generated valid specs (from a pool of
 *    cheap-to-evaluate values) go through dpa_accountant_new with
 *    accuracy 1e-2 and max_grid 2^16, then epsilon(1e-5) and delta(1): no
 *    NaN anywhere in the result, 0 <= lower <= upper, delta bounds finite
 *    and in [0, 1], upper = max(upper_remove, upper_add), an infinite eps
 *    upper with a finite lower only with accuracy_met = 0.  Errors must be
 *    DPA_EUNSUPPORTED (zcdp), DPA_ENOMEM or DPA_ENUMERIC with a message, and
 *    never DPA_EINVAL for a spec the parser accepted -- except one case
 *    tolerated and counted: DPA_EINVAL "total count ... exceeds 1e+15" when
 *    the flattened count of a leaf (a product of nested repeats, or a sum
 *    over a compose) exceeds DPA_MAX_COUNT although every repeat count is
 *    in range; accountant.h does not list DPA_EINVAL for this.
 *    Every tenth answered spec also goes through the phi and rdp methods:
 *    no NaN, only documented errors, rdp's upper bound never below the
 *    certified lower bound, phi's estimate never disjoint from the bracket.
 *  - filters (120 sequences of 3 generated cheap specs over 8 filter kinds):
 *    restore-and-replay gives the same decisions and byte-identical states;
 *    rejections leave the state; no -0, nan or inf in a state.
 *  - nesting: 256 levels parse, 257 and 100001 are refused (no stack overflow).
 *  - extreme queries on the EXACT accountants (Gaussian/GDP and the pure/RR/
 *    approx lattice): delta at eps from -DBL_MAX to DBL_MAX, epsilon at
 *    delta from 4.9e-324 to 1 - 2^-53, for extreme mu and epsilon.
 * Set DPA_FUZZ_VERBOSE=1 to print every refusal of the accountant.
 *
 * Every failure is printed (input and what was wrong) and counted; a test
 * fails at its end if any case failed.
 *
 * test_exact_extreme_eps guards a bug this fuzzing found (fixed in 99b3c6e):
 * dpa_accountant_delta on the EXACT (Gaussian/GDP) accountant returned
 * lower = NaN with DPA_OK for eps <= about -2e9 * mu (e.g. gaussian sigma
 * 1, eps = -1e10), from 0 * inf in the round-off allowance of
 * src/exact/gaussian.c.
 *
 * test_tiny_noise covers noise so small that it vanishes in double precision
 * (discrete_gaussian sigma below ~1e-145, gaussian sensitivity/sigma above
 * 1e150 or overflowing): such mechanisms are the non-private pair, so eps is
 * +inf and delta(1) is 1 (they once gave eps = 0, an internal error, or
 * DPA_EINVAL for a valid spec).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <float.h>
#include <math.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dpacct/dpacct.h"
#include "filter_replay.h"

/* ------------------------------------------------------------------ */
/* infrastructure */

static uint64_t rng_state;
static uint64_t rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ULL;
}
static size_t rndn(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

static int failures;
#define FAILF(...) do { failures++; if (failures <= 40) { fprintf(stderr, "FAIL: " __VA_ARGS__); fputc('\n', stderr); } } while (0)

/* growable string */
typedef struct sbuf { char *p; size_t n, cap; } sbuf;
static void sb_put(sbuf *b, const char *s, size_t len)
{
    if (b->n + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + len + 1) cap *= 2;
        b->p = realloc(b->p, cap);
        assert_non_null(b->p);
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, len);
    b->n += len;
    b->p[b->n] = 0;
}
static void sb_puts(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    assert_true(k >= 0 && (size_t)k < sizeof tmp);
    sb_put(b, tmp, (size_t)k);
}

static int setup(void **state) { (void)state; failures = 0; return 0; }
static int teardown(void **state) { (void)state; return 0; }

/* ------------------------------------------------------------------ */
/* checks shared by all inputs */

/* An error return: known status, the same in err, a terminated non-empty message. */
static int check_error(const char *what, const dpa_error *err, dpa_status expect1, dpa_status expect2,
                       const char *input)
{
    size_t len = strnlen(err->message, DPA_ERROR_MESSAGE_MAX);
    if ((err->status != expect1 && err->status != expect2) || len == 0 || len >= DPA_ERROR_MESSAGE_MAX) {
        FAILF("%s: status %d, message \"%.*s\" for input %.300s", what, (int)err->status,
              (int)(len < 200 ? len : 200), err->message, input);
        return 0;
    }
    return 1;
}

/* Serialize, reparse, serialize: the same text; the copy too. */
static void check_roundtrip(const dpa_spec *s, const char *input)
{
    dpa_error err;
    char *j1 = dpa_spec_to_json(s);
    if (!j1) { FAILF("to_json returned NULL for %.300s", input); return; }
    if (strstr(j1, "nan") || strstr(j1, "inf"))
        FAILF("to_json wrote a non-finite number: %.300s", j1);
    dpa_spec *s2 = dpa_spec_from_json(j1, &err);
    if (!s2) {
        FAILF("canonical output does not reparse: %.300s -> %s (input %.300s)", j1, err.message, input);
        free(j1);
        return;
    }
    char *j2 = dpa_spec_to_json(s2);
    if (!j2 || strcmp(j1, j2)) FAILF("round trip changed the spec:\n  %.300s\n  %.300s", j1, j2 ? j2 : "(null)");
    dpa_spec *s3 = dpa_spec_copy(s);
    char *j3 = s3 ? dpa_spec_to_json(s3) : NULL;
    if (!j3 || strcmp(j1, j3)) FAILF("copy serializes differently: %.300s", j1);
    if (dpa_spec_neighboring(s2) != dpa_spec_neighboring(s)) FAILF("neighboring lost: %.300s", j1);
    free(j1);
    free(j2);
    free(j3);
    dpa_spec_free(s2);
    dpa_spec_free(s3);
}

static int evaluations, eval_ok, eval_err, total_count_einval;

static void check_result_common(const char *q, const dpa_result *r, const char *input)
{
    if (isnan(r->upper) || isnan(r->lower) || isnan(r->upper_remove) || isnan(r->upper_add) ||
        isnan(r->grid_step) || isnan(r->truncated_mass) || isnan(r->roundoff))
        FAILF("%s: NaN in the result (lower %g upper %g remove %g add %g) for %.300s", q, r->lower, r->upper,
              r->upper_remove, r->upper_add, input);
    if (r->lower > r->upper) FAILF("%s: lower %.17g > upper %.17g for %.300s", q, r->lower, r->upper, input);
    if (r->lower < 0) FAILF("%s: lower %.17g < 0 for %.300s", q, r->lower, input);
    if (fmax(r->upper_remove, r->upper_add) != r->upper)
        FAILF("%s: upper %.17g is not max(remove %.17g, add %.17g) for %.300s", q, r->upper, r->upper_remove,
              r->upper_add, input);
    if (r->method != DPA_METHOD_PLD && r->method != DPA_METHOD_EXACT && r->method != DPA_METHOD_PHI &&
        r->method != DPA_METHOD_RDP)
        FAILF("%s: method %d for %.300s", q, (int)r->method, input);
    if (r->certified != (r->method != DPA_METHOD_PHI))
        FAILF("%s: certified %d with method %d for %.300s", q, r->certified, (int)r->method, input);
    if (!memchr(r->note, '\0', sizeof r->note)) FAILF("%s: unterminated note for %.300s", q, input);
}

/* The other methods on a spec the auto accountant answered (method m,
 * eps(1e-5) bracket [lo, up] certified): no NaN, errors only
 * EUNSUPPORTED/ENOMEM/ENUMERIC, rdp's upper bound never below the certified
 * lower bound, phi's estimate never disjoint from the certified bracket. */
static int cross_checked, cross_refused;
static void check_other_methods(const dpa_spec *s, const char *input, double lo, double up)
{
    static const dpa_method ms[] = {DPA_METHOD_PHI, DPA_METHOD_RDP};
    for (size_t i = 0; i < 2; i++) {
        dpa_error err;
        dpa_options o;
        dpa_options_init(&o);
        o.method = ms[i];
        o.accuracy = 1e-2;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        dpa_accountant *a = dpa_accountant_new(s, &o, &err);
        if (!a) {
            cross_refused++;
            check_error("accountant_new (phi/rdp)", &err, DPA_EUNSUPPORTED, DPA_ENOMEM, input);
            continue;
        }
        dpa_result r;
        dpa_status st = dpa_accountant_epsilon(a, 1e-5, &r, &err);
        if (st != DPA_OK) {
            cross_refused++;
            check_error("epsilon (phi/rdp)", &err, DPA_EUNSUPPORTED, DPA_ENUMERIC, input);
        } else {
            cross_checked++;
            check_result_common(ms[i] == DPA_METHOD_PHI ? "phi epsilon" : "rdp epsilon", &r, input);
            if (r.method != ms[i]) FAILF("method %d asked, %d reported", (int)ms[i], (int)r.method);
            /* slack: 1e-9 relative (the brackets' own round-off is far below) */
            if (ms[i] == DPA_METHOD_RDP && r.upper < lo * (1 - 1e-9))
                FAILF("rdp upper %.17g below the certified lower bound %.17g for %s", r.upper, lo, input);
            if (ms[i] == DPA_METHOD_PHI && r.certified == 0 && isfinite(r.upper) &&
                (r.upper < lo * (1 - 1e-9) - 1e-12 || r.lower > up * (1 + 1e-9) + 1e-12) && r.accuracy_met)
                FAILF("phi bracket [%.17g, %.17g] disjoint from the certified [%.17g, %.17g] for %.300s", r.lower,
                      r.upper, lo, up, input);
        }
        dpa_accountant_free(a);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double sec = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        if (getenv("DPA_FUZZ_VERBOSE") && sec > 0.5) fprintf(stderr, "SLOW %s %.2f s: %s\n", ms[i] == DPA_METHOD_PHI ? "phi" : "rdp", sec, input);
    }
}

static void check_accountant(const dpa_spec *s, const char *input)
{
    dpa_error err;
    dpa_options o;
    dpa_options_init(&o);
    o.accuracy = 1e-2;
    o.max_grid = (size_t)1 << 16;
    dpa_accountant *a = dpa_accountant_new(s, &o, &err);
    evaluations++;
    if (!a) {
        if (getenv("DPA_FUZZ_VERBOSE")) fprintf(stderr, "new: %s\n", err.message);
        /* undocumented in accountant.h (src/model/leaves.h only): DPA_EINVAL
         * when the flattened total count of a leaf exceeds DPA_MAX_COUNT,
         * although every single repeat count is in range */
        if (err.status == DPA_EINVAL && strstr(err.message, "total count")) {
            total_count_einval++;
            return;
        }
        check_error("accountant_new", &err, DPA_EUNSUPPORTED, DPA_ENOMEM, input);
        return;
    }
    dpa_result r;
    dpa_status st = dpa_accountant_epsilon(a, 1e-5, &r, &err);
    if (st == DPA_OK) eval_ok++; else eval_err++;
    if (st != DPA_OK) {
        if (st != err.status) FAILF("epsilon: returned %d, err.status %d", (int)st, (int)err.status);
        if (getenv("DPA_FUZZ_VERBOSE")) fprintf(stderr, "eps: %s\n", err.message);
        check_error("epsilon", &err, DPA_ENOMEM, DPA_ENUMERIC, input);
    } else {
        check_result_common("epsilon(1e-5)", &r, input);
        if (isinf(r.upper) && isfinite(r.lower) && r.accuracy_met)
            FAILF("epsilon: upper inf, lower %g finite with accuracy_met = 1 for %.300s", r.lower, input);
        if (r.lower == INFINITY && r.upper != INFINITY) FAILF("epsilon: lower inf, upper finite");
        /* every tenth spec through phi and rdp too (they cost more per spec) */
        if (evaluations % 10 == 0 && r.certified) check_other_methods(s, input, r.lower, r.upper);
    }
    st = dpa_accountant_delta(a, 1.0, &r, &err);
    if (st != DPA_OK) {
        if (st != err.status) FAILF("delta: returned %d, err.status %d", (int)st, (int)err.status);
        check_error("delta", &err, DPA_ENOMEM, DPA_ENUMERIC, input);
    } else {
        check_result_common("delta(1)", &r, input);
        if (!isfinite(r.upper) || !isfinite(r.lower) || r.upper > 1)
            FAILF("delta: bounds [%g, %g] not finite in [0, 1] for %.300s", r.lower, r.upper, input);
    }
    dpa_accountant_free(a);
}

/* Parse as a spec; on success the round trip (and optionally the accountant). */
static int try_spec(const char *text, int evaluate)
{
    dpa_error err;
    memset(&err, 0x5a, sizeof err);
    dpa_spec *s = dpa_spec_from_json(text, &err);
    if (!s) {
        check_error("spec_from_json", &err, DPA_EINVAL, DPA_EINVAL, text);
        return 0;
    }
    check_roundtrip(s, text);
    if (evaluate) check_accountant(s, text);
    dpa_spec_free(s);
    return 1;
}

static int in_domain(const dpa_param_info *p, double v)
{
    if (!isfinite(v)) return 0;
    if (p->lo_open ? !(v > p->lo) : !(v >= p->lo)) return 0;
    if (p->hi_open ? !(v < p->hi) : !(v <= p->hi)) return 0;
    if (p->is_integer && v != floor(v)) return 0;
    return 1;
}

static int try_template(const char *text)
{
    dpa_error err;
    dpa_template *t = dpa_template_from_json(text, &err);
    if (!t) {
        check_error("template_from_json", &err, DPA_EINVAL, DPA_EINVAL, text);
        return 0;
    }
    const dpa_param_info *p = dpa_template_param(t);
    if (!p || p->path[0] != '/' || !p->name[0] || isnan(p->lo) || isnan(p->hi) || p->lo > p->hi) {
        FAILF("template: bad param info for %.300s", text);
        dpa_template_free(t);
        return 1;
    }
    const double vals[] = {p->lo, p->hi, nextafter(p->lo, INFINITY), nextafter(p->hi, -INFINITY),
                           p->lo / 2 + p->hi / 2, 1, 0.5, 2, 3.5, 1e15, 1e-300, 0, -0.0, -1,
                           NAN, INFINITY, -INFINITY, DBL_MAX, 5e-324, 1e5, 1e6, 1000001, 0.75};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        double v = vals[i];
        dpa_spec *s = dpa_template_instantiate(t, v, &err);
        int ok = in_domain(p, v);
        if (s) {
            if (!ok)
                FAILF("instantiate accepted %.17g outside the domain of %s for %.300s", v, p->path, text);
            check_roundtrip(s, text);
            dpa_spec_free(s);
        } else {
            check_error("template_instantiate", &err, DPA_EINVAL, DPA_EINVAL, text);
            if (ok)
                FAILF("instantiate refused %.17g inside the domain of %s ([%g, %g], open %d/%d, integer %d): %s",
                      v, p->path, p->lo, p->hi, p->lo_open, p->hi_open, p->is_integer, err.message);
        }
    }
    dpa_template_free(t);
    return 1;
}

/* ------------------------------------------------------------------ */
/* mutation */

static const char *const seeds[] = {
    "{\"repeat\": {\"count\": 14063, \"event\": {\"poisson\": {\"rate\": 0.0042666667, \"event\": {\"gaussian\": {\"sigma\": 1.1}}}}}, \"neighboring\": \"add_remove\"}",
    "{\"neighboring\": \"replace\", \"repeat\": {\"event\": {\"gaussian\": {\"sigma\": 2}}, \"count\": 10.0}}",
    "{\"compose\": [{\"laplace\": {\"scale\": 2, \"sensitivity\": 1}}, {\"repeat\": {\"count\": 10, \"event\": {\"approx\": {\"epsilon\": 0.1, \"delta\": 1e-8}}}}, {\"sample\": {\"n\": 60000, \"m\": 256, \"event\": {\"discrete_gaussian\": {\"sigma\": 3, \"sensitivity\": 2}}}}, {\"randomized_response\": {\"p\": 0.75}}], \"neighboring\": \"replace\"}",
    "{\"poisson\": {\"rate\": 0.01, \"event\": {\"compose\": [{\"zcdp\": {\"rho\": 0.05}}, {\"gdp\": {\"mu\": 0.5}}]}}}",
    "{\"compose\": [{\"repeat\": {\"count\": 3, \"event\": {\"gaussian\": {\"sigma\": 5}}}}, {\"repeat\": {\"count\": 5, \"event\": {\"gaussian\": {\"sigma\": 8}}}}, {\"repeat\": {\"count\": 20, \"event\": {\"laplace\": {\"scale\": 10}}}}, {\"approx\": {\"epsilon\": 0.1, \"delta\": 1e-8}}]}",
    "{\"discrete_laplace\":{\"scale\":0.5,\"sensitivity\":4}}",
    "{\"discrete_gaussian\":{\"sigma\":1e5,\"sensitivity\":1e6}}",
    "{\"randomized_response\":{\"epsilon\":1}}",
    "{\"pure\":{\"epsilon\":0}}",
    "{\"approx\":{\"epsilon\":0,\"delta\":1}}",
    "{\"gdp\":{\"mu\":1}}",
    "{\"sample\":{\"n\":10,\"m\":10,\"event\":{\"pure\":{\"epsilon\":1}}}}",
    "{\"repeat\":{\"count\":1e15,\"event\":{\"gdp\":{\"mu\":1e-8}}}}",
    "{\"gaussian\":{\"sigma\":1,\"sigma\":2}}",
    "{\"gaussian\":{\"sigma\":1}} x",
};
static const char *const tseeds[] = {
    "{\"repeat\": {\"count\": 14063, \"event\": {\"poisson\": {\"rate\": 0.0042666667, \"event\": {\"gaussian\": {\"sigma\": \"?\"}}}}}}",
    "{\"repeat\": {\"count\": \"?\", \"event\": {\"poisson\": {\"rate\": 0.004, \"event\": {\"gaussian\": {\"sigma\": 1.0}}}}}}",
    "{\"sample\":{\"n\":\"?\",\"m\":7,\"event\":{\"laplace\":{\"scale\":1}}}}",
    "{\"sample\":{\"n\":100,\"m\":\"?\",\"event\":{\"laplace\":{\"scale\":1}}}}",
    "{\"randomized_response\":{\"p\":\"?\"}}",
    "{\"discrete_gaussian\":{\"sigma\":2,\"sensitivity\":\"?\"}}",
    "{\"discrete_laplace\":{\"scale\":\"?\"}}",
    "{\"approx\":{\"epsilon\":1,\"delta\":\"?\"}}",
    "{\"compose\":[{\"gdp\":{\"mu\":\"?\"}},{\"zcdp\":{\"rho\":1}}],\"neighboring\":\"replace\"}",
};
static const char *const tokens[] = {
    "\"gaussian\"", "\"laplace\"", "\"discrete_laplace\"", "\"discrete_gaussian\"", "\"randomized_response\"",
    "\"pure\"", "\"approx\"", "\"zcdp\"", "\"gdp\"", "\"compose\"", "\"repeat\"", "\"poisson\"", "\"sample\"",
    "\"sigma\"", "\"sensitivity\"", "\"scale\"", "\"epsilon\"", "\"delta\"", "\"rho\"", "\"mu\"", "\"count\"",
    "\"rate\"", "\"n\"", "\"m\"", "\"p\"", "\"event\"", "\"neighboring\"", "\"replace\"", "\"?\"", "{", "}", "[",
    "]", ":", ",", "\"", "\\u0000", "\\\"", "null", "true", "[]", "{}", "\xff", "\xc3\xa9", " ", "\n",
};
static const char *const hostile_numbers[] = {
    "0", "-0", "1", "-1", "0.5", "2.5", "1e15", "1e15.0", "1000000000000001", "1e16", "1e308", "-1e308",
    "1.7976931348623157e308", "1e999", "4.9e-324", "2.2250738585072014e-308", "1e-300", "1e300", "1e5",
    "100000.00000000001", "1000000", "1000001", "0.9999999999999999", "1.0000000000000002", "NaN", "Infinity",
    "-Infinity", "0x10", "01", "1.", ".5", "1e", "+1", "1E+2", "18446744073709551616", "9007199254740993",
    "-9223372036854775809", "\"?\"", "\"1\"",
};

static void mutate(sbuf *out, const char *in)
{
    size_t len = strlen(in);
    out->n = 0;
    sb_put(out, in, len);
    int rounds = 1 + (int)rndn(4);
    for (int k = 0; k < rounds; k++) {
        size_t n = out->n, pos = rndn(n + 1);
        switch (rndn(7)) {
        case 0: /* flip a byte */
            if (n) out->p[rndn(n)] ^= (char)(1u << rndn(8));
            break;
        case 1: { /* delete a range */
            size_t l = rndn(16) + 1;
            if (pos + l > n) l = n - pos;
            memmove(out->p + pos, out->p + pos + l, n - pos - l + 1);
            out->n -= l;
            break;
        }
        case 2: case 3: { /* insert a token */
            sbuf t = {0};
            sb_put(&t, out->p + pos, n - pos);
            out->n = pos;
            sb_puts(out, tokens[rndn(sizeof tokens / sizeof *tokens)]);
            sb_put(out, t.p ? t.p : "", t.n);
            free(t.p);
            break;
        }
        case 4: case 5: { /* replace a number by a hostile one */
            size_t start = 0, cnt = 0;
            for (size_t i = 0; i < n; i++)
                if ((out->p[i] >= '0' && out->p[i] <= '9') && (i == 0 || !strchr("0123456789.eE+-", out->p[i - 1]))) cnt++;
            if (!cnt) break;
            size_t which = rndn(cnt);
            for (size_t i = 0; i < n; i++)
                if ((out->p[i] >= '0' && out->p[i] <= '9') && (i == 0 || !strchr("0123456789.eE+-", out->p[i - 1])) && which-- == 0) {
                    start = i;
                    break;
                }
            if (start && out->p[start - 1] == '-') start--;
            size_t end = start;
            while (end < n && strchr("-0123456789.eE+", out->p[end])) end++;
            sbuf t = {0};
            sb_put(&t, out->p + end, n - end);
            out->n = start;
            sb_puts(out, hostile_numbers[rndn(sizeof hostile_numbers / sizeof *hostile_numbers)]);
            sb_put(out, t.p ? t.p : "", t.n);
            free(t.p);
            break;
        }
        default: { /* duplicate a range */
            size_t l = rndn(32) + 1;
            if (pos + l > n) l = n - pos;
            sbuf t = {0};
            sb_put(&t, out->p + pos, n - pos);
            out->n = pos;
            sb_put(out, t.p ? t.p : "", l);
            sb_put(out, t.p ? t.p : "", t.n);
            free(t.p);
            break;
        }
        }
    }
}

static void test_mutated_specs(void **state)
{
    (void)state;
    rng_state = 0x9E3779B97F4A7C15ULL;
    sbuf b = {0};
    int parsed = 0, total = 0;
    const size_t ns = sizeof seeds / sizeof *seeds;
    for (int i = 0; i < 100000; i++) {
        mutate(&b, seeds[rndn(ns)]);
        parsed += try_spec(b.p, 0);
        total++;
        if (rndn(8) == 0) { /* the same text as a template */
            try_template(b.p);
        }
    }
    for (size_t i = 0; i < ns; i++) try_spec(seeds[i], 0);
    print_message("mutated specs: %d inputs, %d parsed\n", total, parsed);
    free(b.p);
    assert_int_equal(failures, 0);
}

static void test_mutated_templates(void **state)
{
    (void)state;
    rng_state = 0xD1B54A32D192ED03ULL;
    sbuf b = {0};
    int parsed = 0, total = 0;
    const size_t nt = sizeof tseeds / sizeof *tseeds;
    for (size_t i = 0; i < nt; i++) assert_true(try_template(tseeds[i]));
    for (int i = 0; i < 20000; i++) {
        mutate(&b, tseeds[rndn(nt)]);
        parsed += try_template(b.p);
        total++;
    }
    print_message("mutated templates: %d inputs, %d parsed\n", total, parsed);
    free(b.p);
    assert_int_equal(failures, 0);
}

/* ------------------------------------------------------------------ */
/* generated trees */

typedef struct gen { sbuf b; int valid; int depth_max; int cheap; int replace; } gen;

/* A value from a pool: in[] are in the domain, out[] are not. */
static void put_number(gen *g, double v)
{
    char tmp[64];
    switch (rndn(5)) {
    case 0: snprintf(tmp, sizeof tmp, "%.17g", v); break;
    case 1: snprintf(tmp, sizeof tmp, "%.17e", v); break;
    case 2:
        if (v == floor(v) && fabs(v) < 1e16) snprintf(tmp, sizeof tmp, "%.1f", v);
        else snprintf(tmp, sizeof tmp, "%.17g", v);
        break;
    case 3: snprintf(tmp, sizeof tmp, "%.17G", v); break;
    default: snprintf(tmp, sizeof tmp, "%.17g", v); break;
    }
    sb_puts(&g->b, tmp);
}

static void param(gen *g, const char *name, const double *in, size_t nin, const double *out, size_t nout,
                  const double *cheap, size_t ncheap)
{
    sb_printf(&g->b, "\"%s\":", name);
    if (g->cheap) {
        put_number(g, cheap[rndn(ncheap)]);
    } else if (nout && rndn(12) == 0) {
        g->valid = 0;
        put_number(g, out[rndn(nout)]);
    } else {
        put_number(g, in[rndn(nin)]);
    }
}
#define N(a) (sizeof(a) / sizeof *(a))
#define PARAM(g, name, in, out, cheap) param(g, name, in, N(in), out, N(out), cheap, N(cheap))

static const double pos_in[] = {1, 0.5, 2, 1.1, 1e-300, 4.9e-324, 1e300, 1.7976931348623157e308, 1e-8, 1e8, 3.75};
static const double pos_out[] = {0, -0.0, -1, -1e-300, -1e300};
static const double pos_cheap[] = {0.5, 1, 2, 4, 10, 0.8};
static const double nonneg_in[] = {0, 1, 0.5, 1e-300, 4.9e-324, 1e300, 1.7976931348623157e308, 50, 709, 710, 745};
static const double nonneg_out[] = {-1, -1e-300, -4.9e-324};
static const double eps_cheap[] = {0, 0.1, 1, 3, 1e-6, 20};
static const double mu_cheap[] = {0, 0.1, 1, 3};
static const double unit_in[] = {0, 1, 0.5, 1e-300, 4.9e-324, 0.9999999999999999, 1e-8};
static const double unit_out[] = {-1e-300, 1.0000000000000002, 2, -1};
static const double delta_cheap[] = {0, 1e-8, 0.01, 0.5, 1};
/* (rate 0 is the no-op: in the domain) */
static const double rate_in[] = {1, 0.5, 1e-300, 4.9e-324, 0.9999999999999999, 1e-8, 0.0042666667, 0, -0.0};
static const double rate_out[] = {1.0000000000000002, -0.5, 2, -4.9e-324};
static const double rate_cheap[] = {1, 0.5, 0.01, 1e-6, 0.0042666667};
static const double p_in[] = {0.5, 0.75, 0.9999999999999999, 0.5000000000000001};
static const double p_out[] = {0.4999999999999999, 1, 0, 1.5};
static const double p_cheap[] = {0.5, 0.75, 0.9};
static const double int_in[] = {1, 2, 10, 1e6, 1e15, 999999999999999, 14063};
static const double int_out[] = {0, -1, 2.5, 1e15 + 2, 1e16, 1.5};
static const double count_cheap[] = {1, 2, 10, 1000, 1e6, 1e15};
static const double sens_in[] = {1, 2, 1e6, 999999};
static const double sens_out[] = {0, 1.5, 1000001, -1};
static const double sens_cheap[] = {1, 2, 3};
static const double dg_in[] = {1, 0.5, 1e5, 1e-300, 4.9e-324, 3, 99999.999999999985};
static const double dg_out[] = {0, 100000.00000000001, 1e6, -1};
static const double dg_cheap[] = {0.5, 1, 3, 10};
static const double dl_scale_cheap[] = {0.5, 1, 3, 10};

static void gen_event(gen *g, int depth);

static void gen_leaf(gen *g)
{
    switch (rndn(g->cheap ? 8 : 9)) {
    case 0:
        sb_puts(&g->b, "{\"gaussian\":{");
        PARAM(g, "sigma", pos_in, pos_out, pos_cheap);
        if (rndn(2)) { sb_puts(&g->b, ","); PARAM(g, "sensitivity", pos_in, pos_out, sens_cheap); }
        break;
    case 1:
        sb_puts(&g->b, "{\"laplace\":{");
        PARAM(g, "scale", pos_in, pos_out, pos_cheap);
        if (rndn(2)) { sb_puts(&g->b, ","); PARAM(g, "sensitivity", pos_in, pos_out, sens_cheap); }
        break;
    case 2:
        sb_puts(&g->b, "{\"discrete_laplace\":{");
        PARAM(g, "scale", pos_in, pos_out, dl_scale_cheap);
        if (rndn(2)) { sb_puts(&g->b, ","); PARAM(g, "sensitivity", sens_in, sens_out, sens_cheap); }
        break;
    case 3:
        sb_puts(&g->b, "{\"discrete_gaussian\":{");
        PARAM(g, "sigma", dg_in, dg_out, dg_cheap);
        if (rndn(2)) { sb_puts(&g->b, ","); PARAM(g, "sensitivity", sens_in, sens_out, sens_cheap); }
        break;
    case 4:
        sb_puts(&g->b, "{\"randomized_response\":{");
        if (rndn(2)) PARAM(g, "epsilon", nonneg_in, nonneg_out, eps_cheap);
        else PARAM(g, "p", p_in, p_out, p_cheap);
        break;
    case 5:
        sb_puts(&g->b, "{\"pure\":{");
        PARAM(g, "epsilon", nonneg_in, nonneg_out, eps_cheap);
        break;
    case 6:
        sb_puts(&g->b, "{\"approx\":{");
        PARAM(g, "epsilon", nonneg_in, nonneg_out, eps_cheap);
        sb_puts(&g->b, ",");
        PARAM(g, "delta", unit_in, unit_out, delta_cheap);
        break;
    case 7:
        sb_puts(&g->b, "{\"gdp\":{");
        PARAM(g, "mu", nonneg_in, nonneg_out, mu_cheap);
        break;
    default:
        sb_puts(&g->b, "{\"zcdp\":{");
        PARAM(g, "rho", nonneg_in, nonneg_out, eps_cheap);
        break;
    }
    sb_puts(&g->b, "}}");
}

static void gen_event(gen *g, int depth)
{
    if (depth >= g->depth_max || rndn(3) == 0) {
        gen_leaf(g);
        return;
    }
    /* cheap specs are also ones the PLD accountant supports: a subsampling
     * wraps a single mechanism, poisson only under add_remove, sample only
     * under replace */
    size_t kind = rndn(4);
    if (g->cheap && kind >= 2) kind = g->replace ? 3 : 2;
    switch (kind) {
    case 0: {
        size_t k = 1 + rndn(g->cheap ? 3 : 4);
        sb_puts(&g->b, "{\"compose\":[");
        for (size_t i = 0; i < k; i++) {
            if (i) sb_puts(&g->b, ",");
            gen_event(g, depth + 1);
        }
        sb_puts(&g->b, "]}");
        return;
    }
    case 1:
        sb_puts(&g->b, "{\"repeat\":{");
        PARAM(g, "count", int_in, int_out, count_cheap);
        break;
    case 2:
        sb_puts(&g->b, "{\"poisson\":{");
        PARAM(g, "rate", rate_in, rate_out, rate_cheap);
        break;
    default: {
        static const double nm_cheap[][2] = {{10, 1}, {10, 10}, {60000, 256}, {1e15, 1}, {3, 2}};
        sb_puts(&g->b, "{\"sample\":{");
        double n, m;
        if (g->cheap) {
            size_t i = rndn(N(nm_cheap));
            n = nm_cheap[i][0];
            m = nm_cheap[i][1];
        } else {
            n = int_in[rndn(N(int_in))];
            m = int_in[rndn(N(int_in))];
            if (m > n) { double t = m; m = n; n = t; }
            if (rndn(12) == 0) { m = n + 1; g->valid = 0; }
        }
        sb_puts(&g->b, "\"n\":");
        put_number(g, n);
        sb_puts(&g->b, ",\"m\":");
        put_number(g, m);
        break;
    }
    }
    sb_puts(&g->b, ",\"event\":");
    if (g->cheap && kind >= 2) gen_leaf(g);
    else gen_event(g, depth + 1);
    sb_puts(&g->b, "}}");
}

static void gen_spec(gen *g, int cheap)
{
    g->b.n = 0;
    g->valid = 1;
    g->cheap = cheap;
    g->depth_max = cheap ? 3 : 6;
    g->replace = (int)rndn(2);
    gen_event(g, 1);
    if (g->replace || rndn(2)) {
        g->b.n--; /* drop the final '}' of the root event object */
        sb_puts(&g->b, g->replace ? ",\"neighboring\":\"replace\"}" : ",\"neighboring\":\"add_remove\"}");
    }
}

static void test_generated_specs(void **state)
{
    (void)state;
    rng_state = 0x2545F4914F6CDD1DULL;
    gen g = {0};
    int valid = 0;
    for (int i = 0; i < 6000; i++) {
        gen_spec(&g, 0);
        int ok = try_spec(g.b.p, 0);
        if (ok != g.valid)
            FAILF("generated spec %s although %s: %.400s", ok ? "parsed" : "refused",
                  g.valid ? "all values are in their domains" : "a value is out of its domain", g.b.p);
        valid += ok;
    }
    print_message("generated specs: 6000, %d valid\n", valid);
    free(g.b.p);
    assert_int_equal(failures, 0);
}

static void test_generated_accountants(void **state)
{
    (void)state;
    rng_state = 0x853C49E6748FEA9BULL;
    gen g = {0};
    evaluations = eval_ok = eval_err = total_count_einval = 0;
    cross_checked = cross_refused = 0;
    for (int i = 0; i < 600; i++) {
        gen_spec(&g, 1);
        if (!try_spec(g.b.p, 1)) FAILF("cheap generated spec refused: %.400s", g.b.p);
    }
    print_message("accountants: %d specs; epsilon queries answered %d, refused %d; "
                  "DPA_EINVAL for a total count above 1e15: %d; phi/rdp cross-checks %d, refusals %d\n",
                  evaluations, eval_ok, eval_err, total_count_einval, cross_checked, cross_refused);
    /* the cross-checks must actually run */
    if (cross_checked < 20) FAILF("only %d phi/rdp cross-checks ran", cross_checked);
    free(g.b.p);
    assert_int_equal(failures, 0);
}

/* Filters on generated queries (restore and replay): cheap generated specs
 * (as above) are requested, three per sequence, from every filter kind but
 * natural-approx (its replay is in tests/test_filter_exact.c), once
 * directly and once by a filter restored from the saved state before each
 * request.  Both must give the same status, decision, message and state
 * (byte for byte); a rejected or refused query must leave the state; no
 * state may hold "-0", "nan" or "inf".  gdp-residue only takes specs
 * without repeat or sampling (a huge repeat builds its law for seconds). */
static void filter_step(dpa_filter *a, const char *cfg, const dpa_spec *q, const char *text)
{
    char why[2048];
    int r = 0;
    if (!replay_step(a, cfg, q, &r, why, sizeof why)) FAILF("%s, %.300s: %s", cfg, text, why);
    if (r < 0 && r != -(int)DPA_EUNSUPPORTED && r != -(int)DPA_EINVAL && r != -(int)DPA_ENOMEM && r != -(int)DPA_ENUMERIC)
        FAILF("%s, %.300s: status %d", cfg, text, -r);
}

static void test_generated_filters(void **state)
{
    (void)state;
    static const char *const cfgs[] = {
        "{\"filter\":\"pure\",\"epsilon\":5}",
        "{\"filter\":\"basic\",\"epsilon\":5,\"delta\":0.01}",
        "{\"filter\":\"rdp\",\"rho\":[2,20],\"order\":[2,32]}",
        "{\"filter\":\"zcdp\",\"rho\":2}",
        "{\"filter\":\"gdp\",\"mu\":3}",
        "{\"filter\":\"gdp-residue\",\"mu\":3}",
        "{\"filter\":\"natural\",\"mu\":3}",
        "{\"filter\":\"natural\",\"delta\":0.01}",
    };
    rng_state = 0x9E3779B97F4A7C15ULL;
    gen g = {0};
    int steps = 0;
    for (int i = 0; i < 120; i++) {
        size_t c = (size_t)i % N(cfgs);
        int residue = strstr(cfgs[c], "residue") != NULL;
        dpa_error err;
        dpa_filter *a = dpa_filter_new_json(cfgs[c], &err);
        if (!a) fail_msg("%s: %s", cfgs[c], err.message);
        char *cfg = dpa_filter_config_json(a);
        for (int k = 0; k < 3; k++) {
            dpa_spec *q = NULL;
            do {
                dpa_spec_free(q);
                gen_spec(&g, 1);
                q = dpa_spec_from_json(g.b.p, &err);
            } while (!q || (residue && (strstr(g.b.p, "repeat") || strstr(g.b.p, "sample") || strstr(g.b.p, "poisson"))));
            filter_step(a, cfg, q, g.b.p);
            dpa_spec_free(q);
            steps++;
        }
        free(cfg);
        dpa_filter_free(a);
    }
    print_message("filters: %d generated requests replayed from saved states\n", steps);
    free(g.b.p);
    assert_int_equal(failures, 0);
}

/* Deep nesting: 256 levels parse, 257 and 100000 are refused (no stack overflow). */
static void test_deep_nesting(void **state)
{
    (void)state;
    const int depths[] = {255, 256, 100000};
    const char *shapes[][3] = {{"{\"repeat\":{\"count\":2,\"event\":", "{\"gdp\":{\"mu\":1}}", "}}"},
                               {"{\"compose\":[", "{\"gdp\":{\"mu\":1}}", "]}"},
                               {"{\"poisson\":{\"rate\":0.5,\"event\":", "{\"gdp\":{\"mu\":1}}", "}}"},
                               {"[", "1", "]"}};
    for (size_t s = 0; s < N(shapes); s++) {
        for (size_t d = 0; d < N(depths); d++) {
            sbuf b = {0};
            for (int i = 0; i < depths[d]; i++) sb_puts(&b, shapes[s][0]);
            sb_puts(&b, shapes[s][1]);
            for (int i = 0; i < depths[d]; i++) sb_puts(&b, shapes[s][2]);
            int ok = try_spec(b.p, 0);
            int expect = s < 3 && depths[d] + 1 <= 256;
            if (ok != expect) FAILF("nesting %d of shape %zu: parse %d, expected %d", depths[d] + 1, s, ok, expect);
            free(b.p);
        }
    }
    assert_int_equal(failures, 0);
}

/* Delta and epsilon queries at extreme arguments on the EXACT accountant (see the header). */
static void test_exact_extreme_eps(void **state)
{
    (void)state;
    const char *specs[] = {"{\"gaussian\":{\"sigma\":1}}", "{\"gdp\":{\"mu\":3}}",
                           "{\"compose\":[{\"gaussian\":{\"sigma\":2}},{\"gdp\":{\"mu\":0.5}}]}",
                           "{\"gdp\":{\"mu\":0}}", "{\"gdp\":{\"mu\":1e-300}}", "{\"gdp\":{\"mu\":1e300}}",
                           "{\"compose\":[{\"pure\":{\"epsilon\":1e300}},{\"randomized_response\":{\"epsilon\":1e-300}}]}",
                           "{\"approx\":{\"epsilon\":0,\"delta\":1}}"};
    const double deltas[] = {4.9e-324, 1e-300, 1e-17, 1e-5, 0.5, 0.9999999999999999};
    const double eps[] = {-DBL_MAX, -1e300, -1e20, -1e10, -3e9, -1e9, -1e7, -746, 746, 1e10, 1e300, DBL_MAX};
    for (size_t s = 0; s < N(specs); s++) {
        dpa_error err;
        dpa_spec *sp = dpa_spec_from_json(specs[s], &err);
        assert_non_null(sp);
        dpa_accountant *a = dpa_accountant_new(sp, NULL, &err);
        dpa_spec_free(sp);
        if (!a) {
            FAILF("accountant_new refused %s: %s", specs[s], err.message);
            continue;
        }
        for (size_t i = 0; i < N(eps); i++) {
            dpa_result r;
            char what[64];
            snprintf(what, sizeof what, "delta(%g)", eps[i]);
            if (dpa_accountant_delta(a, eps[i], &r, &err) != DPA_OK) {
                check_error(what, &err, DPA_ENUMERIC, DPA_ENUMERIC, specs[s]);
                continue;
            }
            check_result_common(what, &r, specs[s]);
            if (!isfinite(r.upper) || !isfinite(r.lower) || r.upper > 1)
                FAILF("%s: bounds [%g, %g] not finite in [0, 1] for %s", what, r.lower, r.upper, specs[s]);
        }
        for (size_t i = 0; i < N(deltas); i++) {
            dpa_result r;
            char what[64];
            snprintf(what, sizeof what, "epsilon(%g)", deltas[i]);
            if (dpa_accountant_epsilon(a, deltas[i], &r, &err) != DPA_OK) {
                check_error(what, &err, DPA_ENUMERIC, DPA_ENUMERIC, specs[s]);
                continue;
            }
            check_result_common(what, &r, specs[s]);
            if (isinf(r.upper) && isfinite(r.lower) && r.accuracy_met)
                FAILF("%s: upper inf, lower %g finite with accuracy_met = 1 for %s", what, r.lower, specs[s]);
        }
        dpa_accountant_free(a);
    }
    assert_int_equal(failures, 0);
}

/* Less noise is never more private: for each noise-parametrized leaf, going
 * down a ladder of noise values (to subnormals), a certified upper bound at
 * the smaller noise must be >= the certified lower bound at the larger one
 * (eps at delta 1e-5 and delta at eps 1).  A valid spec must not be refused
 * with DPA_EINVAL; DPA_ENUMERIC / DPA_ENOMEM with a message are allowed.
 * See the header. */
static void test_tiny_noise(void **state)
{
    (void)state;
    static const char *const fmts[] = {
        "{\"gaussian\":{\"sigma\":%.17g,\"sensitivity\":1}}",
        "{\"gaussian\":{\"sigma\":%.17g,\"sensitivity\":1e300}}",
        "{\"laplace\":{\"scale\":%.17g,\"sensitivity\":1}}",
        "{\"discrete_laplace\":{\"scale\":%.17g,\"sensitivity\":1}}",
        "{\"discrete_laplace\":{\"scale\":%.17g,\"sensitivity\":1000000}}",
        "{\"discrete_gaussian\":{\"sigma\":%.17g,\"sensitivity\":1}}",
        "{\"discrete_gaussian\":{\"sigma\":%.17g,\"sensitivity\":1000000}}",
        "{\"poisson\":{\"rate\":0.5,\"event\":{\"discrete_gaussian\":{\"sigma\":%.17g}}}}",
    };
    /* decreasing noise */
    static const double noise[] = {1, 0.3, 0.1, 1e-3, 1e-20, 1e-100, 1e-150, 1e-154, 1e-160, 1e-200, 1e-300, 4.9e-324};
    dpa_options o;
    dpa_options_init(&o);
    o.accuracy = 1e-2;
    o.max_grid = (size_t)1 << 16;
    for (size_t f = 0; f < N(fmts); f++) {
        double prev_eps_lo = 0, prev_delta_lo = 0;
        for (size_t i = 0; i < N(noise); i++) {
            char text[256];
            dpa_error err;
            snprintf(text, sizeof text, fmts[f], noise[i]);
            dpa_spec *sp = dpa_spec_from_json(text, &err);
            if (!sp) { FAILF("refused valid spec %s: %s", text, err.message); continue; }
            dpa_accountant *a = dpa_accountant_new(sp, &o, &err);
            dpa_spec_free(sp);
            if (!a) {
                check_error("accountant_new", &err, DPA_ENUMERIC, DPA_ENOMEM, text);
                continue;
            }
            dpa_result r;
            if (dpa_accountant_epsilon(a, 1e-5, &r, &err) == DPA_OK) {
                check_result_common("epsilon(1e-5)", &r, text);
                if (r.upper < prev_eps_lo)
                    FAILF("epsilon(1e-5) upper %.17g below the lower bound %.17g at more noise: %s", r.upper,
                          prev_eps_lo, text);
                prev_eps_lo = fmax(prev_eps_lo, r.lower);
            } else {
                check_error("epsilon", &err, DPA_ENUMERIC, DPA_ENOMEM, text);
            }
            if (dpa_accountant_delta(a, 1.0, &r, &err) == DPA_OK) {
                check_result_common("delta(1)", &r, text);
                if (r.upper < prev_delta_lo)
                    FAILF("delta(1) upper %.17g below the lower bound %.17g at more noise: %s", r.upper,
                          prev_delta_lo, text);
                prev_delta_lo = fmax(prev_delta_lo, r.lower);
            } else {
                check_error("delta", &err, DPA_ENUMERIC, DPA_ENOMEM, text);
            }
            dpa_accountant_free(a);
        }
    }
    assert_int_equal(failures, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_mutated_specs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mutated_templates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_generated_specs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_generated_accountants, setup, teardown),
        cmocka_unit_test_setup_teardown(test_generated_filters, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deep_nesting, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exact_extreme_eps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tiny_noise, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
