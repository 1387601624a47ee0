/* sha256.c: see sha256.h. */
#include "sha256.h"

#include <ctype.h>
#include <errno.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "banned.h"

void sha256_init(struct sha256 *s)
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (!ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) BUG("SHA-256 unavailable (libcrypto)");
    s->ctx = ctx;
}

void sha256_update(struct sha256 *s, const void *data, size_t n)
{
    if (n && !EVP_DigestUpdate(s->ctx, data, n)) BUG("SHA-256 update failed (libcrypto)");
}

void sha256_final(struct sha256 *s, unsigned char md[SHA256_BYTES])
{
    unsigned int ml = 0;
    if (!EVP_DigestFinal_ex(s->ctx, md, &ml) || ml != SHA256_BYTES) BUG("SHA-256 final failed (libcrypto)");
    EVP_MD_CTX_free(s->ctx);
    s->ctx = NULL;
}

void sha256_final_hex(struct sha256 *s, char hex[65])
{
    unsigned char md[SHA256_BYTES];
    sha256_final(s, md);
    for (int i = 0; i < SHA256_BYTES; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
}

void sha256_hex(const void *data, size_t n, char hex[65])
{
    struct sha256 s;
    sha256_init(&s);
    sha256_update(&s, data, n);
    sha256_final_hex(&s, hex);
}

enum tipc_status sha256_file(const char *path, char hex[65])
{
    FILE *f = fopen(path, "rb");
    if (!f) return error_msg(TIPC_EIO, "cannot open '%s': %s", path, strerror(errno));
    struct sha256 s;
    sha256_init(&s);
    static _Thread_local uint8_t buf[1 << 16];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) sha256_update(&s, buf, n);
    int bad = ferror(f);
    fclose(f);
    sha256_final_hex(&s, hex);
    if (bad) return error_msg(TIPC_EIO, "cannot read '%s'", path);
    return TIPC_OK;
}

int sha256_is_hex(const char *s)
{
    size_t i = 0;
    for (; s[i]; i++)
        if (!isxdigit((unsigned char)s[i])) return 0;
    return i == 64;
}
