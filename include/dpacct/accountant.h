/* dpacct — accountants: evaluate a spec into certified privacy bounds.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * An accountant is built once per spec and answered many queries.  Every
 * query returns an interval [lower, upper] that is certified: the true value
 * of the privacy parameter for the spec's dominating pairs lies in it, with
 * discretization, truncation and floating-point round-off pushed to the safe
 * side (see docs/guarantees.md).  Users may claim `upper`; `upper - lower`
 * says how much is left on the table.
 *
 * Methods (one interface, src/model/method.h; docs/architecture.md):
 *   DPA_METHOD_EXACT  closed forms: compositions of Gaussian and GDP leaves
 *                     (mu = sqrt(sum mu_i^2)), or of pure, randomized_response
 *                     and approx leaves (LT Thm 4.6 lattice sum), also with
 *                     Poisson-subsampled pure/randomized_response leaves
 *                     (two-point pairs, both directions).  Interval width
 *                     is evaluation round-off.
 *   DPA_METHOD_PLD    privacy loss distributions on a uniform grid, pessimistic
 *                     (connect-the-dots) and optimistic discretizations,
 *                     composed with FFTW.  Any tree of the supported leaves.
 *   DPA_METHOD_PHI    the characteristic-function accountant (CF Algorithm 1,
 *                     docs/phi.md): composition in O(1) per leaf, inversion by
 *                     Gil-Pelaez / Bromwich quadrature.  Its bracket rests on
 *                     quadrature error ESTIMATES (node doubling), not proofs:
 *                     results carry certified = 0 (and a note when the method
 *                     could not even estimate).  Refuses subsampled
 *                     compositions, sampling without replacement and Laplace
 *                     without a Gaussian factor (with the reason).
 *   DPA_METHOD_RDP    Renyi DP over a grid of orders (docs/rdp.md), converted
 *                     to (eps, delta) (dpa_options.rdp_conversion): a
 *                     certified UPPER bound only (lower = the trivial bound),
 *                     looser than the tight methods.  The only method that
 *                     takes zcdp leaves.
 *   DPA_METHOD_GDP    the central-limit approximation (GDP §3.2, docs/clt.md):
 *                     the composition as mu-GDP, mu from the moments of the
 *                     privacy loss (kl, kappa2).  NOT a bound: it can
 *                     under-state the loss (it does for DP-SGD); results
 *                     carry certified = 0 and a note.  Compositions of
 *                     gaussian, gdp, pure, randomized_response, approx and
 *                     laplace leaves and of subsampled gaussian/gdp leaves.
 *   DPA_METHOD_CLT    the Berry-Esseen envelope of that approximation (GDP
 *                     eq 10, both directions of add/remove): certified
 *                     bounds, but loose (every upper delta is at least about
 *                     gamma = 0.56 kbar3 / sd^3); same leaves as GDP.
 *   DPA_METHOD_AUTO   the tightest method that applies: EXACT, else PLD, else
 *                     (zcdp leaves) RDP; dpa_accountant_method says which.
 *                     AUTO never picks PHI, GDP or CLT.
 * A method that cannot take a spec fails with DPA_EUNSUPPORTED, saying why
 * and which method can.
 *
 * Thread safety: an accountant is not safe for concurrent queries; distinct
 * accountants may be used from distinct threads.  FFTW's planner is
 * process-global and not thread safe: dpacct serializes its own use of it
 * (planning, and the plan cache's wisdom import and export) under one
 * process-wide lock, so its accountants need nothing more; if other code in
 * the process plans FFTW transforms at the same time, the application must
 * call fftw_make_planner_thread_safe() once (that does not cover wisdom
 * import and export, which the plan cache of fft_cache_dir uses: do not
 * import or export FFTW wisdom elsewhere while accountants with a cache
 * run).  GSL's
 * error handler is switched off around each GSL call and then restored (the
 * caller's handler is never left changed), and that save/restore is itself
 * process-global: concurrent queries should be serialized, or the
 * application should switch GSL's handler off once itself.
 */
