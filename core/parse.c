/* parse.c: see parse.h. */
#include "parse.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

bool parse_long(const char *s, long min, long max, long *out)
{
    if (!s || !*s) return false;
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < min || v > max) return false;
    *out = v;
    return true;
}

bool parse_int(const char *s, int min, int max, int *out)
{
    long v;
    if (!parse_long(s, min, max, &v)) return false;
    *out = (int)v;
    return true;
}

bool parse_double(const char *s, double *out)
{
    if (!s || !*s) return false;
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v)) return false;
    *out = v;
    return true;
}

bool parse_bool(const char *s, bool *out)
{
    if (!s) return false;
    if (!strcasecmp(s, "true") || !strcasecmp(s, "t") || !strcmp(s, "1")) { *out = true; return true; }
    if (!strcasecmp(s, "false") || !strcasecmp(s, "f") || !strcmp(s, "0")) { *out = false; return true; }
    return false;
}
