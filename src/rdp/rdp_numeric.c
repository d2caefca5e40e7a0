/* Numeric helpers of the Rényi module: outward rounding and Gaussian
 * interval probabilities in log space with an error bound.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <math.h>
#include "rdp/rdp.h"
#include "num/num.h"

#define U DPA_UNIT_ROUNDOFF

/* Absolute error of dpa_log_ndtr(x) as a multiple of u (|log Phi| + 1):
 * num.h states a relative accuracy of ~1e-15 (about 9u) for log Phi; 32u
 * leaves more than a factor 3 of headroom, and the "+ 1" covers values of
 * log Phi near 0, where log1mexp-type cancellation gives an absolute rather
 * than a relative error. */
#define RDP_LOGNDTR_ERR 32.0

double dpa_rdp_up(double x, double k)
{
    if (!isfinite(x) || x == 0) return x;
    /* x + k u |x|: the addition rounds by at most u |x| (1 + k u), so the
     * result is >= x (1 + (k - 2) u) for k >= 2 */
    return x + k * U * fabs(x);
}

/* Absolute error of a log tail value lx = log Phi(x) or log Phibar(x):
 * the function's own (RDP_LOGNDTR_ERR) plus the argument's error times
 * |d log Phi/dx| <= |x| + 1 (Mills ratio).  0 for an exact -inf (x infinite). */
static double log_tail_err(double lx, double x, double arg_err)
{
    if (!isfinite(lx) || !isfinite(x)) return 0.0;
    return RDP_LOGNDTR_ERR * U * (fabs(lx) + 1) + (fabs(x) + 1) * arg_err;
}

double dpa_rdp_log_gauss_interval(double a, double b, double arg_err, double *relerr)
{
    double la, lb, l, e;
    if (!(a < b)) {
        *relerr = 0;
        return -INFINITY;
    }
    if (a == -INFINITY || b == INFINITY) {
        /* one end infinite: a single tail, log Phi(b) or log Phibar(a),
         * with no subtraction (dpa_log_ndtr is accurate on the whole line,
         * num/normal.c); the whole line has probability 1 exactly */
        if (a == -INFINITY && b == INFINITY) {
            *relerr = 0;
            return 0.0;
        }
        double x = a == -INFINITY ? b : -a;
        if (x <= 0) {
            l = dpa_log_ndtr(x);
            e = log_tail_err(l, x, arg_err);
        } else {
            /* a value near 1: as 1 - Phibar(x), so that the error scales
             * with Phibar(x) (log1mexp: u |l| plus twice exp's u Phibar) */
            double lc = dpa_log_ndtr(-x), pc = exp(lc);
            l = dpa_log1mexp(lc);
            e = 2.0 * exp(lc - l) * log_tail_err(lc, -x, arg_err) + 8 * U * (fabs(l) + pc);
        }
        if (l > -INFINITY && e < 1e-2) {
            /* |log P - l| <= e, so |P - e^l| <= (e^e - 1) e^l <= 1.01 e e^l */
            *relerr = 1.01 * e;
            return l;
        }
        /* an underflowed tail or a large argument error: the general
         * branches below */
    }
    if (b <= 0) {
        /* both on the lower side: Phi(b) - Phi(a) */
        lb = dpa_log_ndtr(b);
        la = dpa_log_ndtr(a);
        l = dpa_log_sub_exp_clamped(lb, la);
    } else if (a >= 0) {
        /* both on the upper side: Phibar(a) - Phibar(b) */
        la = dpa_log_ndtr_c(a);
        lb = dpa_log_ndtr_c(b);
        l = dpa_log_sub_exp_clamped(la, lb);
    } else {
        /* a < 0 < b: 1 - Phi(a) - Phibar(b); the subtracted mass is <= 1
         * (each part < 1/2), no cancellation beyond log1mexp's */
        la = dpa_log_ndtr(a);
        lb = dpa_log_ndtr_c(b);
        l = dpa_log1mexp(dpa_log_add_exp(la, lb));
        /* the log is off by the logs' errors times the ratio
         * (Phi(a) + Phibar(b)) / value, as below */
        double s = dpa_log_add_exp(la, lb);
        e = 2.0 * exp(s - l) * (log_tail_err(la, a, arg_err) + log_tail_err(lb, b, arg_err)) + 8 * U;
        if (!(e < 1e-2)) {
            *relerr = 1.0;
            return 0.0; /* the probability is in [0, 1]: |true - 1| <= 1 */
        }
        *relerr = 1.01 * e;
        return l;
    }
    if (l == -INFINITY) {
        /* the difference rounded to 0 (or the interval is beyond the
         * double range): bound it by the larger of the two masses */
        *relerr = 1.0;
        return fmax(la, lb);
    }
    /* log(e^x - e^y) with x, y each off by ex, ey: relative error of the
     * difference <= (e^x ex + e^y ey)/(e^x - e^y) */
    double big = fmax(la, lb);
    double ex = log_tail_err(la, a, arg_err), ey = log_tail_err(lb, b, arg_err);
    e = 2.0 * exp(big - l) * (ex + ey) + 8 * U;
    if (!(e < 1e-2)) {
        /* cancellation too strong for a first-order bound: the difference
         * lies in [0, e^big] */
        *relerr = 1.0;
        return big;
    }
    /* first-order bound e on the log error; the relative error of the
     * value is e^e - 1 <= 1.01 e for e < 1e-2 */
    *relerr = 1.01 * e;
    return l;
}

