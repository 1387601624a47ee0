/* test_staged.c: core/staged.h and core/regfile.h: temp names are recognised as ours only with
 * this host and a dead writer (a live PID's temp, another host's, a user's look-alike stay);
 * temp_sweep removes exactly the stale ones; a staged set is published whole or not at all (a
 * failed rename puts the old files back); writes to a full device fail with ENOSPC and leave the
 * target untouched; dir_check_writable; open_regular refuses FIFOs, devices and folders without
 * blocking and bounds sizes; targets that are not regular files are written through or refused,
 * never renamed over. */
#include "testutil.h"
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include "../../core/staged.h"
#include "../../core/regfile.h"
#include "../../core/fs.h"

static char dir[256];

static int setup(void **state)
{
    snprintf(dir, sizeof dir, "%s/tipc-staged-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    rm_rf(dir);
    return 0;
}

/* A PID that existed and is gone (reaped). */
static long dead_pid(void)
{
    pid_t p = fork();
    if (p == 0) _exit(0);
    waitpid(p, NULL, 0);
    return (long)p;
}

/* "<base>.tmp.<pid>.<this host>.<6>" as temp_name makes it, with another pid. */
static char *name_with_pid(const char *base, long pid)
{
    char *t = temp_name(base);   /* base.tmp.<ourpid>.<host>.<rnd> */
    char *host = strchr(t + strlen(base) + 5, '.');
    char *n = xasprintf("%s.tmp.%ld%s", base, pid, host);
    free(t);
    return n;
}

static void touch(const char *path)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("x", f);
    fclose(f);
}

static bool exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

static void test_temp_is_stale_only_ours_and_dead(void **state)
{
    long dead = dead_pid();
    char *t = name_with_pid("epoch_3.ckpt", dead);
    assert_true(temp_is_stale(t));
    free(t);
    t = name_with_pid("epoch_3.ckpt", (long)getppid());   /* alive */
    assert_false(temp_is_stale(t));
    free(t);
    t = temp_name("latest.ckpt");   /* our own pid: alive */
    assert_false(temp_is_stale(t));
    free(t);
    char legacy[64];
    snprintf(legacy, sizeof legacy, "latest.ckpt.tmp.%ld", dead);
    assert_true(temp_is_stale(legacy));                      /* pre-2026 checkpoint temp */
    snprintf(legacy, sizeof legacy, "notes.txt.tmp.%ld", dead);
    assert_false(temp_is_stale(legacy));                     /* not a name we ever used */
    snprintf(legacy, sizeof legacy, "lite_data.tmp.%ld.otherhost.abcdef", dead);
    assert_false(temp_is_stale(legacy));                     /* another host's: its PID means nothing here */
    assert_false(temp_is_stale("lite_data.tmp-mine"));
    assert_false(temp_is_stale("lite_data.old-backup"));
    assert_false(temp_is_stale(".tmp.1.x.abcdef"));
}

static void test_temp_sweep_removes_only_stale(void **state)
{
    long dead = dead_pid();
    char *base = xasprintf("%s/latest.ckpt", dir);
    char *stale = name_with_pid(base, dead), *live = name_with_pid(base, (long)getppid());
    char *staledir = name_with_pid(base, dead);
    staledir[strlen(staledir) - 1] = 'Z';   /* a second, distinct name */
    char *mine = xasprintf("%s/lite_data.tmp-mine", dir), *backup = xasprintf("%s/lite_data.old-backup", dir);
    touch(stale);
    touch(live);
    assert_int_equal(mkdir(staledir, 0777), 0);
    char *inner = xasprintf("%s/half.jpg", staledir);
    touch(inner);
    assert_int_equal(mkdir(mine, 0777), 0);
    assert_int_equal(mkdir(backup, 0777), 0);
    struct capture c;
    capture_stderr_begin(&c);
    int n = temp_sweep(dir);
    free(capture_stderr_end(&c));
    assert_int_equal(n, 2);
    assert_false(exists(stale));
    assert_false(exists(staledir));
    assert_true(exists(live));
    assert_true(exists(mine));
    assert_true(exists(backup));
    free(base); free(stale); free(live); free(staledir); free(mine); free(backup); free(inner);
}

