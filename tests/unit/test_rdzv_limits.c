/* test_rdzv_limits.c: the rendezvous store against hostile clients, with a real server on loopback
 * and raw sockets: the token is refused before a body is read, value/key/store caps, a flood of
 * idle connections from one address leaves the job's own clients served, and headers trickled from
 * the job's own address are cut at the deadline. */
#include "testutil.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../../core/time.h"
#include "../../runner/launch/rdzv_server.h"

/* TCP connection to 127.0.0.1:port from source address src (NULL: any); -1 on failure. */
static int connect_from(const char *src, int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    struct sockaddr_in a = {.sin_family = AF_INET};
    if (src) {
        inet_pton(AF_INET, src, &a.sin_addr);
        if (bind(fd, (struct sockaddr *)&a, sizeof a)) return close(fd), -1;
    }
    a.sin_port = htons((unsigned short)port);
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (connect(fd, (struct sockaddr *)&a, sizeof a)) return close(fd), -1;
    return fd;
}

/* Read until the peer closes or secs pass; returns bytes read into buf (NUL-terminated), *closed. */
static size_t read_reply(int fd, char *buf, size_t cap, double secs, bool *closed)
{
    size_t n = 0;
    double until = now_seconds() + secs;
    *closed = false;
    while (now_seconds() < until && n + 1 < cap) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 100) != 1) continue;
        ssize_t k = read(fd, buf + n, cap - 1 - n);
        if (k <= 0) {
            *closed = true;
            break;
        }
        n += (size_t)k;
    }
    buf[n] = 0;
    return n;
}

static struct rdzv_server *start(void)
{
    struct rdzv_server *S = NULL;
    assert_int_equal(rdzv_server_start(&S, "127.0.0.1", 0, "job1", "secret-token"), TIPC_OK);
    return S;
}

/* A PUT announcing 1 MB with a wrong token is answered 403 and closed at once, without the server
 * waiting for (or reading) the body. */
static void test_token_refused_before_body(void **state)
{
    (void)state;
    struct rdzv_server *S = start();
    const char *tokens[] = {"bad", "secret-tokeX", NULL};   /* wrong, and same length differing at the end */
    for (int i = 0; i < 3; i++) {
        int fd = connect_from(NULL, rdzv_server_port(S));
        assert_true(fd >= 0);
        char req[256];
        int len = snprintf(req, sizeof req, "PUT /kv/job1/fail HTTP/1.1\r\nHost: x\r\nContent-Length: 900000\r\n%s%s%s\r\n",
                           tokens[i] ? "X-Tipc-Token: " : "", tokens[i] ? tokens[i] : "", tokens[i] ? "\r\n" : "");
        assert_int_equal(write(fd, req, (size_t)len), len);
        char buf[1024];
        bool closed;
        double t0 = now_seconds();
        read_reply(fd, buf, sizeof buf, 3.0, &closed);
        assert_non_null(strstr(buf, " 403 "));
        assert_true(closed);
        assert_true(now_seconds() - t0 < 2.5);
        close(fd);
    }
    assert_true(rdzv_server_key_age(S, "fail") < 0);
    rdzv_server_stop(S);
}

/* Values over 1 MiB, keys over 256 bytes and a store past its key or byte budget are refused,
 * and nothing of a refused write is kept; overwriting within the budget still works. */
static void test_key_and_value_caps(void **state)
{
    (void)state;
    struct rdzv_server *S = start();
    struct rdzv_client c;
    assert_int_equal(rdzv_client_init(&c, "127.0.0.1", rdzv_server_port(S), "job1", "secret-token", "t"), TIPC_OK);
    char *big = xcalloc(RDZV_MAX_VALUE + 1, 1);
    struct capture cap;
    capture_stderr_begin(&cap);
    assert_int_equal(rdzv_put(&c, "big", big, RDZV_MAX_VALUE + 1, false, NULL), TIPC_EDIST);
    char long_key[RDZV_MAX_KEY + 2];
    memset(long_key, 'k', sizeof long_key - 1);
    long_key[sizeof long_key - 1] = 0;
    assert_int_equal(rdzv_put(&c, long_key, "v", 1, false, NULL), TIPC_EDIST);
    char *err = capture_stderr_end(&cap);
    /* 413 "larger than", or the transfer cut when the server closes while the body is still on its way */
    assert_true(strstr(err, "larger than") || strstr(err, "cannot reach"));
    assert_non_null(strstr(err, "key longer than"));
    free(err);
    assert_true(rdzv_server_key_age(S, "big") < 0);
    assert_int_equal(rdzv_put(&c, "big", big, RDZV_MAX_VALUE, false, NULL), TIPC_OK);   /* exactly 1 MiB is fine */
    rdzv_client_free(&c);
    rdzv_server_stop(S);

    /* the byte and key budgets, through the request logic itself (no sockets: fast) */
    struct rdzv_store *st = rdzv_store_new("j", "t");
    struct rdzv_reply r;
    unsigned full = 0;
    int stored = 0;
    for (int i = 0; i < 80 && !full; i++) {
        char url[64];
        snprintf(url, sizeof url, "/kv/j/v%d", i);
        rdzv_store_handle(st, "PUT", url, "t", NULL, NULL, big, RDZV_MAX_VALUE, false, &r);
        if (r.code == 507) full = r.code;
        else assert_int_equal(r.code, 200), stored++;
        free(r.body);
    }
    assert_int_equal(full, 507);
    assert_true((size_t)stored * RDZV_MAX_VALUE <= RDZV_MAX_BYTES && stored >= 60);
    rdzv_store_handle(st, "PUT", "/kv/j/v0", "t", NULL, NULL, "small", 5, false, &r);   /* overwrite frees room */
    assert_int_equal(r.code, 200);
    free(r.body);
    rdzv_store_free(st);

    st = rdzv_store_new("j", "t");
    for (unsigned i = 0; i <= RDZV_MAX_KEYS; i++) {
        char url[64];
        snprintf(url, sizeof url, "/kv/j/k%u", i);
        rdzv_store_handle(st, "PUT", url, "t", NULL, NULL, "1", 1, false, &r);
        assert_int_equal(r.code, i < RDZV_MAX_KEYS ? 200u : 507u);
        free(r.body);
    }
    rdzv_store_handle(st, "GET", "/kv/j/k16384", "t", "0", NULL, NULL, 0, false, &r);
    assert_int_equal(r.code, 404);
    free(r.body);
    rdzv_store_free(st);
    free(big);
}