#ifndef DPACCT_ACCOUNTANT_H
#define DPACCT_ACCOUNTANT_H

#include <stddef.h>
#include "event.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dpa_method {
    DPA_METHOD_AUTO = 0,
    DPA_METHOD_PLD = 1,
    DPA_METHOD_EXACT = 2,
    DPA_METHOD_PHI = 3,
    DPA_METHOD_RDP = 4,
    DPA_METHOD_GDP = 5,
    DPA_METHOD_CLT = 6
} dpa_method;

/* Number of dpa_method values (AUTO included): they are 0 .. DPA_METHOD_COUNT - 1. */
#define DPA_METHOD_COUNT 7

/* "auto", "pld", "exact", "phi", "rdp", "gdp", "clt"; NULL for an unknown value. */
const char *dpa_method_name(dpa_method m);
/* Parse a method name; DPA_EINVAL for an unknown name. */
dpa_status dpa_method_parse(const char *name, dpa_method *out, dpa_error *err);

/* How the rdp method converts Renyi DP to (eps, delta) (docs/rdp.md §4). */
typedef enum dpa_rdp_conv {
    DPA_CONV_OPTIMAL = 0,   /* the tight single-order conversion (CF Appendix F route) */
    DPA_CONV_IMPROVED = 1,  /* Balle et al. 2020 Thm 21 / Canonne-Kamath-Steinke 2020 */
    DPA_CONV_CLASSICAL = 2  /* Mironov 2017 Prop 3: eps = r + log(1/delta)/(alpha-1) */
} dpa_rdp_conv;

/* "optimal", "improved", "classical"; NULL for an unknown value. */
const char *dpa_rdp_conv_name(dpa_rdp_conv c);
/* Parse a conversion name; DPA_EINVAL for an unknown name. */
dpa_status dpa_rdp_conv_parse(const char *name, dpa_rdp_conv *out, dpa_error *err);

typedef struct dpa_options {
    dpa_method method;   /* default DPA_METHOD_AUTO */
    /* Requested accuracy a (default 1e-4).  PLD refines its grid until
     *   eps queries:   upper - lower <= a * max(1, upper)
     *   delta queries: upper - lower <= a * upper + delta_abs
     * It stops early, with accuracy_met = 0 in the result (the bounds are
     * still certified), when the grid limit or the smallest step is reached,
     * after 6 refinements, or when refining stops shrinking the gap because
     * the floating-point and truncation allowances dominate it (deltas within
     * ~1e-11 of the composition's +inf mass, or below ~1e-12).
     * Domain: [1e-8, 1]. */
    double accuracy;
    /* Absolute part of the delta target above (default 1e-14).  Raising it
     * (the tradeoff curves of the command line use 1e-9: a curve value moves
     * by at most the error of the delta it comes from) spares the fine grids
     * that relative accuracy at tiny deltas needs.  Domain: [1e-14, 1e-2]. */
    double delta_abs;
    /* Fixed PLD grid step (loss units); 0 (default) chooses it automatically
     * from `accuracy`. Domain: 0 or [1e-7, 1]. */
    double grid_step;
    /* Largest FFT length (and per-mechanism grid) the PLD method may use
     * (default 1<<22, i.e. 4 Mi points). Working memory grows by about 100
     * bytes per point of the composed grid. Domain: [1<<10, 1<<26]. */
    size_t max_grid;
    /* Threads the PLD method may use for the independent compositions of a
     * build (both directions, upper and lower): 0 (default) = the number of
     * online processors, at most 4; 1 = the calling thread only.  Results
     * do not depend on it; values above 4 act as 4.  Domain: [0, 64]. */
    int threads;
    /* rdp method: RDP -> (eps, delta) conversion (default DPA_CONV_OPTIMAL). */
    dpa_rdp_conv rdp_conversion;
    /* Directory of the PLD method's FFT plan cache (FFTW wisdom, a file
     * "fftw-<n>" per FFT length n, dpacct/wisdom.h); NULL (default): none,
     * and the library touches no file.  A length the process has no plan
     * for is looked up there before it is planned, and after planning a
     * length the process's wisdom is saved as that length's file (so a file
     * may also hold the other lengths the process planned; the directory is
     * created; writes are atomic).  Planning a length costs a new process
     * 3-15 ms, loading its plan ~0.5 ms.  A missing, unreadable or foreign
     * file, or a failed write, only costs speed.  dpacct plans with
     * FFTW_ESTIMATE, and a plan from its own files is the same plan, so
     * results do not depend on the cache; wisdom of another program in the
     * same process (more patient plans) may end up in the files and change
     * a result's last bits, never its certification.  Borrowed: the string
     * must outlive the accountant.  (The command line uses
     * dpa_wisdom_default_dir.) */
    const char *fft_cache_dir;
} dpa_options;

