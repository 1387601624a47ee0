/* secret.c: the job's token, the secret every request to the rendezvous store carries.
 * Where it comes from (first match wins; docs/distributed.md "The job's secret"):
 *   1. env TIPC_JOB_TOKEN;
 *   2. env TIPC_JOB_TOKEN_FILE: a regular file owned by this user, no group/other permission bits;
 *   3. one node: 32 random bytes (RAND_bytes), handed to the ranks in their environment;
 *   4. every node on this host (all --ips, or the master, are loopback addresses): an HMAC of this
 *      user's host secret (created once, 0600, in a 0700 directory of this user), which only this
 *      user (and root) can read, and no other host can reach loopback. The HMAC covers the job id
 *      and the job's fingerprint, so each job has its own token: another job of the same user on
 *      the same port is answered 403 and can neither read this job's keys nor stop it;
 *   5. otherwise: refused (exit 2). A token derivable from public facts (job id, endpoint) would let
 *      anyone who can reach the store read keys and post a failure that stops every node. */
#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../core/check.h"
#include "../../core/sha256.h"
#include "../../core/banned.h"

#define SECRET_BYTES 32

static char *hex(const unsigned char *b, size_t n)
{
    char *s = xmalloc(2 * n + 1);
    for (size_t i = 0; i < n; i++) snprintf(s + 2 * i, 3, "%02x", b[i]);
    return s;
}

/* A flag whose value may differ per node (where this node writes): "--output-dir", "--log_dir",
 * "--save-inference-dir", "-o Global.output_dir=...". */
static bool per_node_flag(const char *w)
{
    if (w[0] != '-' && !strstr(w, "output_dir=")) return false;
    size_t n = strcspn(w, "=");
    for (const char *k = w; k < w + n; k++)
        if (!strncmp(k, "output", 6) || !strncmp(k, "save", 4) || !strncmp(k, "log_dir", 7) || !strncmp(k, "log-dir", 7))
            return true;
    return false;
}

char *launch_fingerprint(const struct launch_opts *o)
{
    const char *run = getenv("TIPC_JOB_FINGERPRINT");
    struct sha256 h;
    char md[65];
    sha256_init(&h);
    if (run && *run) sha256_update(&h, run, strlen(run) + 1);
    else
        for (int i = 0; i < o->ncmd; i++) {
            const char *w = o->cmd[i];
            bool masked = per_node_flag(w);
            sha256_update(&h, w, masked ? strcspn(w, "=") : strlen(w) + 1);
            if (masked && !strchr(w, '=') && i + 1 < o->ncmd) i++;   /* "--output-dir DIR": skip DIR */
        }
    sha256_final_hex(&h, md);
    return xstrndup(md, 16);
}

/* Does host resolve to loopback addresses only? */
static bool is_loopback(const char *host)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai, *p;
    if (!host || getaddrinfo(host, NULL, &hints, &ai)) return false;
    bool all = true;
    for (p = ai; p; p = p->ai_next) {
        char buf[NI_MAXHOST];
        if (getnameinfo(p->ai_addr, p->ai_addrlen, buf, sizeof buf, NULL, 0, NI_NUMERICHOST)) all = false;
        else if (strncmp(buf, "127.", 4) != 0 && strcmp(buf, "::1") != 0) all = false;
    }
    freeaddrinfo(ai);
    return all;
}

static bool all_nodes_here(const struct launch_opts *o)
{
    if (o->nips) {
        for (int i = 0; i < o->nips; i++)
            if (!is_loopback(o->ips[i])) return false;
        return true;
    }
    return is_loopback(o->master_host);   /* nodes that reach a loopback master are on this host */
}

