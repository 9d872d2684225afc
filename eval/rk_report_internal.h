/* rk_report_internal.h — what the report's two files share (eval/ only):
 * text escaping, finite numbers and the SVG figures of rk_report_svg.c.
 *
 * Every figure is one <svg> element, 720 px wide, drawn with generic fonts
 * and the fixed palette; every coordinate written goes through rk_rep_fin so
 * that no NaN or Inf reaches the page whatever the data.
 */
#ifndef RK_REPORT_INTERNAL_H
#define RK_REPORT_INTERNAL_H

#include <stdint.h>
#include <stdio.h>

#define RK_REP_W 720.0          /* width of every figure */
#define RK_REP_LABEL 32         /* bytes of one axis or bar label */
#define RK_REP_MAX_BARS 64      /* bars of one categorical chart */
#define RK_REP_PALETTE 10

extern const char *const rk_rep_palette[RK_REP_PALETTE];

/* s with &, <, >, " and ' escaped, control characters and bytes that are not
 * UTF-8 replaced by U+FFFD (the page must stay valid XML).  NULL: nothing. */
void rk_rep_esc(FILE *fp, const char *s);

/* x when finite, else 0: for coordinates. */
double rk_rep_fin(double x);

/* x with `digits` decimals, or "n/a" when it is not finite. */
void rk_rep_fix(FILE *fp, int digits, double x);

/* A count in at most ~6 characters for labels: 950, 12.3k, 4.5M. */
void rk_rep_short(char *buf, size_t cap, double c);

/* Histogram of nb bins of equal width over [lo, hi]: ticks on the x axis at
 * the multiples of tick_step (0: a round step of its own) with tick_digits
 * decimals (-1: as the step needs); the counts above the bars when they all
 * fit; a dashed line at x = mark when has_mark and mark lies inside (lo, hi).
 * Each bar's tooltip reads "[a, b): count" with tick_digits + 2 decimals. */
typedef struct rk_rep_hist {
    const char *title, *x_title, *y_title;
    int nb;
    const double *count;
    double lo, hi, tick_step;
    int tick_digits;
    double mark;
    int has_mark;
    const char *colour;
} rk_rep_hist;
void rk_rep_svg_hist(FILE *fp, const rk_rep_hist *h);

/* Vertical bars, one per category (n <= RK_REP_MAX_BARS): label and sub
 * (a second line, may be NULL) under each bar, top (may be NULL) above it.
 * Labels that would collide are thinned out; top texts that do not fit the
 * bar's slot are left out. */
typedef struct rk_rep_bars {
    const char *title, *x_title, *y_title;
    int n;
    const double *value;
    const char (*label)[RK_REP_LABEL];
    const char (*sub)[RK_REP_LABEL];
    const char (*top)[RK_REP_LABEL];
    const char *colour;
    int integral;               /* 1: whole steps on the y axis (counts) */
} rk_rep_bars;
void rk_rep_svg_bars(FILE *fp, const rk_rep_bars *b);

/* Grouped bars: ng groups of ns series (ns <= 4), value[g * ns + s], printed
 * above each bar with 4 decimals; a legend of the series. */
void rk_rep_svg_grouped(FILE *fp, const char *title, int ng, const char *const *group, int ns,
                        const char *const *series, const double *value);

/* One horizontal bar of n stages (seconds, each >= 0, total > 0), a segment
 * per stage in the palette's colour of its index, its name as a tooltip. */
void rk_rep_svg_stacked(FILE *fp, int n, const char *const *name, const double *sec, double total);

/* Values per fold as dots, labelled when there is room, with a dashed line
 * at their mean (n >= 1; the title should give the mean: the line has no
 * label, so that it never covers a dot's). */
void rk_rep_svg_dots(FILE *fp, const char *title, const char *y_title, int n, const double *v, double mean);

/* The concentration curve: share of recommendations (y, 0..1) taken by the
 * first share of items (x, 0..1), most recommended first, np points from
 * (0, 0) to (1, 1); the line of equal shares; marks at the shares of the top
 * 1 % and 10 % of the items (mark_x, mark_y, 2 each). */
void rk_rep_svg_curve(FILE *fp, int np, const double *x, const double *y, const double *mark_x,
                      const double *mark_y);

#endif /* RK_REPORT_INTERNAL_H */
