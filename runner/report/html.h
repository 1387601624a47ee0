/* html.h: the parts of the HTML report (html.c) kept in their own files: a stage's log as a link
 * and the failures section (html_failures.c). */
#ifndef TIPC_REPORT_HTML_H
#define TIPC_REPORT_HTML_H
#include "report.h"
#include "xml.h"

/* The log at `log_path` (relative to the working folder, or absolute) as an <a href> relative to
 * the folder of the page at `page_path`, so the link works wherever the output folder is copied
 * (a CI artifact, a web server); plain text when the log does not exist. */
void html_log_link(struct xw *h, const char *page_path, const char *log_path);
/* For each failed stage: its name, reason, the line that says why, and the last lines of its
 * log, linked; nothing when none failed. */
void html_failures(struct xw *h, const struct report *r, const char *page_path);

#endif