/* Fill defaults (NULL: no-op). */
void dpa_options_init(dpa_options *opt);

typedef enum dpa_direction {
    DPA_DIR_BOTH = 0,   /* the pair is symmetric: both directions coincide */
    DPA_DIR_REMOVE = 1, /* remove direction was binding */
    DPA_DIR_ADD = 2     /* add direction was binding */
} dpa_direction;

/* "both" (the pair is symmetric), "remove", "add". */
const char *dpa_direction_name(dpa_direction d);

/* Where a result's upper bound comes from. */
typedef enum dpa_bound_source {
    DPA_SOURCE_METHOD = 0,     /* the method's own computation */
    DPA_SOURCE_MAX_LOSS = 1,   /* the largest finite privacy loss of the composition (the sum
                                * over steps of each step's largest finite loss): for eps
                                * queries, eps <= that loss whenever delta is at least the
                                * mass at +inf; for delta queries, delta <= the +inf mass
                                * beyond it.  Used where it beats the method (e.g. below the
                                * PLD method's floating-point floor) */
    DPA_SOURCE_DOMINATION = 2, /* each step replaced by the randomized-response pair of its own
                                * (eps_i, delta_i)-DP guarantee, eps_i its largest finite loss
                                * (LT Thm 4.5), composed exactly (LT Thm 4.6): a looser but
                                * certified bound, used where the method cannot run (e.g. a
                                * grid too large for 10^12 Laplace steps) */
    DPA_SOURCE_CHERNOFF = 3,   /* the exact (eps, delta) method for a count too large to sum
                                * exactly (a binomial window above 2^27 points, e.g. 10^15
                                * steps): a certified Chernoff bound, possibly looser than the
                                * accuracy target suggests */
    DPA_SOURCE_RDP = 4         /* method auto only: the method it picked (exact or pld)
                                * certified no finite eps (e.g. delta below the PLD method's
                                * floating-point floor) while the loss is not +inf with
                                * probability >= delta; the upper bound is the rdp method's
                                * (Renyi DP, options' conversion), `order` its order; the lower
                                * bound stays the picked method's */
} dpa_bound_source;

/* "method", "largest_finite_loss", "dp_domination", "chernoff", "rdp". */
const char *dpa_bound_source_name(dpa_bound_source s);

