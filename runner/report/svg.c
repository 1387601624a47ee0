/* svg.c: SVG charts and the stage timeline (see svg.h). */
#include "svg.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/check.h"
#include "../../core/banned.h"

#define W 720
#define H 280
#define ML 64       /* room for the y tick labels, and the y axis' name turned on its side */
#define MT 30       /* the title's line */
#define MB 44       /* x tick labels, then the x axis' name */
#define LEGEND 150  /* the legend's column, right of the plot: it never covers a line */
#define MR 12       /* right of a chart without a legend (the timeline) */
#define ROW 14      /* a legend row */
#define TICKS 5     /* about this many ticks on an axis */

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
                                      "#7f7f7f"};

static void range(const struct svg_series *s, int ns, bool xaxis, double *lo, double *hi, bool *integral)
{
    *lo = INFINITY, *hi = -INFINITY, *integral = true;
    for (int k = 0; k < ns; k++)
        for (int i = 0; i < s[k].n; i++) {
            double v = xaxis ? s[k].x[i] : s[k].y[i];
            if (!isfinite(v)) continue;
            if (v < *lo) *lo = v;
            if (v > *hi) *hi = v;
            if (v != floor(v)) *integral = false;
        }
    if (!(*lo <= *hi)) *lo = 0, *hi = 1;
}

/* An axis with "nice" ticks: steps of 1, 2 or 5 times a power of ten (about TICKS of them), from a
 * multiple of the step at or below lo to one at or above hi, so the first and last ticks are the
 * axis' ends. integral: the values are counts (steps, ranks), so is the step. */
struct axis { double lo, hi, step; int decimals; };