/* 1000 idle connections from 127.0.0.66: the server keeps at most its per-address limit of them
 * (the rest are closed at once) and the job's own client, from 127.0.0.1, is served immediately. */
static void test_flood_from_one_address_leaves_the_job_served(void **state)
{
    (void)state;
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < 2300 && rl.rlim_max >= 2300) rl.rlim_cur = 2300, setrlimit(RLIMIT_NOFILE, &rl);
    int want = rl.rlim_cur >= 2300 ? 1000 : (int)(rl.rlim_cur - 100) / 2;
    struct rdzv_server *S = start();
    int port = rdzv_server_port(S), *fds = xcalloc((size_t)want, sizeof *fds), opened = 0;
    for (int i = 0; i < want; i++)
        if ((fds[i] = connect_from("127.0.0.66", port)) >= 0) opened++;
    assert_true(opened > RDZV_DEFAULT_CLIENTS);
    struct rdzv_client c;
    rdzv_client_init(&c, "127.0.0.1", port, "job1", "secret-token", "node 1");
    double t0 = now_seconds();
    bool found = false;
    char *v = NULL;
    assert_int_equal(rdzv_put(&c, "node/1", "view", 4, true, NULL), TIPC_OK);
    assert_int_equal(rdzv_get(&c, "node/1", 0, false, &found, &v, NULL), TIPC_OK);
    assert_true(found);
    assert_true(now_seconds() - t0 < 2.0);
    free(v);
    usleep(300 * 1000);   /* the server closed the connections past the per-address limit */
    int closed = 0;
    for (int i = 0; i < want; i++) {
        if (fds[i] < 0) continue;
        struct pollfd p = {.fd = fds[i], .events = POLLIN};
        char b;
        if (poll(&p, 1, 0) == 1 && read(fds[i], &b, 1) <= 0) closed++;
    }
    assert_true(closed >= opened - RDZV_DEFAULT_CLIENTS);
    for (int i = 0; i < want; i++)
        if (fds[i] >= 0) close(fds[i]);
    free(fds);
    rdzv_client_free(&c);
    rdzv_server_stop(S);
}

/* Slowloris from the job's own address: 20 connections from 127.0.0.1 each trickle a request line
 * and then a header line every 0.5 s, so a timeout that restarts on every byte would keep them for
 * ever. Each must be closed at the header deadline (RDZV_HEADER_DEADLINE_S from its connect), and a
 * client from the same address is served at once all the while. */
static void test_trickled_headers_are_closed_at_the_deadline(void **state)
{
    (void)state;
    struct rdzv_server *S = start();
    int port = rdzv_server_port(S), fds[20];
    double t0 = now_seconds(), closed_at[20];
    for (int i = 0; i < 20; i++) {
        fds[i] = connect_from("127.0.0.1", port);
        assert_true(fds[i] >= 0);
        assert_int_equal(write(fds[i], "GET /kv/job1/node/0 HTTP/1.1\r\n", 31), 31);
        closed_at[i] = 0;
    }
    struct rdzv_client c;
    rdzv_client_init(&c, "127.0.0.1", port, "job1", "secret-token", "node 1");
    int left = 20, served = 0;
    while (left && now_seconds() - t0 < RDZV_HEADER_DEADLINE_S + 3) {
        usleep(500 * 1000);
        for (int i = 0; i < 20; i++) {
            if (closed_at[i] > 0) continue;
            struct pollfd p = {.fd = fds[i], .events = POLLIN};
            char b;
            if (poll(&p, 1, 0) == 1 && read(fds[i], &b, 1) <= 0) {
                closed_at[i] = now_seconds() - t0;
                left--;
            } else {
                ssize_t w = send(fds[i], "X-Trickle: 1\r\n", 14, MSG_NOSIGNAL);
                (void)w;
            }
        }
        double q = now_seconds();   /* the job's own client, from the same address, meanwhile */
        char key[16];
        snprintf(key, sizeof key, "k%d", served);
        assert_int_equal(rdzv_put(&c, key, "v", 1, false, NULL), TIPC_OK);
        assert_true(now_seconds() - q < 1.0);
        served++;
    }
    assert_int_equal(left, 0);
    for (int i = 0; i < 20; i++) {
        assert_true(closed_at[i] >= RDZV_HEADER_DEADLINE_S - 0.1);
        assert_true(closed_at[i] <= RDZV_HEADER_DEADLINE_S + 1.5);
        close(fds[i]);
    }
    rdzv_client_free(&c);
    rdzv_server_stop(S);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_token_refused_before_body),
        cmocka_unit_test(test_key_and_value_caps),
        cmocka_unit_test(test_flood_from_one_address_leaves_the_job_served),
        cmocka_unit_test(test_trickled_headers_are_closed_at_the_deadline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
