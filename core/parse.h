/* parse.h: checked number/bool parsing (strtol/strtod + end pointer + range), never atoi. */
#ifndef TIPC_PARSE_H
#define TIPC_PARSE_H
#include <stdbool.h>

/* Each returns true and sets *out only when the whole string is a valid value in range. */
bool parse_long(const char *s, long min, long max, long *out);
bool parse_int(const char *s, int min, int max, int *out);
bool parse_double(const char *s, double *out);
/* Python's str2bool of the Step6 scripts: "true"/"t"/"1" (any case) are true, "false"/"f"/"0"
 * false; anything else is rejected (stricter than the original, which maps it to false). */
bool parse_bool(const char *s, bool *out);

#endif
