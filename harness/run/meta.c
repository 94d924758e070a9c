/* meta.c: host, CPU, kernel, glibc, commit and branch for the run record.
 * It must never start a process (git's files are read: git_head.c), nor fail when git or /proc are missing. */
#include <gnu/libc-version.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "meta.h"
#include "git_head.h"
#include "text.h"

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '))
        s[--n] = '\0';
}

/* The option, else the first variable set, else git's; stored made safe (text.h): every comparison and report shows
 * it, and an environment or a ref name may hold any byte. */
static void pick(char *out, size_t len, const char *given, const char *const *env, const char *from_git)
{
    const char *v = given && given[0] ? given : NULL;
    for (int i = 0; !v && env[i]; i++)
        if (getenv(env[i]) && getenv(env[i])[0])
            v = getenv(env[i]);
    mlk_text_safe(v ? v : from_git, out, len, 0);
}

void mlk_meta_collect(mlk_meta *m, const char *commit, const char *branch)
{
    memset(m, 0, sizeof *m);
    static const char *const commit_env[] = {"MLK_COMMIT", "GITHUB_SHA", "CI_COMMIT_SHA", NULL};
    static const char *const branch_env[] = {"MLK_BRANCH", "GITHUB_REF_NAME", "CI_COMMIT_REF_NAME", NULL};
    char git_commit[64], git_branch[256];
    mlk_git_head(git_commit, sizeof git_commit, git_branch, sizeof git_branch);
    pick(m->commit, sizeof m->commit, commit, commit_env, git_commit);
    pick(m->branch, sizeof m->branch, branch, branch_env, git_branch);
    struct utsname u;
    if (!uname(&u)) {
        snprintf(m->host, sizeof m->host, "%s", u.nodename);
        snprintf(m->kernel, sizeof m->kernel, "%.60s %.60s", u.sysname, u.release);
    }
    snprintf(m->glibc, sizeof m->glibc, "%s", gnu_get_libc_version());
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
            snprintf(m->cpu, sizeof m->cpu, "%s", strchr(line, ':') + 2);
            trim(m->cpu);
            break;
        }
    if (f)
        fclose(f);
}

static const char *or_null(const char *s) { return s[0] ? s : NULL; }

void mlk_meta_fill(const mlk_meta *m, db_run_meta *out)
{
    out->commit_sha = or_null(m->commit);
    out->branch = or_null(m->branch);
    out->host = or_null(m->host);
    out->cpu = or_null(m->cpu);
    out->kernel = or_null(m->kernel);
    out->glibc = or_null(m->glibc);
}

void mlk_random_uuid(char out[33])
{
    unsigned char b[16];
    if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b) {
        uint64_t x = (uint64_t)time(NULL) * 6364136223846793005ULL ^ (uint64_t)getpid();
        for (int i = 0; i < 16; i++, x = x * 6364136223846793005ULL + 1442695040888963407ULL)
            b[i] = (unsigned char)(x >> 56);
    }
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
}
