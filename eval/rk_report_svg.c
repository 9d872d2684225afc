/* The report's text escaping and SVG figures (rk_report_internal.h). */
#include "rk_report_internal.h"

#include <math.h>
#include <string.h>

/* Tableau 10: distinct in colour and in grey. */
const char *const rk_rep_palette[RK_REP_PALETTE] = {
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
};

#define REPL "\xEF\xBF\xBD" /* U+FFFD */

/* Plot area of the framed figures (axes on the left and below). */
#define X0 64.0
#define Y0 30.0
#define PW 640.0
#define PH 140.0
#define FIG_H 220
#define BASE (Y0 + PH)
#define CHAR_W 6.0 /* width of a character at 10 px, a little generous */

/* ---- text ------------------------------------------------------------------ */

/* Bytes of the valid UTF-8 sequence at p that XML allows, 0 when there is none. */
static int utf8_len(const unsigned char *p)
{
    unsigned c = p[0], cp;
    int n;
    if (c >= 0xC2 && c <= 0xDF) n = 2, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF) n = 3, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4) n = 4, cp = c & 0x07;
    else return 0;
    for (int k = 1; k < n; k++) {
        if ((p[k] & 0xC0) != 0x80) return 0; /* also stops at the NUL */
        cp = (cp << 6) | (p[k] & 0x3F);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF))) return 0; /* overlong */
    if ((cp >= 0xD800 && cp <= 0xDFFF) || cp == 0xFFFE || cp == 0xFFFF) return 0;
    return n;
}

void rk_rep_esc(FILE *fp, const char *s)
{
    if (s == NULL) return;
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned c = *p;
        switch (c) {
        case '&': fputs("&amp;", fp); p++; continue;
        case '<': fputs("&lt;", fp); p++; continue;
        case '>': fputs("&gt;", fp); p++; continue;
        case '"': fputs("&quot;", fp); p++; continue;
        case '\'': fputs("&#39;", fp); p++; continue;
        default: break;
        }
        if (c < 0x80) {
            if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') fputs(REPL, fp);
            else putc((int)c, fp);
            p++;
            continue;
        }
        int n = utf8_len(p);
        if (n == 0) {
            fputs(REPL, fp);
            p++;
        } else {
            fwrite(p, 1, (size_t)n, fp);
            p += n;
        }
    }
}

double rk_rep_fin(double x)
{
    return isfinite(x) ? x : 0.0;
}

void rk_rep_fix(FILE *fp, int digits, double x)
{
    if (isfinite(x)) fprintf(fp, "%.*f", digits, x);
    else fputs("n/a", fp);
}

void rk_rep_short(char *buf, size_t cap, double c)
{
    double a = fabs(c);
    if (!isfinite(c)) snprintf(buf, cap, "n/a");
    else if (a < 10000) snprintf(buf, cap, "%.0f", c);
    else if (a < 1e6) snprintf(buf, cap, "%.1fk", c / 1e3);
    else if (a < 1e9) snprintf(buf, cap, "%.1fM", c / 1e6);
    else snprintf(buf, cap, "%.1fG", c / 1e9);
}

