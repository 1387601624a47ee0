/* test_tcpstore.c: c10d's TCPStore protocol (core/tcpstore.h): our client against our server
 * (threads in this process), against the real server of torch (both its backends, libuv and the
 * classic one), and torch's real client against our server; a stray connection and a server that
 * does not speak the protocol. The torch cases need a Python with torch
 * ($TIPC_LAUNCHERS_VENV/bin/python, default /opt/tipc-launchers, made by scripts/install-deps.sh)
 * and are skipped, saying so, without one. */
#include "testutil.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "../../core/tcpstore.h"
#include "../../core/time.h"

static struct tcpstore *client(int port)
{
    struct tcpstore *c = NULL;
    assert_int_equal(tcpstore_connect(&c, "127.0.0.1", port, 2000, "test", false, NULL), TIPC_OK);
    return c;
}

static void test_ours(void **state)
{
    (void)state;
    struct tcpstore_server *S = NULL;
    assert_int_equal(tcpstore_server_start(&S, 0, "test"), TIPC_OK);
    int port = tcpstore_server_port(S);
    struct tcpstore *a = client(port), *b = client(port);
    bool found = true, ex = true, created = false;
    char *v = NULL;
    size_t n = 0;
    assert_int_equal(tcpstore_get(a, "k", 0, &found, &v, &n), TIPC_OK);
    assert_false(found);
    double t0 = now_seconds();   /* a wait that times out (CANCEL_WAIT) */
    assert_int_equal(tcpstore_get(a, "k", 300, &found, &v, &n), TIPC_OK);
    assert_false(found);
    assert_true(now_seconds() - t0 >= 0.29 && now_seconds() - t0 < 3);
    const char bin[4] = {'x', 0, 'y', 0};
    assert_int_equal(tcpstore_set(b, "k", bin, 4), TIPC_OK);
    assert_int_equal(tcpstore_get(a, "k", 1000, &found, &v, &n), TIPC_OK);
    assert_true(found);
    assert_int_equal(n, 4);
    assert_memory_equal(v, bin, 4);
    free(v);
    assert_int_equal(tcpstore_check(a, "k", &ex), TIPC_OK);
    assert_true(ex);
    assert_int_equal(tcpstore_check(a, "nope", &ex), TIPC_OK);
    assert_false(ex);
    int64_t now = 0;
    assert_int_equal(tcpstore_add(a, "n", 5, &now), TIPC_OK);
    assert_int_equal(now, 5);
    assert_int_equal(tcpstore_add(b, "n", -7, &now), TIPC_OK);
    assert_int_equal(now, -2);
    assert_int_equal(tcpstore_create(a, "once", "A", 1, &created), TIPC_OK);
    assert_true(created);
    assert_int_equal(tcpstore_create(b, "once", "B", 1, &created), TIPC_OK);
    assert_false(created);
    assert_int_equal(tcpstore_get(b, "once", 0, &found, &v, &n), TIPC_OK);
    assert_string_equal(v, "A");
    free(v);
    /* a stray connection that does not open with VALIDATE is closed; the store goes on */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    const char *http = "GET / HTTP/1.0\r\n\r\n";
    assert_true(write(fd, http, strlen(http)) > 0);
    char buf[16];
    assert_int_equal(read(fd, buf, sizeof buf), 0);
    close(fd);
    assert_int_equal(tcpstore_get(a, "k", 0, &found, NULL, NULL), TIPC_OK);
    assert_true(found);
    /* a request that trickles in byte by byte is served once whole; a key over the limit closes */
    fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    unsigned char req[64];
    size_t rn = 0;
    req[rn++] = TCPSTORE_VALIDATE, tcpstore_put_le(req + rn, TCPSTORE_MAGIC, 4), rn += 4;
    req[rn++] = TCPSTORE_SET, tcpstore_put_le(req + rn, 4, 8), rn += 8, memcpy(req + rn, "slow", 4), rn += 4;
    tcpstore_put_le(req + rn, 2, 8), rn += 8, memcpy(req + rn, "ok", 2), rn += 2;
    for (size_t i = 0; i < rn; i++) {
        assert_int_equal(write(fd, req + i, 1), 1);
        usleep(2000);
    }
    assert_int_equal(tcpstore_get(a, "slow", 2000, &found, &v, &n), TIPC_OK);
    assert_true(found);
    assert_string_equal(v, "ok");
    free(v);
    rn = 0;
    req[rn++] = TCPSTORE_GET, tcpstore_put_le(req + rn, (uint64_t)TCPSTORE_MAX_KEY + 1, 8), rn += 8;
    assert_int_equal(write(fd, req, rn), (ssize_t)rn);
    assert_int_equal(read(fd, buf, sizeof buf), 0);
    close(fd);
    /* a client's last SET arrives with its close: it is stored all the same (a rank saying it left) */
    for (int i = 0; i < 20; i++) {
        struct tcpstore *t = client(port);
        char k[32];
        snprintf(k, sizeof k, "left/%d", i);
        assert_int_equal(tcpstore_set(t, k, "1", 1), TIPC_OK);
        tcpstore_close(t);
        assert_int_equal(tcpstore_get(a, k, 2000, &found, NULL, NULL), TIPC_OK);
        assert_true(found);
    }
    tcpstore_close(a);
    tcpstore_close(b);
    /* a second server on the same port: refused, naming the port */
    struct tcpstore_server *S2 = NULL;
    struct capture cap;
    capture_stderr_begin(&cap);
    enum tipc_status st = tcpstore_server_start(&S2, port, "test");
    char *err = capture_stderr_end(&cap);
    assert_int_equal(st, TIPC_EDIST);
    assert_non_null(strstr(err, "MASTER_PORT"));
    free(err);
    tcpstore_server_stop(S);
}