static char *slurp(const char *path)
{
    uint8_t *b;
    size_t n;
    char why[128];
    if (read_regular(path, 0, &b, &n, why, sizeof why) != 0) return NULL;
    return (char *)b;
}

static void stage(struct staged_file *s, const char *path, const char *text)
{
    assert_int_equal(staged_open(s, path), TIPC_OK);
    staged_write(s, text, strlen(text));
    assert_int_equal(staged_finish(s), TIPC_OK);
}

static void test_staged_set_is_published_whole(void **state)
{
    char *sub = xasprintf("%s/sub", dir), *moved = xasprintf("%s/moved", dir);
    assert_int_equal(mkdir(sub, 0777), 0);
    char *a = xasprintf("%s/inference.tipc", dir), *b = xasprintf("%s/inference.onnx", sub);
    assert_int_equal(write_file_atomic(a, "old-a", 5), TIPC_OK);
    assert_int_equal(write_file_atomic(b, "old-b", 5), TIPC_OK);
    /* the second rename fails (its folder moved away after it was written): the first is put back */
    struct staged_file set[2];
    stage(&set[0], a, "new-a");
    stage(&set[1], b, "new-b");
    assert_int_equal(rename(sub, moved), 0);
    struct capture c;
    capture_stderr_begin(&c);
    enum tipc_status st = staged_publish(set, 2);
    char *err = capture_stderr_end(&c);
    assert_int_equal(st, TIPC_EIO);
    assert_non_null(strstr(err, "cannot rename"));
    free(err);
    char *got = slurp(a);
    assert_string_equal(got, "old-a");
    free(got);
    int entries = 0;   /* nothing of ours left beside it: inference.tipc and moved/ */
    DIR *d = opendir(dir);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) entries += e->d_name[0] != '.';
    closedir(d);
    assert_int_equal(entries, 2);
    /* and when it can, the whole set moves */
    assert_int_equal(rename(moved, sub), 0);
    stage(&set[0], a, "new-a");
    stage(&set[1], b, "new-b");
    assert_int_equal(staged_publish(set, 2), TIPC_OK);
    got = slurp(a);
    assert_string_equal(got, "new-a");
    free(got);
    got = slurp(b);
    assert_string_equal(got, "new-b");
    free(got);
    free(a); free(b); free(sub); free(moved);
}

/* /dev/full: every write fails with ENOSPC. A staged file cannot be made there, so check the
 * write helper directly, then a staged file whose write failed: error, temp gone, target kept. */
static void test_failed_write_is_an_error(void **state)
{
    int fd = open("/dev/full", O_WRONLY);
    if (fd < 0) skip();
    assert_int_equal(write_all(fd, "abc", 3), ENOSPC);
    close(fd);
    char *a = xasprintf("%s/latest.ckpt", dir);
    assert_int_equal(write_file_atomic(a, "good", 4), TIPC_OK);
    struct staged_file s;
    assert_int_equal(staged_open(&s, a), TIPC_OK);
    char *tmp = xstrdup(s.tmp);
    s.err = ENOSPC;   /* what staged_write records when write(2) fails */
    struct capture c;
    capture_stderr_begin(&c);
    enum tipc_status st = staged_commit(&s);
    char *err = capture_stderr_end(&c);
    assert_int_equal(st, TIPC_EIO);
    assert_non_null(strstr(err, "No space left on device"));
    assert_false(exists(tmp));
    char *got = slurp(a);
    assert_string_equal(got, "good");
    free(got); free(err); free(tmp); free(a);
}