/* Characters (not bytes) of a UTF-8 label, for its width. */
static size_t text_len(const char *s)
{
    size_t n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* ---- frame and axes ---------------------------------------------------------- */

static void svg_open(FILE *fp, int height, const char *title)
{
    fprintf(fp, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%d\" "
                "viewBox=\"0 0 %.0f %d\" font-family=\"sans-serif\" font-size=\"10\" role=\"img\" aria-label=\"",
            RK_REP_W, height, RK_REP_W, height);
    rk_rep_esc(fp, title);
    fputs("\">\n", fp);
    if (title != NULL) {
        fprintf(fp, "<text class=\"t\" x=\"%.0f\" y=\"16\">", X0);
        rk_rep_esc(fp, title);
        fputs("</text>\n", fp);
    }
}

static void svg_close(FILE *fp)
{
    fputs("</svg>\n", fp);
}

/* A step of 1, 2 or 5 times a power of ten near raw (> 0). */
static double nice_step(double raw)
{
    if (!(raw > 1e-12) || !isfinite(raw)) raw = raw > 1e-12 ? 1e12 : 1e-12;
    double p = pow(10.0, floor(log10(raw)));
    double m = raw / p;
    return (m <= 1.0 ? 1.0 : m <= 2.0 ? 2.0 : m <= 5.0 ? 5.0 : 10.0) * p;
}

/* Decimals that show a multiple of step exactly (about). */
static int step_digits(double step)
{
    if (step >= 1.0) return 0;
    int d = (int)ceil(-log10(step) - 1e-9);
    return d < 0 ? 0 : d > 9 ? 9 : d;
}

/* An axis from 0 to *top >= vmax in about 4 steps (whole steps for counts). */
static void zero_scale(double vmax, int integral, double *top, double *step)
{
    if (!(vmax > 0) || !isfinite(vmax)) vmax = 1.0;
    double s = nice_step(vmax / 4.0);
    if (integral && s < 1.0) s = 1.0;
    double k = ceil(vmax / s - 1e-9);
    if (k < 1) k = 1;
    *step = s;
    *top = k * s;
}

static void y_axis(FILE *fp, double lo, double hi, double step, const char *y_title)
{
    int digits = step_digits(step);
    double first = ceil(lo / step - 1e-9) * step;
    for (int k = 0; k < 40; k++) {
        double v = first + k * step;
        if (v > hi + 1e-9 * fabs(hi - lo)) break;
        double y = BASE - (v - lo) / (hi - lo) * PH;
        fprintf(fp, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>\n",
                X0, rk_rep_fin(y), X0 + PW, rk_rep_fin(y));
        fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.*f</text>\n", X0 - 6,
                rk_rep_fin(y + 3.5), digits, fabs(v) < step * 1e-6 ? 0.0 : v);
    }
    fprintf(fp, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\"/>\n", X0, Y0, X0, BASE);
    if (y_title != NULL) {
        fprintf(fp, "<text x=\"14\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 14 %.1f)\">",
                Y0 + PH / 2, Y0 + PH / 2);
        rk_rep_esc(fp, y_title);
        fputs("</text>\n", fp);
    }
}

static void x_base(FILE *fp, const char *x_title)
{
    fprintf(fp, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\"/>\n", X0, BASE, X0 + PW, BASE);
    if (x_title != NULL) {
        fprintf(fp, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", X0 + PW / 2, FIG_H - 6);
        rk_rep_esc(fp, x_title);
        fputs("</text>\n", fp);
    }
}

/* ---- figures ------------------------------------------------------------------ */

void rk_rep_svg_hist(FILE *fp, const rk_rep_hist *h)
{
    int nb = h->nb > 0 ? h->nb : 0;
    double lo = rk_rep_fin(h->lo), hi = rk_rep_fin(h->hi);
    if (!(hi > lo)) hi = lo + 1.0;
    double vmax = 0;
    for (int b = 0; b < nb; b++)
        if (isfinite(h->count[b]) && h->count[b] > vmax) vmax = h->count[b];
    double top, ystep;
    zero_scale(vmax, 1, &top, &ystep);
    svg_open(fp, FIG_H, h->title);
    y_axis(fp, 0.0, top, ystep, h->y_title);
    double bw = nb > 0 ? PW / nb : PW;
    int counts_fit = 1; /* the counts above the bars: all of them or none */
    for (int b = 0; b < nb; b++) {
        char s[RK_REP_LABEL];
        rk_rep_short(s, sizeof s, rk_rep_fin(h->count[b]));
        if (strlen(s) * 5.4 + 2 > bw) counts_fit = 0;
    }
    double step = h->tick_step > 0 && isfinite(h->tick_step) ? h->tick_step : nice_step((hi - lo) / 10); /* rounds up: 5 to 10 ticks */
    int digits = h->tick_digits >= 0 ? h->tick_digits : step_digits(step);
    for (int b = 0; b < nb; b++) {
        double c = rk_rep_fin(h->count[b]);
        if (c < 0) c = 0;
        double hh = c / top * PH;
        fprintf(fp, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\">", X0 + b * bw + 0.5,
                BASE - hh, bw > 1.5 ? bw - 1.0 : bw * 0.7, hh, h->colour);
        fprintf(fp, "<title>[%.*f, %.*f): %.0f</title></rect>\n", digits + 2, lo + b * (hi - lo) / nb,
                digits + 2, lo + (b + 1) * (hi - lo) / nb, c);
        char s[RK_REP_LABEL];
        rk_rep_short(s, sizeof s, c);
        if (c > 0 && counts_fit)
            fprintf(fp, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\" font-size=\"9\">%s</text>\n",
                    X0 + (b + 0.5) * bw, BASE - hh - 3, s);
    }
    double first = ceil(lo / step - 1e-9) * step; /* ticks at multiples of the step */
    for (int k = 0; k <= 100; k++) {
        double v = first + k * step;
        if (v > hi + 1e-9 * (hi - lo)) break;
        double x = X0 + (v - lo) / (hi - lo) * PW;
        fprintf(fp, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\"/>\n", x, BASE, x, BASE + 4);
        fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.*f</text>\n", x, BASE + 15, digits,
                fabs(v) < step * 1e-6 ? 0.0 : v);
    }
    if (h->has_mark && h->mark > lo && h->mark < hi) {
        double x = X0 + (h->mark - lo) / (hi - lo) * PW;
        fprintf(fp, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\" stroke-dasharray=\"4 3\"/>\n",
                x, Y0, x, BASE);
    }
    x_base(fp, h->x_title);
    svg_close(fp);
}