typedef struct dpa_result {
    double upper;          /* certified upper bound on the queried quantity */
    double lower;          /* certified lower bound (<= upper) */
    double upper_remove, upper_add; /* per-direction upper bounds (equal if symmetric) */
    dpa_direction binding; /* direction attaining `upper` */
    dpa_method method;     /* method actually used (never AUTO) */
    /* PLD settings and error budget (0 for EXACT): */
    double grid_step;      /* spacing of the final composed loss grid (for long repetitions
                            * composed in two stages the mechanisms are discretized on a
                            * grid several times finer, see docs/guarantees.md) */
    size_t grid_size;      /* FFT length of the composed PLD */
    double truncated_mass; /* Chernoff bound on the composed mass outside the FFT window
                            * (both sides; per-mechanism truncation is separate, at most a
                            * quarter of it); enters the delta bounds */
    double roundoff;       /* floating-point allowance included in the delta bounds at this
                            * query (absolute; for eps queries at the queried delta) */
    int accuracy_met;      /* 1 if the requested accuracy was reached */
    dpa_bound_source upper_source; /* what certifies `upper` (DPA_SOURCE_METHOD unless the
                            * method's own bound was worse or unavailable) */
    /* 1: both bounds are proven (exact, pld, rdp); 0: they rest on error
     * estimates (phi: quadrature error by node doubling, docs/phi.md §6), or
     * the phi method could not estimate and returned trivial bounds (see
     * note).  Claims of privacy should use certified results. */
    int certified;
    double order;          /* rdp (or upper_source rdp): the Renyi order attaining `upper`
                            * (binding direction); NAN otherwise */
    char note[160];        /* a method's remark on this result ("" if none) */
    double lower_remove, lower_add; /* per-direction lower bounds of an asymmetric pair, where
                            * the method certifies them (exact, pld; `lower` bounds only the
                            * larger direction); 0 otherwise (always valid) */
} dpa_result;

typedef struct dpa_accountant dpa_accountant;

/* Build an accountant.  opt may be NULL (defaults).  The spec is read, not
 * kept (its flattened leaves are); the caller keeps ownership of it.  Errors:
 * DPA_EINVAL for bad options or a leaf whose total count (product of the
 * enclosing repeat counts, summed over identical leaves) exceeds
 * DPA_MAX_COUNT, DPA_EUNSUPPORTED when the method cannot evaluate
 * the spec (for an unsupported event the message names its JSON path),
 * DPA_ENOMEM. */
dpa_accountant *dpa_accountant_new(const dpa_spec *spec, const dpa_options *opt, dpa_error *err);
void dpa_accountant_free(dpa_accountant *a);

/* The method the accountant uses: the one asked for, or for DPA_METHOD_AUTO
 * the one it chose (never AUTO).
 * a must not be NULL. */
dpa_method dpa_accountant_method(const dpa_accountant *a);

/* Smallest eps >= 0 with delta(eps) <= delta, bounded.  Domain: delta in [0, 1).
 * delta = 0 (pure DP) is answered from the leaves' loss laws whatever the
 * method: the largest privacy loss of the composition (the sum of every
 * step's largest finite loss), certified (certified = 1, for every method);
 * upper = lower = +INFINITY when some step's loss is unbounded (Gaussian) or
 * +inf with positive probability (approx with delta > 0, non_private, zcdp);
 * upper = +INFINITY with a finite lower bound when no finite bound on some
 * step's largest loss is known (the note says which case holds).
 * upper = lower = +INFINITY when the true eps is infinite (the composition
 * has probability > delta of a loss of +inf).  The PLD method can also
 * return upper = +INFINITY with a finite lower bound when delta exceeds the
 * +inf mass by less than its round-off and truncation allowances (delta below
 * the method's numerical floor, ~1e-12 for large grids); it then sets
 * accuracy_met = 0.  The EXACT method's floor is a few ulp of the +inf
 * mass (then also upper = +INFINITY, lower finite, accuracy_met = 0). */
dpa_status dpa_accountant_epsilon(dpa_accountant *a, double delta, dpa_result *out, dpa_error *err);

/* eps(delta) of repeat(counts[i], step) for i < n, in one pass: out[i] is
 * what dpa_accountant_epsilon of an accountant of that spec under opt gives
 * a certified bracket for (upper >= true eps >= lower, same meaning of every
 * field).  Domain: step a valid spec (lent, not consumed; its neighbouring
 * relation applies); counts: n >= 1 integers in [1, DPA_MAX_COUNT], in any
 * order, repeats allowed; delta in (0, 1); opt NULL for the defaults; out:
 * n results, the caller's array.  Errors: DPA_EINVAL (with a message naming
 * the offending argument or counts[i]) for NULL step/counts/out, n = 0, a
 * count that is not a positive integer <= DPA_MAX_COUNT, delta outside
 * (0, 1), and whatever dpa_accountant_new/_epsilon report for the spec (then
 * out is unspecified).  Every bracket meets the accuracy target whenever
 * the single-count query would: a count the one-pass evaluation does not
 * bracket to the target is answered by that single-count query.  The
 * largest count's result is always the single-count query's (bit for bit).
 * The one pass applies to a PLD accountant of one plain leaf without atoms
 * (e.g. a Poisson-subsampled Gaussian: DP-SGD); other specs are answered
 * count by count. */