#include <stdlib.h>
#include <string.h>

/* Brent's minimization without derivatives (R. P. Brent, "Algorithms for
 * Minimization without Derivatives", 1973, ch. 5, procedure localmin):
 * golden-section steps, replaced by parabolic interpolation through the
 * three best points whenever that step is acceptable.  A parabolic step is
 * only taken when the three values are finite (f may return +inf). */
int dpa_rdp_brent(dpa_rdp_minfn f, void *ctx, double a, double b, double x, double fx, double rtol,
                  double atol, int maxit, double *xmin, double *fmin)
{
    const double cg = 0.3819660112501051; /* (3 - sqrt 5)/2 */
    double v = x, w = x, fv = fx, fw = fx, d = 0, e = 0;
    for (int it = 0; it < maxit; it++) {
        double xm = 0.5 * (a + b), tol1 = rtol * fabs(x) + atol, tol2 = 2 * tol1;
        if (fabs(x - xm) <= tol2 - 0.5 * (b - a)) break;
        int golden = 1;
        if (fabs(e) > tol1 && isfinite(fx) && isfinite(fv) && isfinite(fw)) {
            double r = (x - w) * (fx - fv), q = (x - v) * (fx - fw), p = (x - v) * q - (x - w) * r;
            q = 2 * (q - r);
            if (q > 0) p = -p;
            else q = -q;
            double etemp = e;
            if (!(fabs(p) >= fabs(0.5 * q * etemp) || p <= q * (a - x) || p >= q * (b - x))) {
                e = d;
                d = p / q;
                double u = x + d;
                if (u - a < tol2 || b - u < tol2) d = xm >= x ? tol1 : -tol1;
                golden = 0;
            }
        }
        if (golden) {
            e = x >= xm ? a - x : b - x;
            d = cg * e;
        }
        double u = fabs(d) >= tol1 ? x + d : x + (d >= 0 ? tol1 : -tol1), fu;
        int st = f(u, ctx, &fu);
        if (st) return st;
        if (fu <= fx) {
            if (u >= x) a = x;
            else b = x;
            v = w;
            fv = fw;
            w = x;
            fw = fx;
            x = u;
            fx = fu;
        } else {
            if (u < x) a = u;
            else b = u;
            if (fu <= fw || w == x) {
                v = w;
                fv = fw;
                w = u;
                fw = fu;
            } else if (fu <= fv || v == x || v == w) {
                v = u;
                fv = fu;
            }
        }
    }
    *xmin = x;
    *fmin = fx;
    return 0;
}

int dpa_rdp_bracket(dpa_rdp_minfn f, void *ctx, double lo, double hi, double x0, double step, double *a,
                    double *x, double *c, double *fx)
{
    double f0, fr = INFINITY, fl = INFINITY;
    int st = f(x0, ctx, &f0);
    if (st) return st;
    double xr = fmin(x0 + step, hi), xl = fmax(x0 - step, lo);
    if (xr > x0 && (st = f(xr, ctx, &fr))) return st;
    int dir = 0; /* +1: downhill to the right, -1: to the left */
    if (fr < f0) {
        dir = 1;
    } else {
        if (xl < x0 && (st = f(xl, ctx, &fl))) return st;
        if (fl < f0) dir = -1;
    }
    if (!dir) {
        *a = xl;
        *x = x0;
        *c = xr;
        *fx = f0;
        return 0;
    }
    /* walk downhill with doubling steps: (xa, xb) the last two points,
     * f(xb) < f(xa) */
    double xa = x0, xb = dir > 0 ? xr : xl, fb = dir > 0 ? fr : fl;
    for (;;) {
        double end = dir > 0 ? hi : lo;
        if (xb == end) break;
        double xn = xb + 2 * (xb - xa), fn;
        xn = dir > 0 ? fmin(xn, hi) : fmax(xn, lo);
        if ((st = f(xn, ctx, &fn))) return st;
        if (!(fn < fb)) {
            *a = dir > 0 ? xa : xn;
            *c = dir > 0 ? xn : xa;
            *x = xb;
            *fx = fb;
            return 0;
        }
        xa = xb;
        xb = xn;
        fb = fn;
    }
    /* downhill up to the end of the range: the minimum is at or next to it */
    *a = dir > 0 ? xa : xb;
    *c = dir > 0 ? xb : xa;
    *x = xb;
    *fx = fb;
    return 0;
}

