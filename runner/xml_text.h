/* xml_text.h: arbitrary bytes (a stage's log, a command, a host name) made into text that any XML
 * 1.0 parser accepts, so one hostile byte in a log can never cost a CI server the whole report.
 *
 * The result is valid UTF-8 holding only XML 1.0 characters (#x9 #xA #xD #x20-#xD7FF
 * #xE000-#xFFFD #x10000-#x10FFFF):
 *  - each byte that does not start a well-formed UTF-8 sequence (stray continuation bytes,
 *    overlong forms, surrogates, values past U+10FFFF, a sequence cut short) becomes U+FFFD;
 *    U+FFFE and U+FFFF become U+FFFD as well;
 *  - terminal colour/cursor sequences (ESC [ ... final byte) are dropped: they are noise in a CI page;
 *  - other control characters XML forbids (NUL, ESC, form feed, ...) are written as the visible
 *    text `\xNN`.
 * The writer (libxml2) then escapes <, >, & and quotes. */
#ifndef TIPC_XML_TEXT_H
#define TIPC_XML_TEXT_H
#include <stdbool.h>
#include <stddef.h>

/* Clean n bytes of s (which may hold NULs). Returns a malloc'ed NUL-terminated string. */
char *xml_text_clean(const char *s, size_t n);
/* Same for a C string; NULL gives "". */
char *xml_text_clean_str(const char *s);

/* The last `max` bytes of the file at `path`, cleaned. The cut is moved forward to the start of a
 * character (never half a multibyte character) and, when one begins near the cut, to the start of a line.
 * *cut is set when the file was longer. NULL when the file cannot be read. */
char *xml_text_file_tail(const char *path, size_t max, bool *cut);

#endif