dpa_status dpa_epsilon_counts(const dpa_spec *step, const double *counts, size_t n, double delta,
                              const dpa_options *opt, dpa_result *out, dpa_error *err);

/* delta(eps) = H_{e^eps}, bounded.  Domain: any finite eps (negative too). */
dpa_status dpa_accountant_delta(dpa_accountant *a, double eps, dpa_result *out, dpa_error *err);

/* The privacy profile at n points: upper[i] >= delta(eps[i]) >= lower[i].
 * Arrays are the caller's; eps values must be finite. */
dpa_status dpa_accountant_profile(dpa_accountant *a, const double *eps, size_t n,
                                  double *upper, double *lower, dpa_error *err);

/* What certifies dpa_gdp_mu.upper. */
typedef enum dpa_gdp_mu_source {
    DPA_GDP_MU_NONE = 0,     /* nothing: upper = +INFINITY, lower bound only */
    DPA_GDP_MU_GAUSSIAN = 1, /* exact method, composition of gaussian/gdp leaves: exactly
                              * mu0-GDP (GDP Cor 3.3), [lower, upper] encloses mu0 */
    DPA_GDP_MU_BOUNDED = 2,  /* bounded privacy loss: the profile checked against G_mu's on a
                              * grid up to the eps where its certified upper bound is 0 */
    DPA_GDP_MU_INFINITE = 3  /* mass at +inf: lower = upper = +INFINITY (no mu works) */
} dpa_gdp_mu_source;

/* The smallest mu with the composition mu-GDP (GDP Def 2.4), bracketed. */
typedef struct dpa_gdp_mu {
    double lower, upper;   /* lower <= mu* <= upper, always; upper = +INFINITY when not
                            * certified (or when mu* is +inf: then lower = +INFINITY too) */
    int certified_upper;   /* 1: upper is a proven bound (source != NONE) */
    dpa_gdp_mu_source source;
    char note[256];        /* how the bounds were obtained, or why upper is not certified */
} dpa_gdp_mu;

/* mu* = the smallest mu such that the composition is mu-GDP: its privacy
 * profile, in both directions of the neighbouring relation, is at most
 * delta_mu(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) at every
 * eps >= 0 (GDP Cor 2.13; docs/fdp.md §8), bracketed: lower <= mu* <= upper
 * always, every numerical error on the safe side.  Uses only queries of `a`
 * (eps queries at the deltas 10^(-k/2) down to 1e-8, a delta query at eps =
 * 1e300, and for the bounded-loss case a few hundred to a few thousand delta
 * queries), so its cost and tightness follow the method:
 *  - lower: the largest mu whose certified upper delta_mu stays below the
 *    certified lower profile at one of those points, rounded down (0 if
 *    nothing is learned; method rdp has no lower bounds).  Always valid.
 *  - source INFINITE: an eps query proved a positive mass at +inf (e.g. an
 *    approx leaf with delta > 0): lower = upper = +INFINITY.
 *  - source GAUSSIAN: method exact on gaussian/gdp leaves (exactly
 *    mu0-GDP, GDP Cor 3.3): [lower, upper] encloses mu0 (~1e-13 relative).
 *  - source BOUNDED: methods exact and pld, when the upper bound on delta is
 *    exactly 0 beyond some eps E (pure, randomized_response, Laplace, ...
 *    leaves, also subsampled): upper is the smallest mu (rounded up) with
 *    delta_upper(e_j) <= delta_mu_lower(e_{j+1}) on a grid 0 = e_0 < ... <
 *    e_n = E.  exact: 1024 steps, then the binding intervals are split
 *    until upper - lower <= 1e-5 upper (at most 8192 points; where delta
 *    underflows double precision the check is limited by it).  pld: 512
 *    steps, within a refinement budget of the pld grid (points not asked
 *    take the bound of those before them): looser, and slower where the pld
 *    method refines its grid (docs/fdp.md §8).
 *  - source NONE: upper = +INFINITY, certified_upper = 0, and the note says
 *    why (e.g. subsampled Gaussian steps: an unbounded loss that is not
 *    exactly Gaussian; method gdp gives the CLT approximation, not a bound).
 *    Methods phi and gdp give no certified bounds, rdp no lower bounds:
 *    lower = 0, upper = +INFINITY, without queries.
 * For the DP-SGD example (pld) it costs about one more PLD build (~30 ms)
 * after an eps query at delta 1e-5.
 * Errors: DPA_EINVAL for NULL arguments; the accountant's query errors are
 * passed on (DPA_ENOMEM).  *out is always filled (on error: lower 0, upper
 * +INFINITY, not certified, the error in the note). */
