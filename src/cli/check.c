/* dpacct command-line front end: the checks of every number the library
 * returns, before anything is printed.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A NaN, an infinity where none is allowed, or bounds in the wrong order are
 * library bugs and end the run with exit status 1 instead of being shown. */
#include <math.h>
#include <string.h>
#include "cli.h"

/* Fill a result with values that every check below rejects, so a field the
 * library forgot to set cannot pass for a bound. */
void cli_poison_result(dpa_result *r)
{
    memset(r, 0, sizeof *r);
    r->upper = r->lower = r->upper_remove = r->upper_add = NAN;
    r->grid_step = r->truncated_mass = r->roundoff = NAN;
    r->method = DPA_METHOD_AUTO;
    r->binding = (dpa_direction)3; /* no such direction */
    r->certified = -1;
}

/* A method the library reports for a result (never AUTO). */
int cli_method_ok(dpa_method m)
{
    return m == DPA_METHOD_PLD || m == DPA_METHOD_EXACT || m == DPA_METHOD_PHI || m == DPA_METHOD_RDP ||
           m == DPA_METHOD_GDP || m == DPA_METHOD_CLT;
}

/* Finite, or +inf where allowed (epsilon bounds). */
static int bound_ok(double x, int inf_ok)
{
    return isfinite(x) || (inf_ok && x == HUGE_VAL);
}

int cli_check_result(const dpa_result *r, int eps_query)
{
    if (!bound_ok(r->upper, eps_query) || !bound_ok(r->lower, eps_query))
        return cli_library_bug(isnan(r->upper) || isnan(r->lower) ? "a NaN bound"
                                                              : "an infinite bound");
    if (!bound_ok(r->upper_remove, eps_query) || !bound_ok(r->upper_add, eps_query))
        return cli_library_bug("an invalid per-direction bound");
    if (!(r->lower <= r->upper))
        return cli_library_bug("a lower bound above the upper bound");
    if (!isfinite(r->grid_step) || !isfinite(r->truncated_mass) || !isfinite(r->roundoff))
        return cli_library_bug("an invalid grid or error-budget value");
    if (!cli_method_ok(r->method))
        return cli_library_bug("no method");
    if (r->certified != 0 && r->certified != 1)
        return cli_library_bug("no certification flag");
    /* (eps at delta 0: the largest loss, no order; identical distributions:
     * the bound 0 (eps) or (1 - e^eps)_+ (delta) at every order, no order
     * singled out) */
    if (r->method == DPA_METHOD_RDP && isfinite(r->upper) && !(r->order >= 1) &&
        r->upper_source != DPA_SOURCE_MAX_LOSS && !(isnan(r->order) && r->lower == r->upper))
        return cli_library_bug("an RDP bound without its order");
    if (memchr(r->note, '\0', sizeof r->note) == NULL)
        return cli_library_bug("an unterminated note");
    if (r->binding != DPA_DIR_BOTH && r->binding != DPA_DIR_REMOVE && r->binding != DPA_DIR_ADD)
        return cli_library_bug("no binding direction");
    return CLI_EXIT_OK;
}

/* The gdp_mu bracket: never NaN, lower <= upper, an infinite lower bound
 * only with a certified infinite upper one, a terminated note. */
int cli_check_gdp_mu(const dpa_gdp_mu *g)
{
    if (isnan(g->lower) || isnan(g->upper) || !(g->lower >= 0) || !(g->lower <= g->upper))
        return cli_library_bug("an invalid mu-GDP bracket");
    if (g->certified_upper != 0 && g->certified_upper != 1)
        return cli_library_bug("no mu-GDP certification flag");
    if (isinf(g->lower) && !(g->certified_upper && g->source == DPA_GDP_MU_INFINITE))
        return cli_library_bug("an infinite mu-GDP lower bound without its certificate");
    if (!g->certified_upper && !isinf(g->upper))
        return cli_library_bug("a finite mu-GDP upper bound that is not certified");
    if (memchr(g->note, '\0', sizeof g->note) == NULL)
        return cli_library_bug("an unterminated mu-GDP note");
    return CLI_EXIT_OK;
}