/* A server that is not a TCPStore: closes at once (mode 0) or answers the PING wrongly (mode 1). */
struct fake { int lfd, mode; };
static void *fake_main(void *arg)
{
    struct fake *f = arg;
    int fd = accept(f->lfd, NULL, NULL);
    if (fd >= 0) {
        char b[16];
        if (f->mode == 1 && read(fd, b, sizeof b) > 0 && write(fd, "HTTP", 4) < 0) { /* nothing to do */ }
        close(fd);
    }
    return NULL;
}

static void test_not_a_store(void **state)
{
    (void)state;
    for (int mode = 0; mode < 2; mode++) {
        struct fake f = {.lfd = socket(AF_INET, SOCK_STREAM, 0), .mode = mode};
        struct sockaddr_in sa = {.sin_family = AF_INET};
        inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
        assert_int_equal(bind(f.lfd, (struct sockaddr *)&sa, sizeof sa), 0);
        assert_int_equal(listen(f.lfd, 4), 0);
        socklen_t sl = sizeof sa;
        getsockname(f.lfd, (struct sockaddr *)&sa, &sl);
        pthread_t t;
        pthread_create(&t, NULL, fake_main, &f);
        struct tcpstore *c = NULL;
        struct capture cap;
        capture_stderr_begin(&cap);
        enum tipc_status st = tcpstore_connect(&c, "127.0.0.1", ntohs(sa.sin_port), 2000, "rank 1", false, NULL);
        char *err = capture_stderr_end(&cap);
        pthread_join(t, NULL);
        close(f.lfd);
        assert_int_equal(st, TIPC_EDIST);
        assert_null(c);
        assert_non_null(strstr(err, "rank 1"));
        assert_non_null(strstr(err, "torch >= 2.5"));
        free(err);
    }
    /* nothing listening: quiet, and *refused says so */
    struct tcpstore_server *S = NULL;
    assert_int_equal(tcpstore_server_start(&S, 0, "test"), TIPC_OK);
    int port = tcpstore_server_port(S);
    tcpstore_server_stop(S);
    struct tcpstore *c = NULL;
    bool refused = false;
    assert_int_equal(tcpstore_connect(&c, "127.0.0.1", port, 500, "rank 1", true, &refused), TIPC_EDIST);
    assert_true(refused);
}

