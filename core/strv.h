/* strv.h: a growable vector of malloc'ed strings, kept NULL-terminated (an argv or envp as execve
 * takes it), git's strvec: the one way tipc holds a list of strings it owns (host lists, addresses,
 * split flag values, a rank's environment). */
#ifndef TIPC_STRV_H
#define TIPC_STRV_H
#include <stdbool.h>
#include <stddef.h>

struct strv {
    char **v;      /* v[n] == NULL once anything was pushed; NULL before */
    size_t n, cap;
};
#define STRV_INIT {NULL, 0, 0}

void strv_push(struct strv *s, const char *str);  /* a copy of str */
void strv_push_owned(struct strv *s, char *str);  /* str itself (malloc'ed), now the vector's */
void strv_pushf(struct strv *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append the fields of str split on sep; empty fields are kept only when keep_empty. */
void strv_split(struct strv *s, const char *str, char sep, bool keep_empty);
/* Environment blocks: kv is "NAME=value" (owned); it replaces the entry for NAME, or is appended. */
void strv_setenv(struct strv *s, char *kv);
/* v[0..n) (n < 0: up to the NULL) joined with sep, malloc'ed. */
char *strv_join(char *const *v, long n, const char *sep);
/* The array, NULL-terminated even when empty (then one NULL), now the caller's (strv_free); s is
 * back to STRV_INIT. */
char **strv_detach(struct strv *s);
/* Free the strings and the array; back to STRV_INIT. */
void strv_clear(struct strv *s);
/* Free a NULL-terminated vector of malloc'ed strings (one a strv handed out, launch_host_addrs'). */
void strv_free(char **v);

#endif