void dpa_rdp_acc_init(dpa_rdp_acc *a)
{
    a->l = a->lbuf;
    a->r = a->rbuf;
    a->s = a->sbuf;
    a->n = 0;
    a->cap = DPA_RDP_ACC_INLINE;
    a->inf = a->failed = 0;
}

void dpa_rdp_acc_free(dpa_rdp_acc *a)
{
    if (a->l != a->lbuf) free(a->l);
    if (a->r != a->rbuf) free(a->r);
    if (a->s != a->sbuf) free(a->s);
    dpa_rdp_acc_init(a);
}

/* p grown to nc elements of size sz, copying n from an inline buffer */
static void *grow(void *p, const void *inl, size_t n, size_t nc, size_t sz)
{
    if (p != inl) return realloc(p, nc * sz);
    void *q = malloc(nc * sz);
    if (q) memcpy(q, p, n * sz);
    return q;
}

void dpa_rdp_acc_add(dpa_rdp_acc *a, double l, int sign, double r)
{
    if (l == -INFINITY || a->inf || a->failed) return;
    if (l == INFINITY) {
        a->inf = 1;
        return;
    }
    if (a->n == a->cap) {
        size_t nc = 2 * a->cap;
        double *nl = grow(a->l, a->lbuf, a->n, nc, sizeof *nl);
        if (nl) a->l = nl;
        double *nr = grow(a->r, a->rbuf, a->n, nc, sizeof *nr);
        if (nr) a->r = nr;
        signed char *ns = grow(a->s, a->sbuf, a->n, nc, sizeof *ns);
        if (ns) a->s = ns;
        if (!nl || !nr || !ns) {
            a->failed = 1;
            return;
        }
        a->cap = nc;
    }
    a->l[a->n] = l;
    a->r[a->n] = r;
    a->s[a->n] = (signed char)(sign < 0 ? -1 : 1);
    a->n++;
}

double dpa_rdp_acc_log_upper(const dpa_rdp_acc *a, double log_extra)
{
    if (a->failed) return NAN;
    if (a->inf || log_extra == INFINITY) return INFINITY;
    if (a->n == 1 && log_extra == -INFINITY && a->s[0] > 0) {
        /* one positive term: its own error only (no summation); keeps tiny
         * log values (log E near 0) relatively accurate */
        double l = a->l[0], r = log1p(a->r[0]);
        return l + r + 2 * U * (fabs(l) + r);
    }
    double mx = log_extra;
    for (size_t i = 0; i < a->n; i++) mx = fmax(mx, a->l[i]);
    if (mx == -INFINITY) return -INFINITY;
    /* Neumaier's compensated sum of the terms scaled by e^{-mx}: error at
     * most (2u + O(n u^2)) sum |t| (Higham 2002, §4.3, eq 4.8); we allow
     * (4u + 32 n u^2).  Each scaled term exp(l - mx) is off by u (|l - mx| + 2)
     * relative (the subtraction and exp's own rounding), added with the
     * terms' own errors r. */
    double sum = 0, comp = 0, abs = 0, err = 0;
    for (size_t i = 0; i < a->n; i++) {
        double v = exp(a->l[i] - mx), t = a->s[i] * v;
        double nsum = sum + t;
        if (fabs(sum) >= fabs(t)) comp += (sum - nsum) + t;
        else comp += (t - nsum) + sum;
        sum = nsum;
        abs += v;
        /* a term of weight 0 (v underflowed) contributes no error, whatever
         * its relative error bound (inf for far-off atoms: 0 * inf = NaN) */
        if (v > 0) err += v * (a->r[i] + U * (fabs(a->l[i] - mx) + 2));
    }
    double ex = log_extra == -INFINITY ? 0.0 : exp(log_extra - mx);
    abs += ex;
    double n = (double)a->n + 1;
    double up = (sum + comp) + ex + err * (1 + 4 * n * U) + (4 * U + 32 * n * U * U) * abs + U * ex * 4;
    if (isnan(up)) return INFINITY; /* no bound: never a NaN read as log 0 */
    if (!(up > 0)) return -INFINITY;
    /* log rounds by u |result|, the addition of mx by u |mx| */
    return mx + log(up) + 2 * U * (fabs(mx) + fabs(log(up)) + 1);
}