static struct axis nice_axis(double lo, double hi, bool integral)
{
    if (hi - lo < 1e-12 * (fabs(hi) + 1)) lo -= integral ? 1 : 0.5, hi += integral ? 1 : 0.5;
    double raw = (hi - lo) / TICKS, p = pow(10, floor(log10(raw))), f = raw / p;
    double step = (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * p;
    if (integral && step < 1) step = 1;
    struct axis a = {floor(lo / step + 1e-9) * step, ceil(hi / step - 1e-9) * step, step, 0};
    if (a.hi <= a.lo) a.hi = a.lo + step;
    a.decimals = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
    return a;
}

static void tick_label(char *buf, size_t n, const struct axis *a, int t)
{
    double v = a->lo + a->step * t;
    if (fabs(v) < a->step * 1e-6) v = 0;   /* no "-0" */
    snprintf(buf, n, "%.*f", a->decimals, v);
}

static int tick_count(const struct axis *a) { return (int)floor((a->hi - a->lo) / a->step + 0.5); }

static void text_at(struct xw *h, double x, double y, const char *anchor, const char *s)
{
    xw_start(h, "text");
    xw_attrf(h, "x", "%.1f", x);
    xw_attrf(h, "y", "%.1f", y);
    if (anchor) xw_attr(h, "text-anchor", anchor);
    xw_text(h, s);
    xw_end_full(h);
}

static void line(struct xw *h, double x1, double y1, double x2, double y2, const char *stroke)
{
    xw_start(h, "line");
    xw_attrf(h, "x1", "%.1f", x1);
    xw_attrf(h, "y1", "%.1f", y1);
    xw_attrf(h, "x2", "%.1f", x2);
    xw_attrf(h, "y2", "%.1f", y2);
    xw_attr(h, "stroke", stroke);
    xw_end(h);
}

static void svg_open(struct xw *h, const char *cls, int w, int hgt, const char *title)
{
    xw_start(h, "svg");
    xw_attr(h, "xmlns", "http://www.w3.org/2000/svg");
    xw_attr(h, "class", cls);
    xw_attrf(h, "width", "%d", w);
    xw_attrf(h, "height", "%d", hgt);
    xw_attrf(h, "viewBox", "0 0 %d %d", w, hgt);
    xw_attr(h, "role", "img");
    xw_start(h, "title");
    xw_text(h, title);
    xw_end_full(h);
    xw_start(h, "text");
    xw_attr(h, "x", "8");
    xw_attr(h, "y", "16");
    xw_attr(h, "class", "charttitle");
    xw_text(h, title);
    xw_end_full(h);
}

/* The legend, in its own column right of the plot, one row per series; what does not fit is
 * counted in a last row. */
static void legend(struct xw *h, const struct svg_series *s, int ns, double x, double top, double height)
{
    int rows = (int)(height / ROW), shown = ns <= rows ? ns : rows - 1;
    for (int k = 0; k < shown; k++) {
        double ly = top + ROW * k;
        xw_start(h, "rect");
        xw_attrf(h, "x", "%.1f", x);
        xw_attrf(h, "y", "%.1f", ly + 1);
        xw_attr(h, "width", "10");
        xw_attr(h, "height", "10");
        xw_attr(h, "fill", palette[k % (int)(sizeof palette / sizeof palette[0])]);
        xw_end(h);
        text_at(h, x + 14, ly + 10, "start", s[k].label);
    }
    if (shown < ns) {
        char more[48];
        snprintf(more, sizeof more, "and %d more", ns - shown);
        text_at(h, x + 14, top + ROW * shown + 10, "start", more);
    }
}

static void plot(struct xw *h, const char *cls, const char *title, const char *xlabel, const char *ylabel,
                 const struct svg_series *s, int ns, bool y_from_zero)
{
    double x0, x1, y0, y1;
    bool xint, yint;
    range(s, ns, true, &x0, &x1, &xint);
    range(s, ns, false, &y0, &y1, &yint);
    if (y_from_zero && y0 > 0) y0 = 0;
    struct axis ax = nice_axis(x0, x1, xint), ay = nice_axis(y0, y1, yint);
    double pw = W - ML - LEGEND, ph = H - MT - MB, bottom = MT + ph;
    svg_open(h, cls, W, H, title);
    char buf[64];
    for (int t = 0, n = tick_count(&ay); t <= n; t++) {
        double py = bottom - ph * t / n;
        line(h, ML - 4, py, ML + pw, py, "#e4e4e4");
        tick_label(buf, sizeof buf, &ay, t);
        text_at(h, ML - 6, py + 4, "end", buf);
    }
    for (int t = 0, n = tick_count(&ax); t <= n; t++) {
        double px = ML + pw * t / n;
        line(h, px, bottom, px, bottom + 4, "#333");
        tick_label(buf, sizeof buf, &ax, t);
        text_at(h, px, bottom + 16, "middle", buf);
    }
    line(h, ML, bottom, ML + pw, bottom, "#333");
    line(h, ML, MT, ML, bottom, "#333");
    text_at(h, ML + pw / 2, H - 8, "middle", xlabel);
    xw_start(h, "text");   /* the y axis' name, turned on its side beside the tick labels */
    xw_attrf(h, "transform", "rotate(-90 14 %.1f)", MT + ph / 2);
    xw_attr(h, "x", "14");
    xw_attrf(h, "y", "%.1f", MT + ph / 2);
    xw_attr(h, "text-anchor", "middle");
    xw_text(h, ylabel);
    xw_end_full(h);
    for (int k = 0; k < ns; k++) {
        const char *color = palette[k % (int)(sizeof palette / sizeof palette[0])];
        size_t cap = (size_t)s[k].n * 24 + 1, len = 0;
        char *pts = xmalloc(cap);
        pts[0] = 0;
        for (int i = 0; i < s[k].n; i++) {
            if (!isfinite(s[k].x[i]) || !isfinite(s[k].y[i])) continue;
            double px = ML + pw * (s[k].x[i] - ax.lo) / (ax.hi - ax.lo);
            double py = bottom - ph * (s[k].y[i] - ay.lo) / (ay.hi - ay.lo);
            if (s[k].points) {
                xw_start(h, "circle");
                xw_attrf(h, "cx", "%.1f", px);
                xw_attrf(h, "cy", "%.1f", py);
                xw_attr(h, "r", "4");
                xw_attr(h, "fill", color);
                xw_end(h);
            } else {
                int m = snprintf(pts + len, cap - len, "%.1f,%.1f ", px, py);
                if (m > 0 && (size_t)m < cap - len) len += (size_t)m;
            }
        }
        if (!s[k].points && len) {
            xw_start(h, "polyline");
            xw_attr(h, "class", cls);
            xw_attr(h, "fill", "none");
            xw_attr(h, "stroke", color);
            xw_attr(h, "stroke-width", "1.5");
            xw_attr(h, "points", pts);
            xw_end(h);
        }
        free(pts);
    }
    legend(h, s, ns, ML + pw + 16, MT, ph);
    xw_end_full(h);
}

void svg_timeline(struct xw *h, const struct report *r)
{
    double t0 = r->started, t1 = t0 + 1e-3;
    for (int i = 0; i < r->n; i++) {
        double e = r->c[i].started + r->c[i].seconds;
        if (r->c[i].started > 0 && e > t1) t1 = e;
    }
    int rows = r->n, hgt = MT + 16 * rows + MB;
    double pw = W - ML - MR - 24;   /* half a tick label of room right of the last tick */
    struct axis ax = nice_axis(0, t1 - t0, false);
    svg_open(h, "timeline", W, hgt, "stage timeline (seconds since the run started)");
    char buf[64];
    for (int t = 0, n = tick_count(&ax); t <= n; t++) {
        double px = ML + pw * t / n;
        line(h, px, MT, px, MT + 16 * rows, "#e4e4e4");
        tick_label(buf, sizeof buf, &ax, t);
        text_at(h, px, MT + 16 * rows + 16, "middle", buf);
    }
    for (int i = 0; i < r->n; i++) {
        const struct report_case *c = &r->c[i];
        double s = c->started > t0 ? c->started - t0 : 0;
        double x = ML + pw * s / ax.hi, w = pw * c->seconds / ax.hi;
        const char *fill = c->outcome == CASE_PASSED ? "#2ca02c" : c->outcome == CASE_FAILED ? "#d62728" : "#bbbbbb";
        xw_start(h, "rect");
        xw_attrf(h, "x", "%.1f", x);
        xw_attrf(h, "y", "%d", MT + 16 * i + 2);
        xw_attrf(h, "width", "%.1f", w < 2 ? 2 : w);
        xw_attr(h, "height", "12");
        xw_attr(h, "fill", fill);
        xw_start(h, "title");
        xw_textf(h, "%d %s[%s]: %s, %.1f s", i + 1, c->kind, c->matrix,
                 c->outcome == CASE_PASSED ? "passed" : c->outcome == CASE_FAILED ? "failed" : "skipped", c->seconds);
        xw_end_full(h);
        xw_end_full(h);
        snprintf(buf, sizeof buf, "%d %s", i + 1, c->kind);
        text_at(h, ML - 6, MT + 16 * i + 12, "end", buf);
    }
    xw_end_full(h);
}

void svg_plot(struct xw *h, const char *cls, const char *title, const char *xlabel, const char *ylabel,
              const struct svg_series *s, int ns)
{
    plot(h, cls, title, xlabel, ylabel, s, ns, false);
}

void svg_plot_from_zero(struct xw *h, const char *cls, const char *title, const char *xlabel, const char *ylabel,
                        const struct svg_series *s, int ns)
{
    plot(h, cls, title, xlabel, ylabel, s, ns, true);
}
