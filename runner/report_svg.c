/* report_svg.c: the report's inline SVG charts (see report_html.h). */
#include "report_html.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/check.h"
#include "../core/banned.h"

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

static void text_at(struct hw *h, double x, double y, const char *anchor, const char *s)
{
    hw_start(h, "text");
    hw_attrf(h, "x", "%.1f", x);
    hw_attrf(h, "y", "%.1f", y);
    if (anchor) hw_attr(h, "text-anchor", anchor);
    hw_text(h, s);
    hw_end(h);
}

static void line(struct hw *h, double x1, double y1, double x2, double y2, const char *stroke)
{
    hw_start(h, "line");
    hw_attrf(h, "x1", "%.1f", x1);
    hw_attrf(h, "y1", "%.1f", y1);
    hw_attrf(h, "x2", "%.1f", x2);
    hw_attrf(h, "y2", "%.1f", y2);
    hw_attr(h, "stroke", stroke);
    hw_end_empty(h);
}

static void svg_open(struct hw *h, const char *cls, int w, int hgt, const char *title)
{
    hw_start(h, "svg");
    hw_attr(h, "xmlns", "http://www.w3.org/2000/svg");
    hw_attr(h, "class", cls);
    hw_attrf(h, "width", "%d", w);
    hw_attrf(h, "height", "%d", hgt);
    hw_attrf(h, "viewBox", "0 0 %d %d", w, hgt);
    hw_attr(h, "role", "img");
    hw_start(h, "title");
    hw_text(h, title);
    hw_end(h);
    hw_start(h, "text");
    hw_attr(h, "x", "8");
    hw_attr(h, "y", "18");
    hw_attr(h, "class", "charttitle");
    hw_text(h, title);
    hw_end(h);
}

static void plot(struct hw *h, const char *cls, const char *title, const char *xlabel, const char *ylabel,
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
                hw_start(h, "circle");
                hw_attrf(h, "cx", "%.1f", px);
                hw_attrf(h, "cy", "%.1f", py);
                hw_attr(h, "r", "4");
                hw_attr(h, "fill", color);
                hw_end_empty(h);
            } else {
                int m = snprintf(pts + len, cap - len, "%.1f,%.1f ", px, py);
                if (m > 0 && (size_t)m < cap - len) len += (size_t)m;
            }
        }
        if (!s[k].points && len) {
            hw_start(h, "polyline");
            hw_attr(h, "class", cls);
            hw_attr(h, "fill", "none");
            hw_attr(h, "stroke", color);
            hw_attr(h, "stroke-width", "1.5");
            hw_attr(h, "points", pts);
            hw_end_empty(h);
        }
        free(pts);
        double ly = MT + 4 + 14 * k; /* legend, top right */
        hw_start(h, "rect");
        hw_attrf(h, "x", "%d", W - MR - 120);
        hw_attrf(h, "y", "%.1f", ly);
        hw_attr(h, "width", "10");
        hw_attr(h, "height", "10");
        hw_attr(h, "fill", color);
        hw_end_empty(h);
        text_at(h, W - MR - 106, ly + 9, "start", s[k].label);
    }
    hw_end(h);
}

void svg_timeline(struct hw *h, const struct report *r)
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
        hw_start(h, "rect");
        hw_attrf(h, "x", "%.1f", x);
        hw_attrf(h, "y", "%d", MT + 16 * i + 2);
        hw_attrf(h, "width", "%.1f", w < 2 ? 2 : w);
        hw_attr(h, "height", "12");
        hw_attr(h, "fill", fill);
        hw_start(h, "title");
        hw_textf(h, "%d %s[%s]: %s, %.1f s", i + 1, c->kind, c->matrix,
                 c->outcome == CASE_PASSED ? "passed" : c->outcome == CASE_FAILED ? "failed" : "skipped", c->seconds);
        hw_end(h);
        hw_end(h);
        snprintf(buf, sizeof buf, "%d %s", i + 1, c->kind);
        text_at(h, ML - 6, MT + 16 * i + 12, "end", buf);
    }
    hw_end(h);
}

void svg_plot(struct hw *h, const char *cls, const char *title, const char *xlabel, const char *ylabel,
              const struct svg_series *s, int ns)
{
    plot(h, cls, title, xlabel, ylabel, s, ns, false);
}

void svg_plot_from_zero(struct hw *h, const char *cls, const char *title, const char *xlabel, const char *ylabel,
                        const struct svg_series *s, int ns)
{
    plot(h, cls, title, xlabel, ylabel, s, ns, true);
}
