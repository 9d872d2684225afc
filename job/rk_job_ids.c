/* --users and --items files read against the training data's ids
 * (rk_job_internal.h). */
#include "config.h"
#include "rk_job_internal.h"
#include "rk_idlist.h"

#include <stdio.h>

/* --users FILE: the ids of the file that name users, in file order; unknown
 * ids are counted (and noted with the users unknown to training, per fold). */
rk_status rk_job_read_users(const rk_job_opts *o, const rk_idmap *users, int32_t **asked, int64_t *n,
                            rk_job_report *rep, rk_error *err)
{
    rk_idlist_report ir;
    RK_FORWARD(rk_idlist_read(o->users_path, users, asked, n, &ir, err));
    rep->users_file_ids = ir.ids;
    rep->users_unknown = ir.unknown;
    rep->users_repeated = ir.repeated;
    rep->users_first_unknown_line = ir.first_unknown_line;
    snprintf(rep->users_first_unknown, sizeof rep->users_first_unknown, "%s", ir.first_unknown);
    return RK_OK;
}

/* --items FILE: the items of the file that the training data has, file order. */
rk_status rk_job_read_items(const rk_job_opts *o, const rk_idmap *items, int32_t **asked, int64_t *n,
                            rk_job_report *rep, rk_error *err)
{
    rk_idlist_report ir;
    RK_FORWARD(rk_idlist_read(o->items_path, items, asked, n, &ir, err));
    rep->items_file_ids = ir.ids;
    rep->items_unknown = ir.unknown;
    rep->items_repeated = ir.repeated;
    if (ir.unknown > 0)
        rk_note(o->note, o->ud, "%.300s: %lld id%s that no rating names (the first, '%.64s', on line %lld) get no "
                "list", o->items_path, (long long)ir.unknown, ir.unknown == 1 ? "" : "s", ir.first_unknown,
                (long long)ir.first_unknown_line);
    return RK_OK;
}