static void test_open_regular_refuses_fifo_device_dir(void **state)
{
    char why[160];
    char *fifo = xasprintf("%s/fifo", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(open_regular(fifo, 0, why, sizeof why), -1);   /* would block in open() */
    assert_non_null(strstr(why, "FIFO"));
    assert_int_equal(open_regular("/dev/zero", 0, why, sizeof why), -1);
    assert_non_null(strstr(why, "character device"));
    assert_int_equal(open_regular(dir, 0, why, sizeof why), -1);
    assert_non_null(strstr(why, "folder"));
    char *big = xasprintf("%s/big", dir);
    FILE *f = fopen(big, "w");
    fputs("0123456789", f);
    fclose(f);
    assert_int_equal(open_regular(big, 5, why, sizeof why), -1);
    assert_non_null(strstr(why, "more than"));
    int fd = open_regular(big, 10, why, sizeof why);
    assert_true(fd >= 0);
    close(fd);
    free(fifo);
    free(big);
}

/* Targets that are not regular files are written through or refused, never renamed over: a link
 * to a regular file keeps the link (its file is replaced), a FIFO with a reader gets the bytes and
 * stays a FIFO, a FIFO without one is an error (no hang), a character device is written in place
 * (/dev/full's ENOSPC is an error), a folder and a dangling link are refused. */
static void test_special_targets_are_written_through(void **state)
{
    char *real = xasprintf("%s/real.xml", dir), *link = xasprintf("%s/link.xml", dir);
    touch(real);
    assert_int_equal(symlink(real, link), 0);
    assert_int_equal(write_file_atomic(link, "new", 3), TIPC_OK);
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    char *got = slurp(real);
    assert_string_equal(got, "new");
    free(got);

    char *fifo = xasprintf("%s/fifo", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    struct capture c;
    capture_stderr_begin(&c);
    enum tipc_status rc = write_file_atomic(fifo, "abc", 3);   /* no reader: an error at once */
    char *err = capture_stderr_end(&c);
    assert_int_equal(rc, TIPC_EIO);
    assert_non_null(strstr(err, "no process reads that FIFO"));
    free(err);
    int rd = open(fifo, O_RDONLY | O_NONBLOCK);
    assert_true(rd >= 0);
    assert_int_equal(write_file_atomic(fifo, "abc", 3), TIPC_OK);
    char buf[8] = "";
    assert_int_equal(read(rd, buf, sizeof buf), 3);
    assert_memory_equal(buf, "abc", 3);
    close(rd);
    assert_int_equal(lstat(fifo, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));

    assert_int_equal(write_file_atomic("/dev/null", "x", 1), TIPC_OK);
    assert_int_equal(stat("/dev/null", &st), 0);
    assert_true(S_ISCHR(st.st_mode));
    /* as root a private copy of /dev/full (a broken build must not replace the host's); else the
     * host's, which a non-root rename cannot touch */
    char *full = geteuid() == 0 ? xasprintf("%s/full", dir) : xstrdup("/dev/full");
    if (geteuid() != 0 || mknod(full, S_IFCHR | 0666, makedev(1, 7)) == 0) {
        capture_stderr_begin(&c);
        rc = write_file_atomic(full, "x", 1);
        err = capture_stderr_end(&c);
        assert_int_equal(rc, TIPC_EIO);
        assert_non_null(strstr(err, "No space left on device"));
        assert_int_equal(stat(full, &st), 0);
        assert_true(S_ISCHR(st.st_mode));
        free(err);
    }
    free(full);

    char *dangling = xasprintf("%s/dangling", dir), *sub = xasprintf("%s/sub", dir);
    assert_int_equal(symlink("/nonexistent/tipc", dangling), 0);
    assert_int_equal(mkdir(sub, 0700), 0);
    const char *refused[] = {dangling, sub};
    for (int i = 0; i < 2; i++) {
        capture_stderr_begin(&c);
        rc = write_file_atomic(refused[i], "x", 1);
        err = capture_stderr_end(&c);
        assert_int_equal(rc, TIPC_EUSAGE);
        free(err);
    }
    assert_int_equal(lstat(dangling, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(lstat(sub, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    free(real); free(link); free(fifo); free(dangling); free(sub);
}

static void test_dir_check_writable(void **state)
{
    assert_int_equal(dir_check_writable(dir, "output folder"), TIPC_OK);
    struct capture c;
    capture_stderr_begin(&c);
    enum tipc_status st = dir_check_writable("/proc/self", "output folder");
    char *err = capture_stderr_end(&c);
    assert_int_equal(st, TIPC_EIO);
    assert_non_null(strstr(err, "output folder '/proc/self' is not writable"));
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_temp_is_stale_only_ours_and_dead),
        cmocka_unit_test_setup_teardown(test_temp_sweep_removes_only_stale, setup, teardown),
        cmocka_unit_test_setup_teardown(test_staged_set_is_published_whole, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_write_is_an_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_regular_refuses_fifo_device_dir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dir_check_writable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_special_targets_are_written_through, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
