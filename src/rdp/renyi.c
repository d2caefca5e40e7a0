/* The Rényi divergence of a composition at one real or complex order
 * (include/dpacct/renyi.h; docs/rdp.md, "The Rényi divergence of a composition").
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Notation (docs/rdp.md §1).  A leaf's remove pair p = (P, Q), W = log dP/dQ,
 * E_p(theta) = E_P[e^{theta W}] = int P^{1+theta} Q^{-theta}  (LT Def 2.2 / eq 8
 * with q = 1 + theta).  At the order A (theta = A - 1):
 *   remove:  log E = sum_i k_i log E_{p_i}(theta),         D_A = log E / theta
 *   add:     log E = sum_i k_i log E_{p_i}(-1 - theta),    (E_rev(z) = E(-1-z), LT eq 7)
 * so every per-pair computation (renyi_pair.c) is "log E_p at theta'" for the remove
 * pair, theta' = theta (remove) or -1 - theta (add); both directions map
 * orders A in (0, 1) to theta' in (-1, 0).
 *
 * Real orders: per leaf a certified interval of its count-weighted share of
 * D_A and a value (exact closed forms, the RDP module's certified upper
 * bounds, or the phi module's quadrature); shares add.  Complex orders: per
 * leaf log E_p(z) on the documented branch (renyi.h): closed form for the
 * Gaussian, otherwise the phi module's log M(r + it) = log M(r) + i t m(r) +
 * psi(t) with psi's branch followed along t (track_branch,
 * renyi_complex.c).
 *
 * This file holds the order parser and the entry point dpa_renyi; the real
 * orders are evaluated in renyi_real.c, the complex ones in renyi_complex.c,
 * both from the per-pair bounds of renyi_pair.c (renyi_internal.h).
 *
 * Nothing here keeps global mutable state.
 */
#include <complex.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "dpacct/renyi.h"
#include "model/leaves.h"
#include "event/event_internal.h"
#include "rdp/renyi_internal.h"

/* C11's CMPLX is missing from some toolchains (clang with older glibc) */
#ifndef CMPLX
#define CMPLX(x, y) __builtin_complex((double)(x), (double)(y))
#endif

/* ------------------------------------------------------------------ parsing */

/* Length of a decimal number at s (digits with an optional point, at least
 * one digit, optional exponent with at least one digit); 0 if there is none
 * or it is malformed (an exponent without digits). */
static size_t scan_number(const char *s)
{
    size_t i = 0, nd = 0;
    while (isdigit((unsigned char)s[i])) i++, nd++;
    if (s[i] == '.') {
        i++;
        while (isdigit((unsigned char)s[i])) i++, nd++;
    }
    if (nd == 0) return 0;
    if (s[i] == 'e' || s[i] == 'E') {
        size_t j = i + 1;
        if (s[j] == '+' || s[j] == '-') j++;
        if (!isdigit((unsigned char)s[j])) return 0;
        while (isdigit((unsigned char)s[j])) j++;
        i = j;
    }
    return i;
}

/* strtod of the n characters at s, which scan_number accepted */
static int to_double(const char *s, size_t n, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end != s + n) return -1;
    if (!isfinite(v)) return -1; /* overflow */
    *out = v;
    return 0;
}

