/* rbc_sweep — recall and work of the random ball cover over (R, P) on one file.
 *   bench/rbc_sweep RATINGS METRIC SAMPLE DRAW R:P[:T] [R:P[:T]...]
 * The ratings are read as implicit (every rating 1), k = 20; DRAW is raters
 * or uniform; R or P 0 (T absent or -1) take the defaults.  For each one
 * run on the CPU, then recall@20 on SAMPLE queries: a line of R, P, T, the
 * items in the tail and the orphans, the largest ball, pair evaluations (of
 * them through raters), work ratio against brute force, rater entries read,
 * recall (strict, and counting equal similarities), seconds.  Benchmark tool, not a test; it made the choices
 * described in engine/rk_rbc.c. */
#include "rk_data.h"
#include "rk_rbc.h"
#include "rk_omp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: %s RATINGS METRIC SAMPLE raters|uniform R:P[:T] [R:P[:T]...]\n", argv[0]);
        return 2;
    }
    rk_error err;
    rk_data_opts dop;
    rk_data d;
    memset(&dop, 0, sizeof dop);
    const char *in[1] = {argv[1]};
    dop.inputs = in;
    dop.n_inputs = 1;
    rk_load_opts_default(&dop.load);
    dop.duplicates = RK_DUP_LAST;
    dop.implicit = 1;
    if (rk_data_load(&dop, &d, &err) != RK_OK) {
        fprintf(stderr, "rbc_sweep: %s\n", err.msg);
        return 3;
    }
    rk_knn_opts o;
    rk_knn_opts_default(&o);
    if (rk_metric_parse(argv[2], &o.sim.metric) != RK_OK) {
        fprintf(stderr, "rbc_sweep: unknown metric %s\n", argv[2]);
        return 2;
    }
    const int64_t sample = atoll(argv[3]);
    rk_rbc_opts r;
    rk_rbc_opts_default(&r);
    r.draw = strcmp(argv[4], "uniform") == 0 ? RK_RBC_DRAW_UNIFORM : RK_RBC_DRAW_RATERS;
    rk_lists l;
    if (rk_lists_alloc(&l, d.model.by_item.n_rows, o.k, &err) != RK_OK) return 5;
    printf("%6s %4s %2s %7s %7s %8s %12s %12s %7s %13s %7s %7s %7s %7s\n", "R", "P", "T", "tail", "orphans",
           "ball max", "pair evals", "via raters", "brute/", "entries read", "recall", "ties", "rbc s", "check s");
    for (int a = 5; a < argc; a++) {
        const char *c1 = strchr(argv[a], ':'), *c2 = c1 != NULL ? strchr(c1 + 1, ':') : NULL;
        r.reps = atoi(argv[a]);
        r.probes = c1 != NULL ? atoi(c1 + 1) : 0;
        r.tail = c2 != NULL ? atoi(c2 + 1) : -1;
        rk_rbc_stats st;
        rk_rbc_recall_result rec;
        if (rk_rbc_cpu(&d.model, &o, &r, &l, &st, &err) != RK_OK ||
            rk_rbc_recall(&d.model, &o, &l, sample, 1, 0, &rec, &err) != RK_OK) {
            fprintf(stderr, "rbc_sweep: %s\n", err.msg);
            return 5;
        }
        printf("%6d %4d %2d %7lld %7lld %8lld %12lld %12lld %7.1f %13lld %7.4f %7.4f %7.2f %7.2f\n", st.reps,
               st.probes, st.tail, (long long)st.tail_items, (long long)st.orphans, (long long)st.largest_ball,
               (long long)st.pair_evals, (long long)st.rater_pairs,
               (double)st.brute_pairs / (double)(st.pair_evals > 0 ? st.pair_evals : 1), (long long)st.entry_reads,
               rec.recall, rec.recall_ties, st.wall_s, rec.wall_s);
        fflush(stdout);
    }
    rk_lists_free(&l);
    rk_data_free(&d);
    return 0;
}
