/* test_fetch.c: core/sha256 (libcrypto) against FIPS 180-2 vectors, and fetch_file over file:// URLs
 * (verified copy, cache hit, wrong sha256, missing source, missing sha256). HTTP behaviour
 * (404, resume, timeouts, redirects) is covered by tests/e2e/test_prepare_http.sh against a
 * real local server. */
#include "testutil.h"
#include <sys/stat.h>
#include "../../prepare/fetch.h"
#include "../../core/sha256.h"

static void hex_of(const char *msg, size_t n, size_t repeat, char out[65])
{
    struct sha256 s;
    sha256_init(&s);
    for (size_t i = 0; i < repeat; i++) sha256_update(&s, msg, n);
    sha256_final_hex(&s, out);
}

static void test_sha256_vectors(void **state)
{
    char h[65];
    hex_of("", 0, 1, h);
    assert_string_equal(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    hex_of("abc", 3, 1, h);
    assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    hex_of(m, strlen(m), 1, h);
    assert_string_equal(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    hex_of("a", 1, 1000000, h);   /* one byte at a time exercises the partial-block path */
    assert_string_equal(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    assert_true(sha256_is_hex("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
    assert_false(sha256_is_hex("cdc76e5c"));
    assert_false(sha256_is_hex("zdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
}

struct fx { char dir[256]; char src[300]; char url[320]; char sha[65]; };

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "%s/tipc-fetch-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(f->dir)) return -1;
    snprintf(f->src, sizeof f->src, "%s/source.bin", f->dir);
    FILE *fp = fopen(f->src, "wb");
    for (int i = 0; i < 100000; i++) fputc((i * 7919) & 0xff, fp);
    fclose(fp);
    snprintf(f->url, sizeof f->url, "file://%s", f->src);
    sha256_file(f->src, f->sha);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "%s/out", f->dir);
    unlink(cmd);
    unlink(f->src);
    snprintf(cmd, sizeof cmd, "%s/out.part", f->dir);
    unlink(cmd);
    rmdir(f->dir);
    free(f);
    return 0;
}

static struct fetch_opts quiet_opts(void)
{
    struct fetch_opts o;
    fetch_opts_default(&o);
    o.quiet = true;
    o.retries = 0;
    return o;
}

static void test_fetch_file_url_verified_then_cached(void **state)
{
    struct fx *f = *state;
    struct fetch_opts o = quiet_opts();
    char dest[300], h[65];
    snprintf(dest, sizeof dest, "%s/out", f->dir);
    bool dl = false;
    assert_int_equal(fetch_file(f->url, f->sha, dest, &o, &dl), TIPC_OK);
    assert_true(dl);
    assert_int_equal(sha256_file(dest, h), TIPC_OK);
    assert_string_equal(h, f->sha);
    /* the source disappears: the verified copy is used, nothing is fetched */
    unlink(f->src);
    assert_int_equal(fetch_file(f->url, f->sha, dest, &o, &dl), TIPC_OK);
    assert_false(dl);
}

static void test_fetch_wrong_sha256_deletes_download(void **state)
{
    struct fx *f = *state;
    struct fetch_opts o = quiet_opts();
    char dest[300], part[310];
    snprintf(dest, sizeof dest, "%s/out", f->dir);
    snprintf(part, sizeof part, "%s.part", dest);
    char bad[65];
    memcpy(bad, f->sha, 65);
    bad[0] = bad[0] == '0' ? '1' : '0';
    struct capture c;
    capture_stderr_begin(&c);
    enum tipc_status st = fetch_file(f->url, bad, dest, &o, NULL);
    char *err = capture_stderr_end(&c);
    assert_int_equal(st, TIPC_EDATA);
    assert_non_null(strstr(err, "sha256 mismatch"));
    assert_non_null(strstr(err, f->url));
    free(err);
    assert_int_equal(access(dest, F_OK), -1);
    assert_int_equal(access(part, F_OK), -1);
}

static void test_fetch_missing_source_and_missing_sha(void **state)
{
    struct fx *f = *state;
    struct fetch_opts o = quiet_opts();
    char dest[300], url[400];
    snprintf(dest, sizeof dest, "%s/out", f->dir);
    snprintf(url, sizeof url, "file://%s/nope.bin", f->dir);
    struct capture c;
    capture_stderr_begin(&c);
    enum tipc_status st = fetch_file(url, f->sha, dest, &o, NULL);
    enum tipc_status st2 = fetch_file(f->url, NULL, dest, &o, NULL);
    enum tipc_status st3 = fetch_file("gopher://example/x", f->sha, dest, &o, NULL);
    char *err = capture_stderr_end(&c);
    assert_int_equal(st, TIPC_EDATA);
    assert_int_equal(st2, TIPC_EDATA);
    assert_int_equal(st3, TIPC_EDATA);
    assert_non_null(strstr(err, "nope.bin"));
    assert_non_null(strstr(err, "no valid sha256"));
    free(err);
    assert_int_equal(access(dest, F_OK), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256_vectors),
        cmocka_unit_test_setup_teardown(test_fetch_file_url_verified_then_cached, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fetch_wrong_sha256_deletes_download, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fetch_missing_source_and_missing_sha, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