dpa_status dpa_renyi_parse_order(const char *s, double *re, double *im, dpa_error *err)
{
    if (!s || !re || !im) return dpa_error_set(err, DPA_EINVAL, "renyi order: NULL argument");
    const char *bad = "renyi order \"%.64s\": expected a number such as 2, 0.5, 1e3 or a complex order such as "
                      "1.5+2i (no spaces)";
    if (!*s) return dpa_error_set(err, DPA_EINVAL, "renyi order: empty (expected a number such as 2 or 1.5+2i)");
    size_t i = 0;
    double sg = 1, r = 0, m = 0;
    if (s[0] == '+' || s[0] == '-') {
        sg = s[0] == '-' ? -1 : 1;
        i = 1;
    }
    size_t n1 = scan_number(s + i);
    if (n1 == 0) {
        if (s[i] == 'i' && s[i + 1] == '\0') /* "i", "-i" */
            return dpa_error_set(err, DPA_EINVAL,
                                 "renyi order \"%.64s\": the real part must be > 0 (got 0): D_A is defined for "
                                 "Re A > 0 only",
                                 s);
        return dpa_error_set(err, DPA_EINVAL, bad, s);
    }
    double v1;
    if (to_double(s + i, n1, &v1)) return dpa_error_set(err, DPA_EINVAL, "renyi order \"%.64s\": out of range", s);
    const char *rest = s + i + n1;
    if (*rest == '\0') {
        r = sg * v1;
    } else if (rest[0] == 'i' && rest[1] == '\0') {
        /* pure imaginary: Re A = 0 */
        return dpa_error_set(err, DPA_EINVAL,
                             "renyi order \"%.64s\": the real part must be > 0 (got 0): D_A is defined for "
                             "Re A > 0 only",
                             s);
    } else if (rest[0] == '+' || rest[0] == '-') {
        double sg2 = rest[0] == '-' ? -1 : 1;
        const char *t = rest + 1;
        size_t n2 = scan_number(t);
        if (t[n2] != 'i' || t[n2 + 1] != '\0') return dpa_error_set(err, DPA_EINVAL, bad, s);
        double v2 = 1; /* "1.5+i" */
        if (n2 && to_double(t, n2, &v2))
            return dpa_error_set(err, DPA_EINVAL, "renyi order \"%.64s\": out of range", s);
        r = sg * v1;
        m = sg2 * v2;
    } else {
        return dpa_error_set(err, DPA_EINVAL, bad, s);
    }
    if (!(r > 0))
        return dpa_error_set(err, DPA_EINVAL,
                             "renyi order \"%.64s\": the real part must be > 0 (got %g): D_A is defined for "
                             "Re A > 0 only",
                             s, r);
    *re = r;
    *im = m;
    return DPA_OK;
}

/* ------------------------------------------------------------------ entry point */

dpa_status dpa_renyi(const dpa_spec *spec, double re, double im, dpa_renyi_result *out, dpa_error *err)
{
    if (!spec || !out) return dpa_error_set(err, DPA_EINVAL, "renyi: NULL argument");
    if (!(re > 0 && isfinite(re)) || !isfinite(im))
        return dpa_error_set(err, DPA_EINVAL, "renyi: the order must have a finite real part > 0, got %g%+gi", re, im);
    memset(out, 0, sizeof *out);
    out->order_re = re;
    out->order_im = im;
    dpa_leafset L;
    dpa_status st = dpa_leaves_build(spec, &L, err);
    if (st) return st;
    if (L.ra_path[0]) {
        st = dpa_error_set(err, DPA_EUNSUPPORTED,
                           "renyi: %s: %s has no Renyi divergence bound here (only the pld method "
                           "accounts it)", L.ra_path,
                           strstr(L.ra_path, "/random_allocation") ? "random allocation"
                                                                   : "Poisson subsampling under replace-one neighbours");
        dpa_leaves_free(&L);
        return st;
    }
    for (size_t i = 0; i < L.n && im != 0; i++) {
        /* real orders: the leaf's RDP bound (renyi_real.c) */
        if (L.v[i].rdp_only) {
            st = dpa_error_set(err, DPA_EUNSUPPORTED,
                               "renyi: %s: a %s step has a bound on Renyi divergences, not a dominating pair: the "
                               "composition's divergence is not a value (only the rdp method accounts it)",
                               L.zcdp_path, dpa_ev_kind_name((dpa_event_kind)L.v[i].rdp_only));
            dpa_leaves_free(&L);
            return st;
        }
    }
    out->symmetric = !L.asymmetric;
    for (int dir = 0; dir < 2 && !st; dir++) {
        dpa_renyi_value *v = dir ? &out->add : &out->remove;
        if (dir && out->symmetric) {
            *v = out->remove;
            break;
        }
        st = im == 0 ? dpa_renyi_eval_real(&L, re, dir, v, err)
                      : dpa_renyi_eval_complex(&L, CMPLX(re, im), dir, v, err);
    }
    dpa_leaves_free(&L);
    if (st) return st;
    /* upper bounds within DPA_RENYI_TIGHT of each other are "both": the
     * difference is below what the bounds certify */
    out->binding = 0;
    double ur = out->remove.upper, ua = out->add.upper;
    if (im == 0 && !out->symmetric && !(ur == ua) && fabs(ur - ua) > DPA_RENYI_TIGHT * fmax(ur, ua))
        out->binding = ur > ua ? 1 : 2;
    return DPA_OK;
}