void rk_rep_svg_bars(FILE *fp, const rk_rep_bars *b)
{
    int n = b->n < 0 ? 0 : b->n > RK_REP_MAX_BARS ? RK_REP_MAX_BARS : b->n;
    double vmax = 0;
    for (int i = 0; i < n; i++)
        if (isfinite(b->value[i]) && b->value[i] > vmax) vmax = b->value[i];
    double top, ystep;
    zero_scale(vmax, b->integral, &top, &ystep);
    svg_open(fp, FIG_H, b->title);
    y_axis(fp, 0.0, top, ystep, b->y_title);
    double slot = n > 0 ? PW / n : PW;
    double bw = fmin(slot * 0.7, 80.0);
    size_t lw = 1;
    for (int i = 0; i < n; i++) {
        if (b->label != NULL && text_len(b->label[i]) > lw) lw = text_len(b->label[i]);
        if (b->sub != NULL && text_len(b->sub[i]) > lw) lw = text_len(b->sub[i]);
    }
    int every = (int)ceil((lw * CHAR_W + 6) / slot); /* thin out labels that would touch */
    if (every < 1) every = 1;
    for (int i = 0; i < n; i++) {
        double v = rk_rep_fin(b->value[i]);
        if (v < 0) v = 0;
        double hh = v / top * PH, cx = X0 + (i + 0.5) * slot;
        fprintf(fp, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\">", cx - bw / 2, BASE - hh,
                bw, hh, b->colour);
        fputs("<title>", fp);
        if (b->label != NULL) rk_rep_esc(fp, b->label[i]);
        fputs(": ", fp);
        rk_rep_fix(fp, 4, b->value[i]);
        fputs("</title></rect>\n", fp);
        if (b->top != NULL && text_len(b->top[i]) * CHAR_W <= slot) {
            fprintf(fp, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">", cx, BASE - hh - 3);
            rk_rep_esc(fp, b->top[i]);
            fputs("</text>\n", fp);
        }
        if (i % every != 0) continue;
        if (b->label != NULL) {
            fprintf(fp, "<text x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\">", cx, BASE + 14);
            rk_rep_esc(fp, b->label[i]);
            fputs("</text>\n", fp);
        }
        if (b->sub != NULL) {
            fprintf(fp, "<text x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#777\">", cx, BASE + 26);
            rk_rep_esc(fp, b->sub[i]);
            fputs("</text>\n", fp);
        }
    }
    x_base(fp, b->x_title);
    svg_close(fp);
}