dpa_status dpa_accountant_gdp_mu(dpa_accountant *a, dpa_gdp_mu *out, dpa_error *err);

/* The central-limit quantities of a composition under the methods gdp and clt
 * (docs/clt.md §3-§5; GDP §3.2): the sums over the composition of the
 * per-step functionals of the privacy loss W = log dX/dY under X, for each
 * direction d (0 remove, 1 add; equal when symmetric). */
typedef struct dpa_clt_info {
    double mu, mu_lower, mu_upper; /* the CLT's mu (method gdp's), and its enclosure */
    double kl[2];      /* ||kl||_1 = sum_i E_X W_i (the KL divergence of the composition) */
    double kappa2[2];  /* ||kappa2||_1 = sum_i E_X W_i^2 */
    double kbar3[2];   /* ||kbar3||_1 = sum_i E_X |W_i - E_X W_i|^3, certified upper bound
                        * (the centred third moment Berry-Esseen uses; the non-central
                        * kappa3 is not computed) */
    double gamma[2];   /* the Berry-Esseen (Shevtsova's constant 0.56) bound on the
                        * Kolmogorov distance of W from its normal, the larger of the two
                        * measures', certified; 0 for a Gaussian composition, +INFINITY
                        * when it certifies nothing */
    double gamma_envelope[2]; /* the gamma method clt's envelope uses: gamma, or smaller
                        * with Shevtsova's constants for i.i.d. summands where the
                        * non-Gaussian part is copies of one step (docs/clt.md §5) */
    double limit_mu;   /* the T -> inf limit of mu for subsampled Gaussians (GDP Cor 5.4
                        * without replacement, Bu et al. 2020 for Poisson); NAN otherwise */
    int symmetric;     /* 1: direction 1 equals direction 0 */
    int clt_regime;    /* 1 if max gamma <= 0.05 (docs/clt.md §4, "The CLT regime"), a
                        * measured heuristic: outside it method gdp's eps was up to 16
                        * times below the truth, inside it up to 1.4 times */
} dpa_clt_info;

/* The quantities above for an accountant whose method is gdp or clt (cheap:
 * computed when the accountant was built).  Errors: DPA_EINVAL for NULL
 * arguments, DPA_EUNSUPPORTED for any other method. */
dpa_status dpa_accountant_clt_info(const dpa_accountant *a, dpa_clt_info *out, dpa_error *err);

