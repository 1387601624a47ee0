/* report_html.h: the single-file HTML report of a run (OUTPUT/tipc/report.html), readable offline:
 * the verdict, the stage table, a stage timeline, and for each training stage its loss, accuracy
 * and throughput curves per rank as inline SVG (no script, no network). Built from the report
 * and the run's metrics file; written with libxml2's writer (every string cleaned, xml_text.h). */
#ifndef TIPC_REPORT_HTML_H
#define TIPC_REPORT_HTML_H
#include <libxml/xmlwriter.h>
#include <stdbool.h>
#include "report.h"

enum tipc_status report_html(const struct report *r, const char *metrics_path, const char *path);

/* ---- internals shared by report_html.c and report_svg.c ---- */

/* The writer and a sticky failure flag (every libxml2 call returns < 0 on failure). */
struct hw { xmlTextWriterPtr w; int bad; };
void hw_start(struct hw *h, const char *el);
void hw_end(struct hw *h);                         /* </el>, never <el/> (HTML) */
void hw_end_empty(struct hw *h);                   /* <el/>: void HTML elements and SVG */
void hw_attr(struct hw *h, const char *name, const char *value);
void hw_attrf(struct hw *h, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void hw_text(struct hw *h, const char *raw);       /* cleaned, then escaped */
void hw_textf(struct hw *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

struct svg_series {
    const char *label;
    const double *x, *y;
    int n;
    bool points;       /* dots (eval results) instead of a line */
};
/* A line chart with axes, ticks and a legend; `cls` names the <svg> (e.g. "loss"). */
void svg_plot(struct hw *h, const char *cls, const char *title, const char *xlabel, const char *ylabel,
              const struct svg_series *s, int ns);
/* The same with the y axis from 0 (lower only for negative values): for quantities read by their
 * size (throughput, efficiency), which an axis starting elsewhere would exaggerate the differences of. */
void svg_plot_from_zero(struct hw *h, const char *cls, const char *title, const char *xlabel, const char *ylabel,
                        const struct svg_series *s, int ns);
/* Stages as bars on a time axis, coloured by outcome. */
void svg_timeline(struct hw *h, const struct report *r);

#endif