void rk_rep_svg_grouped(FILE *fp, const char *title, int ng, const char *const *group, int ns,
                        const char *const *series, const double *value)
{
    if (ng < 0) ng = 0;
    if (ns < 1) ns = 1;
    if (ns > 4) ns = 4;
    double vmax = 0;
    for (int k = 0; k < ng * ns; k++)
        if (isfinite(value[k]) && value[k] > vmax) vmax = value[k];
    double top, ystep;
    zero_scale(vmax * 1.08, 0, &top, &ystep); /* room for the values above the bars */
    svg_open(fp, FIG_H, title);
    for (int s = 0; s < ns; s++) {
        double lx = RK_REP_W - 16 - (ns - s) * 130.0;
        fprintf(fp, "<rect x=\"%.1f\" y=\"7\" width=\"11\" height=\"11\" fill=\"%s\"/>\n", lx,
                rk_rep_palette[s]);
        fprintf(fp, "<text x=\"%.1f\" y=\"16\">", lx + 15);
        rk_rep_esc(fp, series[s]);
        fputs("</text>\n", fp);
    }
    y_axis(fp, 0.0, top, ystep, "mean over folds");
    double slot = ng > 0 ? PW / ng : PW;
    double bw = fmin(slot * 0.8 / ns, 60.0);
    for (int g = 0; g < ng; g++) {
        double left = X0 + g * slot + (slot - ns * bw) / 2;
        for (int s = 0; s < ns; s++) {
            double v = value[g * ns + s], hv = rk_rep_fin(v) > 0 ? rk_rep_fin(v) : 0.0;
            double hh = hv / top * PH, x = left + s * bw;
            fprintf(fp, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"/>\n", x + 1,
                    BASE - hh, bw - 2, hh, rk_rep_palette[s]);
            fprintf(fp, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\" font-size=\"9\">", x + bw / 2,
                    BASE - hh - 3);
            rk_rep_fix(fp, 4, v);
            fputs("</text>\n", fp);
        }
        fprintf(fp, "<text x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\">", X0 + (g + 0.5) * slot, BASE + 14);
        rk_rep_esc(fp, group[g]);
        fputs("</text>\n", fp);
    }
    x_base(fp, NULL);
    svg_close(fp);
}

void rk_rep_svg_stacked(FILE *fp, int n, const char *const *name, const double *sec, double total)
{
    const double x0 = 16, w = RK_REP_W - 32, y = 8, h = 40;
    if (!(total > 0) || !isfinite(total)) total = 1.0;
    svg_open(fp, 84, NULL);
    double at = 0;
    for (int i = 0; i < n; i++) {
        double s = isfinite(sec[i]) && sec[i] > 0 ? sec[i] : 0.0;
        double sx = x0 + at / total * w, sw = s / total * w;
        at += s;
        fprintf(fp, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\" stroke=\"#fff\" "
                    "stroke-width=\"0.5\"><title>",
                sx, y, sw, h, rk_rep_palette[i % RK_REP_PALETTE]);
        rk_rep_esc(fp, name != NULL ? name[i] : NULL);
        fprintf(fp, ": %.3f s</title></rect>\n", s);
        if (sw >= 40)
            fprintf(fp, "<text x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#fff\" font-size=\"11\">"
                        "%.1f%%</text>\n",
                    sx + sw / 2, y + h / 2 + 4, 100.0 * s / total);
    }
    double step = nice_step(total / 6);
    int digits = step_digits(step);
    for (int k = 0; k <= 40; k++) {
        double v = k * step;
        if (v > total * (1 + 1e-9)) break;
        double x = x0 + v / total * w;
        fprintf(fp, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\"/>\n", x, y + h, x,
                y + h + 4);
        fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">%.*f</text>\n", x, y + h + 15,
                k == 0 ? "start" : "middle", digits, v);
    }
    fprintf(fp, "<text x=\"%.1f\" y=\"78\" text-anchor=\"end\">wall seconds (total %.3f)</text>\n", x0 + w, total);
    svg_close(fp);
}