/* The tail of the privacy loss at a point (docs/loss_tail.md): for the pair
 * (P, Q) of direction dir (remove: P the composition with the individual's
 * data, Q without; add: the reversed pair) and L = log dP/dQ under P,
 * sf_lower <= P(L > t) <= sf_upper and cdf_lower <= P(L <= t) <= cdf_upper
 * (cdf = 1 - sf; the +inf mass of L counts in sf).  The brackets come from
 * the accountant's delta brackets alone (H_x(P||Q) is convex in x = e^eps
 * and its slope is -Q(L > log x)), so they hold for every method: certified
 * = 1 when those brackets are (exact, pld, rdp; rdp has no lower delta
 * bounds, so its sf_lower is only what the upper bounds give), 0 for the
 * estimate methods (phi, gdp), whose brackets are estimates.  For an
 * asymmetric pair each direction's lower delta bounds are the method's
 * lower_remove / lower_add (exact, pld); methods without them give wide
 * brackets there (the note says so).
 * Cost: 2 x DPA_LOSS_TAIL_OFFSETS + 1 delta queries of the accountant.
 * Domain: t finite; dir DPA_DIR_REMOVE or DPA_DIR_ADD.  Errors: DPA_EINVAL
 * naming the argument ("t", "direction") for NULL, non-finite t or
 * DPA_DIR_BOTH; the accountant's query errors are passed on. */
#define DPA_LOSS_TAIL_OFFSETS 32
typedef struct dpa_loss_tail {
    double t;
    dpa_direction direction;
    double sf_lower, sf_upper;   /* bracket of P(L > t) */
    double cdf_lower, cdf_upper; /* bracket of P(L <= t) */
    int certified;               /* 1: both brackets are proven */
    dpa_method method;
    char note[160];
} dpa_loss_tail;

dpa_status dpa_accountant_loss_tail(dpa_accountant *a, double t, dpa_direction dir, dpa_loss_tail *out,
                                    dpa_error *err);

/* ---- representations (docs/guarantees.md §3.17, docs/phi.md §9, docs/rdp.md §7) ---- */

/* One composed grid measure of the PLD method: masses mass[i] >= 0 at the
 * privacy losses z_i = (offset + i) * step, i < n, and inf at +inf. */
typedef struct dpa_pld_measure {
    double step;          /* grid spacing (loss units) */
    long long offset;     /* grid index of mass[0] */
    size_t n;             /* grid points */
    const double *mass;   /* n masses, lent by the accountant (see dpa_accountant_pld) */
    double inf;           /* mass at loss +inf */
    double tail_above;    /* bound on the measure's mass above the window (dropped) */
    double tail_outside;  /* the same on both sides: the truncated mass */
    double roundoff;      /* absolute floating-point allowance on a delta computed from mass */
    double rel_err;       /* relative allowance on that delta (round-off of the factors) */
} dpa_pld_measure;

/* The PLD of one direction: the upper (pessimistic, connect-the-dots) and
 * lower (optimistic) grid measures whose hockey-stick curves bracket the
 * privacy profile (docs/guarantees.md §3.17):
 *   delta(eps) <= (sum_i upper.mass[i] (1 - e^{eps - z_i})_+ + upper.inf)
 *                 (1 + 2 n u + upper.rel_err) + upper.tail_above + upper.roundoff
 *   delta(eps) >= (sum_i lower.mass[i] (1 - e^{eps - z_i})_+ + lower.inf)
 *                 (1 - 2 n u - lower.rel_err) - lower.tail_outside - lower.roundoff
 * (u = 2^-53).  Each measure's total mass (sum + inf) is 1 up to the
 * truncated mass tail_outside and the round-off (4 n u + rel_err + roundoff). */
typedef struct dpa_pld_export {
    dpa_direction direction; /* DPA_DIR_REMOVE, DPA_DIR_ADD, or DPA_DIR_BOTH when the
                              * pair is symmetric (both directions are this PLD) */
    dpa_pld_measure upper, lower;
    int lower_certified;     /* 0 when the spec holds a step accounted by an upper
                              * envelope (exponential_mechanism, truncated_poisson,
                              * random_allocation with selected > 1): the lower measure
                              * then bounds the envelope, not the mechanism */
} dpa_pld_export;

