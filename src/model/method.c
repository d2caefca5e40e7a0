/* What every accounting method shares (src/model/method.h): the initial
 * result and the refusals of Renyi-only leaves and of random allocation.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <math.h>
#include <string.h>
#include "model/method.h"

void dpa_method_result_init(dpa_result *r, dpa_method m)
{
    memset(r, 0, sizeof *r);
    r->method = m;
    r->binding = DPA_DIR_BOTH;
    r->accuracy_met = 1;
    r->certified = 1;
    r->order = NAN;
}

dpa_status dpa_method_refuse_zcdp(const dpa_leafset *L, const char *method, dpa_error *err)
{
    /* zcdp_path also names the other Renyi-only leaves (repeat_and_select,
     * laplace_svt, gaussian_svt: src/model/leaves.c) */
    const char *slash = strrchr(L->zcdp_path, '/');
    if (slash && strcmp(slash, "/zcdp") != 0)
        return dpa_error_set(err, DPA_EUNSUPPORTED,
                             "%s: method %s cannot take a %s step: its guarantee is a Renyi bound, not a dominating "
                             "pair; use method rdp (or auto)",
                             L->zcdp_path, method, slash + 1);
    return dpa_error_set(err, DPA_EUNSUPPORTED,
                         "%s: method %s cannot take zcdp leaves: a zCDP bound is a Renyi bound, not a dominating "
                         "pair; use method rdp (or auto), or a gaussian/gdp leaf if the mechanism is Gaussian",
                         L->zcdp_path, method);
}

dpa_status dpa_method_refuse_ra(const dpa_leafset *L, const char *method, dpa_error *err)
{
    /* ra_path also names a replace-one Poisson-subsampled Gaussian, which
     * pld alone brackets from separate upper and lower pairs */
    const char *slash = strrchr(L->ra_path, '/');
    if (slash && !strcmp(slash, "/poisson"))
        return dpa_error_set(err, DPA_EUNSUPPORTED,
                             "%s: method %s cannot take Poisson subsampling under replace-one neighbours: only "
                             "method pld (or auto) brackets it (docs/sampling.md §5)",
                             L->ra_path, method);
    return dpa_error_set(err, DPA_EUNSUPPORTED,
                         "%s: method %s cannot take random allocation: only method pld (or auto) bounds it "
                         "(docs/sampling.md §4)",
                         L->ra_path, method);
}
