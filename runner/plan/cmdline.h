/* cmdline.h: turn a TIPC command string into argv + redirections WITHOUT a shell.
 *
 * The original runs `eval $cmd`; we accept the subset of shell syntax its command strings use and
 * refuse the rest with a message, so no config value is ever interpreted by a shell:
 *   - words split on blanks; '...' and "..." quoting and backslash escapes (quotes removed)
 *   - leading NAME=value words: environment for the command
 *   - redirections [N]>FILE, [N]>>FILE, [N]>&M, &>FILE (N, M in 1..2), in order, as bash applies them
 *   - a leading '~' or '~/' expands to $HOME
 * Refused (error names the character): | & ; < ( ) ` $ , '#' starting a word (a comment), and
 * brace expansion {a,b}. Glob characters (* ? [) are passed literally: bash would expand them only
 * if files matched, which real configs never rely on. */
#ifndef TIPC_CMDLINE_H
#define TIPC_CMDLINE_H
#include <stddef.h>
#include "../../core/status.h"
#include "../../core/spawn.h" /* defines: struct redirect, enum redir_kind */


struct cmdline {
    char **argv;         /* (argc + 1), NULL-terminated */
    int argc;
    char **env;          /* (nenv) "NAME=value" assignments that preceded the command */
    int nenv;
    struct redirect *redir; /* (nredir) in order */
    int nredir;
};

/* Parse `s`. On failure returns TIPC_EUSAGE, writes a message (without location) into err, and
 * sets *bad_char to the offending character (0 if none) so the caller can find the config line. */
enum tipc_status cmdline_parse(const char *s, struct cmdline *out, char *err, size_t errlen, char *bad_char);
void cmdline_free(struct cmdline *c);

#endif