/* The composed PLD of direction dir (DPA_DIR_REMOVE: the pair as built;
 * DPA_DIR_ADD: the reversed pair; DPA_DIR_BOTH means remove) of an
 * accountant whose method is pld, on the finest grid its queries have
 * used so far (composed now if missing; before any query, on the grid an
 * eps query at delta 1e-6 starts from).  The masses are lent: valid until
 * the next query on `a` or its free.  Errors: DPA_EINVAL for NULL
 * arguments, DPA_EUNSUPPORTED when the method is not pld, the method's
 * build errors (DPA_ENOMEM when the grid does not fit max_grid). */
dpa_status dpa_accountant_pld(dpa_accountant *a, dpa_direction dir, dpa_pld_export *out, dpa_error *err);

/* The characteristic function of the privacy loss of the spec's composition
 * (CF Def. 5, LT eq 4), direction dir (remove: W = log dP/dQ under P; add:
 * the reversed pair), at n points t[i]:
 *   phi(t) = E[e^{i t W} ; W finite] = re[i] + i im[i]
 * (a sub-probability's transform when the loss is +inf with positive
 * probability: phi(0) = 1 - that mass).  error[i] bounds |computed - true|:
 * a proven bound (round-off, first order) when *certified = 1 (atoms,
 * Gaussian, Laplace leaves: closed forms); for Poisson-subsampled Gaussian
 * or Laplace leaves (numerical quadrature, docs/phi.md §2) it includes the
 * quadrature's node-doubling estimate and *certified = 0.  Domain: finite
 * t (any sign), n >= 1.  Errors: DPA_EINVAL (NULL arguments, n = 0, a
 * non-finite t, dir not remove/add/both), DPA_EUNSUPPORTED for leaves the
 * phi method does not take (subsampled compositions, sampling without
 * replacement, zcdp, random allocation), DPA_ENUMERIC when a quadrature
 * does not settle, DPA_ENOMEM. */
dpa_status dpa_characteristic(const dpa_spec *spec, dpa_direction dir, const double *t, size_t n, double *re,
                              double *im, double *error, int *certified, dpa_error *err);

/* The privacy profile from the Renyi curve (LT §3): at one epsilon, */
typedef struct dpa_lt_point {
    double eps;
    /* the inverse Laplace transform of LT eq 37 (Bromwich integral of
     * E_{1-s} / (s (s - 1)) along a vertical line of complex Renyi orders),
     * plus the mass at +inf: a numerical ESTIMATE of delta(eps), the larger
     * of the two directions; NAN where none is available (see
     * dpa_lt_info.estimate_note).  error_estimate: its estimated absolute
     * error (node doubling, truncation, round-off; not a proof). */
    double estimate, estimate_remove, estimate_add, error_estimate;
    /* a certified upper bound on delta(eps) from the real Renyi curve: the
     * rdp method's conversion (dpa_options.rdp_conversion, docs/rdp.md §4)
     * over its orders; +INFINITY where it certifies nothing */
    double bound;
} dpa_lt_point;

typedef struct dpa_lt_info {
    int has_estimate;      /* 1: the estimates are numbers */
    int has_bound;         /* 1: the rdp method took the spec */
    char estimate_note[512]; /* why there is no estimate ("" if there is) */
    char bound_note[512];      /* why there is no bound ("" if there is) */
} dpa_lt_info;

/* The Renyi curve back to the privacy profile at eps[0..n-1] (finite, any
 * order): out[i] (the caller's array) gets the estimate and the bound, info
 * says which exist.  The estimate needs a composition the phi method takes
 * with a Gaussian-type factor (a continuous loss law whose Renyi function
 * decays along vertical lines; docs/rdp.md §7); the bound needs the rdp
 * method.  opt: NULL for the defaults (rdp_conversion is used).  Errors:
 * DPA_EINVAL (NULL arguments, n = 0, a non-finite eps), DPA_EUNSUPPORTED
 * when neither exists (with both reasons), DPA_ENOMEM.  At least one of
 * has_estimate, has_bound is 1 on success. */
dpa_status dpa_lt_profile(const dpa_spec *spec, const dpa_options *opt, const double *eps, size_t n,
                          dpa_lt_point *out, dpa_lt_info *info, dpa_error *err);

#ifdef __cplusplus
}
#endif
#endif
