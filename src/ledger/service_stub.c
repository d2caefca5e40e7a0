/* Temporary stubs of the budget service's ledger functions (format 3), replaced one by
 * one by their implementations; each returns DPA_EUNSUPPORTED "not yet".
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include "ledger/ledger_internal.h"

#define DPA_NOT_YET(err) dpa_error_set(err, DPA_EUNSUPPORTED, "%s: not yet implemented", __func__)

dpa_status dpa_ledger_add_tenant(dpa_ledger *l, const char *tenant, const char *actor, dpa_error *err)
{
    (void)l; (void)tenant; (void)actor;
    return DPA_NOT_YET(err);
}
dpa_status dpa_ledger_token_create(dpa_ledger *l, const char *tenant, dpa_ledger_role role,
                                   const char *label, const char *actor, char **token,
                                   char **token_id, dpa_error *err)
{
    (void)l; (void)tenant; (void)role; (void)label; (void)actor; (void)token; (void)token_id;
    return DPA_NOT_YET(err);
}
dpa_status dpa_ledger_token_revoke(dpa_ledger *l, const char *token_id, const char *actor,
                                   dpa_error *err)
{
    (void)l; (void)token_id; (void)actor;
    return DPA_NOT_YET(err);
}
dpa_status dpa_ledger_token_list_json(dpa_ledger *l, const char *tenant, char **json, dpa_error *err)
{
    (void)l; (void)tenant; (void)json;
    return DPA_NOT_YET(err);
}
dpa_status dpa_ledger_authenticate(dpa_ledger *l, const char *token, dpa_ledger_identity *who,
                                   dpa_error *err)
{
    (void)l; (void)token; (void)who;
    return DPA_NOT_YET(err);
}
dpa_status dpa_ledger_add_unit_ex(dpa_ledger *l, const char *unit, const dpa_ledger_unit_opts *o,
                                  dpa_error *err)
{
    (void)l; (void)unit; (void)o;
    return DPA_NOT_YET(err);
}
dpa_status dpa_ledger_unit_tenant(dpa_ledger *l, const char *unit, char **tenant, dpa_error *err)
{
    (void)l; (void)unit; (void)tenant;
    return DPA_NOT_YET(err);
}
dpa_status dpa_ledger_unit_lifecycle(dpa_ledger *l, const char *unit, const char *op, const char *actor,
                                     const char *reason, dpa_error *err)
{
    (void)l; (void)unit; (void)op; (void)actor; (void)reason;
    return DPA_NOT_YET(err);
}
dpa_status dpa_ledger_unit_topup(dpa_ledger *l, const char *unit, const char *filter_config,
                                 const char *actor, const char *reason, dpa_error *err)
{
    (void)l; (void)unit; (void)filter_config; (void)actor; (void)reason;
    return DPA_NOT_YET(err);
}
dpa_status dpa_ledger_unit_roll(dpa_ledger *l, const char *unit, const char *actor, dpa_error *err)
{
    (void)l; (void)unit; (void)actor;
    return DPA_NOT_YET(err);
}
dpa_status dpa_ledger_request_ex(dpa_ledger *l, const char *unit, const char *spec_json,
                                 const dpa_ledger_request_opts *o, dpa_ledger_decision *out,
                                 dpa_error *err)
{
    (void)l; (void)unit; (void)spec_json; (void)o; (void)out;
    return DPA_NOT_YET(err);
}
dpa_status dpa_ledger_request_batch(dpa_ledger *l, dpa_ledger_batch_item *items, size_t n,
                                    dpa_error *err)
{
    (void)l; (void)items; (void)n;
    return DPA_NOT_YET(err);
}
dpa_status dpa_ledger_reservation(dpa_ledger *l, const char *unit, long long request_id,
                                  const char *op, const char *actor, dpa_error *err)
{
    (void)l; (void)unit; (void)request_id; (void)op; (void)actor;
    return DPA_NOT_YET(err);
}
dpa_status dpa_ledger_units_page_json(dpa_ledger *l, const char *tenant, const char *after,
                                      int limit, char **json, dpa_error *err)
{
    (void)l; (void)tenant; (void)after; (void)limit; (void)json;
    return DPA_NOT_YET(err);
}
dpa_status dpa_ledger_history_page_json(dpa_ledger *l, const char *unit, long long after_id,
                                        const char *since, const char *until, int limit,
                                        char **json, dpa_error *err)
{
    (void)l; (void)unit; (void)after_id; (void)since; (void)until; (void)limit; (void)json;
    return DPA_NOT_YET(err);
}
dpa_status dpa_ledger_ping(dpa_ledger *l, dpa_error *err)
{
    (void)l;
    return DPA_NOT_YET(err);
}