/* ---- torch ------------------------------------------------------------------------------------------------ */
static const char *torch_python(void)
{
    static char path[512];
    const char *v = getenv("TIPC_LAUNCHERS_VENV");
    snprintf(path, sizeof path, "%s/bin/python", v && *v ? v : "/opt/tipc-launchers");
    pid_t p = fork();
    if (p == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1), dup2(null, 2);
        execl(path, path, "-c", "import torch.distributed as d; assert d.is_available()", (char *)NULL);
        _exit(127);
    }
    int ws = 0;
    waitpid(p, &ws, 0);
    if (WIFEXITED(ws) && WEXITSTATUS(ws) == 0) return path;
    printf("SKIP: no Python with torch at %s (scripts/install-deps.sh makes it)\n", path);
    return NULL;
}

/* Run python -c SCRIPT ARG with its stdout on a pipe; *out_fd reads it. */
static pid_t run_python(const char *py, const char *script, const char *arg, int *out_fd)
{
    int pp[2];
    assert_int_equal(pipe(pp), 0);
    pid_t p = fork();
    if (p == 0) {
        dup2(pp[1], 1);
        close(pp[0]);
        execl(py, py, "-W", "ignore", "-c", script, arg, (char *)NULL);
        _exit(127);
    }
    close(pp[1]);
    *out_fd = pp[0];
    return p;
}

static char *read_line(int fd)
{
    static char line[256];
    size_t n = 0;
    char ch;
    while (n + 1 < sizeof line && read(fd, &ch, 1) == 1 && ch != '\n') line[n++] = ch;
    line[n] = 0;
    return line;
}

