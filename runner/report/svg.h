/* svg.h: SVG charts drawn with the XML writer (xml.h): line charts for the HTML report's
 * training curves and for `tipc bench scaling`'s chart, and the HTML report's stage timeline. */
#ifndef TIPC_REPORT_SVG_H
#define TIPC_REPORT_SVG_H
#include <stdbool.h>
#include "report.h"
#include "xml.h"

struct svg_series {
    const char *label;
    const double *x, *y;
    int n;
    bool points;       /* dots (eval results) instead of a line */
};
/* A line chart with axes, ticks and a legend; `cls` names the <svg> (e.g. "loss"). */
void svg_plot(struct xw *h, const char *cls, const char *title, const char *xlabel, const char *ylabel,
              const struct svg_series *s, int ns);
/* The same with the y axis from 0 (lower only for negative values): for quantities read by their
 * size (throughput, efficiency), which an axis starting elsewhere would exaggerate the differences of. */
void svg_plot_from_zero(struct xw *h, const char *cls, const char *title, const char *xlabel, const char *ylabel,
                        const struct svg_series *s, int ns);
/* Stages as bars on a time axis, coloured by outcome. */
void svg_timeline(struct xw *h, const struct report *r);

#endif