void rk_rep_svg_dots(FILE *fp, const char *title, const char *y_title, int n, const double *v, double mean)
{
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < n; i++)
        if (isfinite(v[i])) lo = fmin(lo, v[i]), hi = fmax(hi, v[i]);
    if (isfinite(mean)) lo = fmin(lo, mean), hi = fmax(hi, mean);
    if (!(hi >= lo)) lo = 0, hi = 1; /* nothing finite */
    double span = hi - lo, pad = span > 0 ? span * 0.3 : fmax(fabs(lo) * 0.05, 1e-3);
    int nonneg = lo >= 0;
    lo -= pad;
    hi += pad;
    if (nonneg && lo < 0) lo = 0;
    double step = nice_step((hi - lo) / 6);
    svg_open(fp, FIG_H, title);
    y_axis(fp, lo, hi, step, y_title);
    if (lo != 0) /* say so: the dots' distances are not to scale with their values */
        fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"9\" fill=\"#777\">the axis starts at %.*f</text>\n",
                X0 + 4, BASE - 4, step_digits(step) + 1, lo);
    double slot = n > 0 ? PW / n : PW;
    if (isfinite(mean)) {
        double my = BASE - (mean - lo) / (hi - lo) * PH;
        fprintf(fp, "<line x1=\"%.1f\" y1=\"%.2f\" x2=\"%.1f\" y2=\"%.2f\" stroke=\"%s\" stroke-dasharray=\"5 3\">"
                    "<title>mean %.4f</title></line>\n",
                X0, my, X0 + PW, my, rk_rep_palette[1], mean);
    }
    int every = (int)ceil(50.0 / slot);
    if (every < 1) every = 1;
    for (int i = 0; i < n; i++) {
        double cx = X0 + (i + 0.5) * slot;
        if (i % every == 0)
            fprintf(fp, "<text x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\">fold %d</text>\n", cx, BASE + 14, i + 1);
        if (!isfinite(v[i])) continue;
        double cy = BASE - (v[i] - lo) / (hi - lo) * PH;
        fprintf(fp, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"4.5\" fill=\"%s\"><title>fold %d: %.4f</title></circle>\n",
                cx, cy, rk_rep_palette[0], i + 1, v[i]);
        if (slot >= 44)
            fprintf(fp, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">%.4f</text>\n", cx, cy - 8, v[i]);
    }
    x_base(fp, NULL);
    svg_close(fp);
}

void rk_rep_svg_curve(FILE *fp, int np, const double *x, const double *y, const double *mark_x,
                      const double *mark_y)
{
    svg_open(fp, FIG_H, "Share of the recommendations taken by the most recommended items");
    y_axis(fp, 0.0, 100.0, 20.0, "% of recommendations");
    for (int k = 0; k <= 10; k++) {
        double px = X0 + k * PW / 10;
        fprintf(fp, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\"/>\n", px, BASE, px,
                BASE + 4);
        fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%d</text>\n", px, BASE + 15, 10 * k);
    }
    fprintf(fp, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#aaa\" stroke-dasharray=\"4 3\"/>\n",
            X0, BASE, X0 + PW, Y0);
    fprintf(fp, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", rk_rep_palette[0]);
    for (int i = 0; i < np; i++)
        fprintf(fp, "%s%.2f,%.2f", i ? " " : "", X0 + rk_rep_fin(x[i]) * PW, BASE - rk_rep_fin(y[i]) * PH);
    fputs("\"/>\n", fp);
    static const char *const what[2] = {"1 %", "10 %"};
    for (int m = 0; m < 2; m++) {
        const char *col = rk_rep_palette[m == 0 ? 2 : 4];
        double mx = rk_rep_fin(mark_x[m]), my = rk_rep_fin(mark_y[m]);
        fprintf(fp, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"4\" fill=\"%s\"/>\n", X0 + mx * PW, BASE - my * PH, col);
        double ly = BASE - 36 + 16 * m;
        fprintf(fp, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/>\n", X0 + PW * 0.5, ly - 4, col);
        fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">top %s of the items: %.2f %% of the "
                    "recommendations</text>\n",
                X0 + PW * 0.5 + 10, ly, what[m], 100.0 * my);
    }
    x_base(fp, "% of the items, most recommended first (dashed: equal shares)");
    svg_close(fp);
}