static int wait_exit(pid_t p)
{
    int ws = 0;
    waitpid(p, &ws, 0);
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

/* torch's server (libuv backend, and the classic one), our client. torch's Python TCPStore puts
 * "/" before every key, so ours are written with it. */
static const char torch_server[] =
    "import sys, datetime, torch.distributed as d\n"
    "s = d.TCPStore('127.0.0.1', 0, is_master=True, wait_for_workers=False, use_libuv=sys.argv[1] == '1',\n"
    "               timeout=datetime.timedelta(seconds=30))\n"
    "s.set('from_torch', b'hello\\x00bin')\n"
    "print(s.port, flush=True)\n"
    "s.wait(['from_c'])\n"
    "assert s.get('from_c') == b'value from c', s.get('from_c')\n"
    "assert s.get('ctr') == b'7', s.get('ctr')\n"
    "assert s.get('once') == b'first'\n"
    "print('ok', flush=True)\n";

static void test_torch_server(void **state)
{
    (void)state;
    const char *py = torch_python();
    if (!py) skip();
    for (int libuv = 1; libuv >= 0; libuv--) {
        int fd;
        pid_t p = run_python(py, torch_server, libuv ? "1" : "0", &fd);
        int port = (int)strtol(read_line(fd), NULL, 10);
        assert_true(port > 0);
        struct tcpstore *c = client(port);
        bool found = false, created = false;
        char *v = NULL;
        size_t n = 0;
        assert_int_equal(tcpstore_get(c, "/from_torch", 5000, &found, &v, &n), TIPC_OK);
        assert_true(found);
        assert_int_equal(n, 9);
        assert_memory_equal(v, "hello\0bin", 9);
        free(v);
        assert_int_equal(tcpstore_get(c, "/missing", 200, &found, &v, &n), TIPC_OK);   /* CANCEL_WAIT */
        assert_false(found);
        int64_t now = 0;
        assert_int_equal(tcpstore_add(c, "/ctr", 3, &now), TIPC_OK);
        assert_int_equal(tcpstore_add(c, "/ctr", 4, &now), TIPC_OK);
        assert_int_equal(now, 7);
        assert_int_equal(tcpstore_create(c, "/once", "first", 5, &created), TIPC_OK);
        assert_true(created);
        assert_int_equal(tcpstore_create(c, "/once", "second", 6, &created), TIPC_OK);
        assert_false(created);
        assert_int_equal(tcpstore_set(c, "/from_c", "value from c", 12), TIPC_OK);
        assert_string_equal(read_line(fd), "ok");
        tcpstore_close(c);
        close(fd);
        assert_int_equal(wait_exit(p), 0);
    }
}

/* torch's client against our server: every query it has, a waiter woken by another client. */
static const char torch_client[] =
    "import sys, datetime, threading, torch.distributed as d\n"
    "t = datetime.timedelta(seconds=10)\n"
    "c = d.TCPStore('127.0.0.1', int(sys.argv[1]), is_master=False, wait_for_workers=False, timeout=t)\n"
    "c2 = d.TCPStore('127.0.0.1', int(sys.argv[1]), is_master=False, wait_for_workers=False, timeout=t)\n"
    "assert c.get('from_c') == b'set by tipc'\n"
    "c.set('k', b'v1'); assert c.get('k') == b'v1'\n"
    "assert c.add('n', 5) == 5 and c2.add('n', -2) == 3 and c.get('n') == b'3'\n"
    "assert c.check(['k', 'n']) and not c.check(['k', 'nope'])\n"
    "try:\n"
    "    c.wait(['nope'], datetime.timedelta(milliseconds=200)); sys.exit('wait did not time out')\n"
    "except RuntimeError: pass\n"
    "assert c.compare_set('k', b'v1', b'v2') == b'v2' and c.compare_set('k', b'zz', b'v3') == b'v2'\n"
    "assert c.compare_set('fresh', b'', b'x') == b'x' and c.compare_set('absent', b'q', b'x') == b'q'\n"
    "c.append('k', b'+'); c.append('app', b'a'); assert c.get('k') == b'v2+' and c.get('app') == b'a'\n"
    "c.multi_set(['a', 'b'], [b'1', b'2']); assert c.multi_get(['a', 'b']) == [b'1', b'2']\n"
    "n = c.num_keys(); assert c.delete_key('a') and not c.delete_key('a') and c.num_keys() == n - 1\n"
    "threading.Timer(0.3, lambda: c2.set('late', b'L')).start()\n"
    "assert c.get('late') == b'L'\n"
    "c.set('from_torch', b'done')\n"
    "print('ok', flush=True)\n";

static void test_torch_client(void **state)
{
    (void)state;
    const char *py = torch_python();
    if (!py) skip();
    struct tcpstore_server *S = NULL;
    assert_int_equal(tcpstore_server_start(&S, 0, "test"), TIPC_OK);
    char port[16];
    snprintf(port, sizeof port, "%d", tcpstore_server_port(S));
    struct tcpstore *c = client(tcpstore_server_port(S));
    assert_int_equal(tcpstore_set(c, "/from_c", "set by tipc", 11), TIPC_OK);
    int fd;
    pid_t p = run_python(py, torch_client, port, &fd);
    assert_string_equal(read_line(fd), "ok");
    close(fd);
    assert_int_equal(wait_exit(p), 0);
    bool found = false;
    char *v = NULL;
    assert_int_equal(tcpstore_get(c, "/from_torch", 0, &found, &v, NULL), TIPC_OK);
    assert_true(found);
    assert_string_equal(v, "done");
    free(v);
    tcpstore_close(c);
    tcpstore_server_stop(S);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ours),
        cmocka_unit_test(test_not_a_store),
        cmocka_unit_test(test_torch_server),
        cmocka_unit_test(test_torch_client),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
