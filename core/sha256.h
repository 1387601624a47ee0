/* sha256.h: SHA-256, the one hash of tipc, through OpenSSL's libcrypto (EVP; the binary links it
 * already for the launcher's HMAC): downloads checked before use (prepare/fetch.c), the config's
 * digest (runner/plan/config.c, for `tipc run`'s job id), the launcher's job fingerprint
 * (runner/launch/secret.c). Test vectors: tests/unit/test_fetch.c. */
#ifndef TIPC_SHA256_H
#define TIPC_SHA256_H
#include <stddef.h>
#include "status.h"

#define SHA256_BYTES 32

struct sha256 { void *ctx; /* EVP_MD_CTX *, from sha256_init until the final call */ };

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t n);
/* Finish (and free the context): the digest's bytes, or 64 lower-case hex chars + NUL. */
void sha256_final(struct sha256 *s, unsigned char md[SHA256_BYTES]);
void sha256_final_hex(struct sha256 *s, char hex[65]);
/* The digest of n bytes as hex, in one call. */
void sha256_hex(const void *data, size_t n, char hex[65]);
/* Hash a whole file into hex[65]. TIPC_EIO (message printed) when it cannot be read. */
enum tipc_status sha256_file(const char *path, char hex[65]);
/* True when s is 64 hex digits (either case). */
int sha256_is_hex(const char *s);

#endif
