/* svg.c: SVG charts and the stage timeline (see svg.h). */
#include "svg.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/check.h"
#include "../../core/banned.h"

#define W 640
#define H 260
#define ML 64   /* margins: room for tick labels */
#define MR 16
#define MT 28
#define MB 40

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
                                      "#7f7f7f"};

static void range(const struct svg_series *s, int ns, bool xaxis, double *lo, double *hi)
{
    *lo = INFINITY, *hi = -INFINITY;
    for (int k = 0; k < ns; k++)
        for (int i = 0; i < s[k].n; i++) {
            double v = xaxis ? s[k].x[i] : s[k].y[i];
            if (!isfinite(v)) continue;
            if (v < *lo) *lo = v;
            if (v > *hi) *hi = v;
        }
    if (!(*lo <= *hi)) *lo = 0, *hi = 1;
    if (*hi - *lo < 1e-12) *lo -= 0.5, *hi += 0.5;
}

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
    xw_attr(h, "y", "18");
    xw_attr(h, "class", "charttitle");
    xw_text(h, title);
    xw_end_full(h);
}

static void plot(struct xw *h, const char *cls, const char *title, const char *xlabel, const char *ylabel,
                 const struct svg_series *s, int ns, bool y_from_zero)
{
    double x0, x1, y0, y1;
    range(s, ns, true, &x0, &x1);
    range(s, ns, false, &y0, &y1);
    if (y_from_zero && y0 > 0) y0 = 0;
    double pw = W - ML - MR, ph = H - MT - MB;
    svg_open(h, cls, W, H, title);
    line(h, ML, MT + ph, ML + pw, MT + ph, "#333");
    line(h, ML, MT, ML, MT + ph, "#333");
    char buf[64];
    for (int t = 0; t <= 4; t++) { /* 5 ticks on each axis */
        double fy = y0 + (y1 - y0) * t / 4, py = MT + ph - ph * t / 4;
        double fx = x0 + (x1 - x0) * t / 4, px = ML + pw * t / 4;
        line(h, ML - 4, py, ML + pw, py, "#e4e4e4");
        snprintf(buf, sizeof buf, "%.4g", fy);
        text_at(h, ML - 6, py + 4, "end", buf);
        snprintf(buf, sizeof buf, "%.4g", fx);
        text_at(h, px, MT + ph + 16, "middle", buf);
    }
    text_at(h, ML + pw / 2, H - 6, "middle", xlabel);
    text_at(h, 12, MT - 8, "start", ylabel);
    for (int k = 0; k < ns; k++) {
        const char *color = palette[k % (int)(sizeof palette / sizeof palette[0])];
        size_t cap = (size_t)s[k].n * 24 + 1, len = 0;
        char *pts = xmalloc(cap);
        pts[0] = 0;
        for (int i = 0; i < s[k].n; i++) {
            if (!isfinite(s[k].x[i]) || !isfinite(s[k].y[i])) continue;
            double px = ML + pw * (s[k].x[i] - x0) / (x1 - x0), py = MT + ph - ph * (s[k].y[i] - y0) / (y1 - y0);
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
        double ly = MT + 4 + 14 * k; /* legend, top right */
        xw_start(h, "rect");
        xw_attrf(h, "x", "%d", W - MR - 120);
        xw_attrf(h, "y", "%.1f", ly);
        xw_attr(h, "width", "10");
        xw_attr(h, "height", "10");
        xw_attr(h, "fill", color);
        xw_end(h);
        text_at(h, W - MR - 106, ly + 9, "start", s[k].label);
    }
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
    double pw = W - ML - MR;
    svg_open(h, "timeline", W, hgt, "stage timeline (seconds since the run started)");
    char buf[64];
    for (int t = 0; t <= 4; t++) {
        double px = ML + pw * t / 4;
        line(h, px, MT, px, MT + 16 * rows, "#e4e4e4");
        snprintf(buf, sizeof buf, "%.4g", (t1 - t0) * t / 4);
        text_at(h, px, MT + 16 * rows + 16, "middle", buf);
    }
    for (int i = 0; i < r->n; i++) {
        const struct report_case *c = &r->c[i];
        double s = c->started > t0 ? c->started - t0 : 0;
        double x = ML + pw * s / (t1 - t0), w = pw * c->seconds / (t1 - t0);
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
