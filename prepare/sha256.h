/* sha256.h: SHA-256 (FIPS 180-4), streaming, for verifying downloads before they are used.
 * Our own small implementation (no OpenSSL dependency); test vectors in tests/unit/test_fetch.c. */
#ifndef TIPC_SHA256_H
#define TIPC_SHA256_H
#include <stddef.h>
#include <stdint.h>
#include "../core/status.h"

struct sha256 {
    uint32_t h[8];
    uint64_t len;        /* bytes hashed so far */
    uint8_t buf[64];     /* pending partial block */
    size_t nbuf;
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t n);
/* Finish and write the digest as 64 lower-case hex chars + NUL into hex[65]. */
void sha256_final_hex(struct sha256 *s, char hex[65]);
/* Hash a whole file into hex[65]. TIPC_EIO (message printed) when it cannot be read. */
enum tipc_status sha256_file(const char *path, char hex[65]);
/* True when s is 64 hex digits (either case). */
int sha256_is_hex(const char *s);

#endif