/* Private to this user: owned by us, not a symlink, no group/other bits. */
static enum tipc_status check_private(const char *path, const struct stat *st, bool dir, const char *what)
{
    if (dir ? !S_ISDIR(st->st_mode) : !S_ISREG(st->st_mode))
        return error_msg(TIPC_EUSAGE, "launch: %s '%s' is not a %s", what, path, dir ? "directory" : "regular file");
    if (st->st_uid != geteuid() || (st->st_mode & 077)) {
        error_msg(TIPC_EUSAGE, "launch: %s '%s' is not private (owner uid %u, mode %04o)", what, path,
                  (unsigned)st->st_uid, (unsigned)(st->st_mode & 07777));
        error_hint("it must belong to you with mode %s (chmod %s '%s')", dir ? "0700" : "0600",
                   dir ? "700" : "600", path);
        return TIPC_EUSAGE;
    }
    return TIPC_OK;
}

/* Read a private secret file: the first line, without trailing whitespace. */
static enum tipc_status read_secret_file(const char *path, const char *what, char **out)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return error_msg(TIPC_EUSAGE, "launch: cannot open %s '%s': %s", what, path, strerror(errno));
    struct stat st;
    enum tipc_status rc = fstat(fd, &st) ? error_msg(TIPC_EUSAGE, "launch: %s '%s': %s", what, path, strerror(errno))
                                         : check_private(path, &st, false, what);
    char buf[1024];
    ssize_t n = rc ? 0 : read(fd, buf, sizeof buf - 1);
    close(fd);
    if (rc) return rc;
    if (n < 0) return error_msg(TIPC_EUSAGE, "launch: cannot read %s '%s': %s", what, path, strerror(errno));
    buf[n] = 0;
    buf[strcspn(buf, "\r\n")] = 0;
    size_t len = strlen(buf);
    while (len && (buf[len - 1] == ' ' || buf[len - 1] == '\t')) buf[--len] = 0;
    if (len < 16)
        return error_msg(TIPC_EUSAGE, "launch: %s '%s' holds %zu characters; a secret needs at least 16 "
                         "(e.g. head -c32 /dev/urandom | xxd -p -c64)", what, path, len);
    *out = xstrdup(buf);
    return TIPC_OK;
}

/* A folder in which only this user can create names: a directory of ours that group and others
 * cannot write (a home folder, systemd's /run/user/UID). */
static bool only_mine(const char *dir)
{
    struct stat st;
    return dir && dir[0] == '/' && lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
           !(st.st_mode & 022);
}

/* Where this user's host secret lives: a folder only this user can create, so another user cannot
 * take its name first: $XDG_RUNTIME_DIR/tipc, else ~/.tipc ($HOME, else the password entry's home).
 * Only when neither exists: /tmp/tipc-UID, which another user could have created first (refused
 * below, naming that user). */
static char *secret_dir(void)
{
    const char *rt = getenv("XDG_RUNTIME_DIR"), *home = getenv("HOME");
    if (only_mine(rt)) return xasprintf("%s/tipc", rt);
    if (!home || !*home) {
        struct passwd *pw = getpwuid(geteuid());
        home = pw ? pw->pw_dir : NULL;
    }
    if (only_mine(home)) return xasprintf("%s/.tipc", home);
    return xasprintf("/tmp/tipc-%u", (unsigned)geteuid());
}

/* The secret folder exists but is another user's: nothing we can chmod. Say whose, and the ways out. */
static enum tipc_status squatted(const char *dir, const struct stat *st)
{
    struct passwd *pw = getpwuid(st->st_uid);
    error_msg(TIPC_EUSAGE, "launch: secret directory '%s' belongs to user %s (uid %u), not to you: another user "
              "created it first, so it cannot hold your secret", dir, pw ? pw->pw_name : "?", (unsigned)st->st_uid);
    error_hint("give tipc a private place of yours: a home folder of yours ($HOME, mode 0700 or 0755) or "
               "XDG_RUNTIME_DIR=DIR (a folder of yours, mode 0700); or export TIPC_JOB_TOKEN (the same on every node)");
    return TIPC_EUSAGE;
}

/* This user's host secret (secret_dir()/host-secret). Created once, atomically (written to a temp
 * name, then link()ed: the first creator wins). */
static enum tipc_status host_secret(char **out)
{
    char *dir = secret_dir();
    char *path = xasprintf("%s/host-secret", dir), *tmp = NULL;
    enum tipc_status rc = TIPC_OK;
    struct stat st;
    if (mkdir(dir, 0700) && errno != EEXIST)
        rc = error_msg(TIPC_EUSAGE, "launch: cannot create '%s': %s", dir, strerror(errno));
    if (!rc && lstat(dir, &st)) rc = error_msg(TIPC_EUSAGE, "launch: '%s': %s", dir, strerror(errno));
    if (!rc && st.st_uid != geteuid()) rc = squatted(dir, &st);
    if (!rc) rc = check_private(dir, &st, true, "secret directory");
    if (!rc && access(path, F_OK)) {
        unsigned char r[SECRET_BYTES];
        if (RAND_bytes(r, sizeof r) != 1) rc = error_msg(TIPC_EDIST, "launch: no random bytes (RAND_bytes failed)");
        char *h = rc ? NULL : hex(r, sizeof r);
        tmp = xasprintf("%s.%d", path, (int)getpid());
        int fd = rc ? -1 : open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (!rc && fd < 0) rc = error_msg(TIPC_EUSAGE, "launch: cannot create '%s': %s", tmp, strerror(errno));
        if (!rc) {
            size_t n = strlen(h);
            bool ok = write(fd, h, n) == (ssize_t)n && write(fd, "\n", 1) == 1 && fsync(fd) == 0;
            ok = close(fd) == 0 && ok;
            if (!ok) rc = error_msg(TIPC_EIO, "launch: cannot write '%s': %s", tmp, strerror(errno));
            else if (link(tmp, path) && errno != EEXIST)
                rc = error_msg(TIPC_EIO, "launch: cannot create '%s': %s", path, strerror(errno));
            unlink(tmp);
        }
        free(h);
    }
    if (!rc) rc = read_secret_file(path, "host secret", out);
    free(dir), free(path), free(tmp);
    return rc;
}

enum tipc_status launch_secret(struct launch_opts *o)
{
    const char *env = getenv("TIPC_JOB_TOKEN"), *file = getenv("TIPC_JOB_TOKEN_FILE");
    if (env && *env) {
        o->token = xstrdup(env);
        return TIPC_OK;
    }
    if (file && *file) return read_secret_file(file, "TIPC_JOB_TOKEN_FILE", &o->token);
    if (o->nnodes == 1) {   /* nobody else needs to know it: the ranks get it in their environment */
        unsigned char r[SECRET_BYTES];
        if (RAND_bytes(r, sizeof r) != 1) return error_msg(TIPC_EDIST, "launch: no random bytes (RAND_bytes failed)");
        o->token = hex(r, sizeof r);
        return TIPC_OK;
    }
    if (all_nodes_here(o)) {   /* every node is this user's process on this host */
        char *secret = NULL;
        TRY(host_secret(&secret));
        /* one token per job: the label, the job id and the job's fingerprint (what every node of
         * the job agrees on), so two jobs of this user never share one */
        char *fp = launch_fingerprint(o);
        char *label = xasprintf("tipc job token v2|%s|%s", o->job_id ? o->job_id : "", fp);
        unsigned char mac[EVP_MAX_MD_SIZE];
        unsigned int ml = 0;
        bool ok = HMAC(EVP_sha256(), secret, (int)strlen(secret), (const unsigned char *)label, strlen(label),
                       mac, &ml) != NULL;
        free(label), free(fp);
        OPENSSL_cleanse(secret, strlen(secret));
        free(secret);
        if (!ok) return error_msg(TIPC_EDIST, "launch: HMAC-SHA256 failed");
        o->token = hex(mac, ml);
        return TIPC_OK;
    }
    error_msg(TIPC_EUSAGE, "launch: node %d: a job over several hosts needs a shared secret, and none is set",
              o->node_rank);
    error_hint("export the same TIPC_JOB_TOKEN on every node (e.g. $(head -c32 /dev/urandom | xxd -p -c64)), "
               "or TIPC_JOB_TOKEN_FILE=PATH to a file of yours with mode 0600");
    return TIPC_EUSAGE;
}
