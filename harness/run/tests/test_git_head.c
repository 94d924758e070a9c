/* test_git_head.c: commit and branch read from git's files as git lays them out: a loose ref, a packed ref, a
 * detached HEAD, a worktree's .git file with commondir, a subfolder of the checkout, and no checkout at all.
 * It must never run git, nor leave its folders behind. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "git_head.h"
#include "mlk_check.h"

static char root[64];

static void put(const char *rel, const char *text)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    FILE *f = fopen(p, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void dir(const char *rel)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    CHECK(mkdir(p, 0755) == 0);
}

static void head_in(const char *rel, const char *commit, const char *branch)
{
    char p[PATH_MAX], c[64], b[256];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    CHECK(chdir(p) == 0);
    mlk_git_head(c, sizeof c, b, sizeof b);
    CHECK(!strcmp(c, commit));
    CHECK(!strcmp(b, branch));
    if (strcmp(c, commit) || strcmp(b, branch))
        fprintf(stderr, "  in %s: got '%s' '%s'\n", rel, c, b);
}

#define SHA1 "0123456789abcdef0123456789abcdef01234567"
#define SHA2 "89abcdef0123456789abcdef0123456789abcdef"
#define SHA3 "fedcba9876543210fedcba9876543210fedcba98"

int main(void)
{
    snprintf(root, sizeof root, "/tmp/mlk-test-git-%d", (int)getpid());
    CHECK(mkdir(root, 0755) == 0);
    dir("repo");
    dir("repo/.git");
    dir("repo/.git/refs");
    dir("repo/.git/refs/heads");
    dir("repo/.git/refs/heads/feat");
    dir("repo/src");
    put("repo/.git/HEAD", "ref: refs/heads/feat/x\n");
    put("repo/.git/refs/heads/feat/x", SHA1 "\n");
    head_in("repo", SHA1, "feat/x");
    head_in("repo/src", SHA1, "feat/x"); /* from a subfolder: the checkout above */
    /* packed: no loose file, a line in packed-refs */
    put("repo/.git/HEAD", "ref: refs/heads/main\n");
    put("repo/.git/packed-refs", "# pack-refs with: peeled fully-peeled sorted \n" SHA3 " refs/heads/feat/y\n" SHA2
                                 " refs/heads/main\n");
    head_in("repo", SHA2, "main");
    /* detached */
    put("repo/.git/HEAD", SHA3 "\n");
    head_in("repo", SHA3, "HEAD");
    /* a worktree: .git is a file naming its gitdir, whose commondir holds the refs */
    put("repo/.git/HEAD", "ref: refs/heads/main\n");
    dir("repo/.git/worktrees");
    dir("repo/.git/worktrees/wt");
    put("repo/.git/worktrees/wt/HEAD", "ref: refs/heads/feat/x\n");
    put("repo/.git/worktrees/wt/commondir", "../..\n");
    dir("wt");
    char line[PATH_MAX + 16];
    snprintf(line, sizeof line, "gitdir: %s/repo/.git/worktrees/wt\n", root);
    put("wt/.git", line);
    head_in("wt", SHA1, "feat/x");
    /* no checkout anywhere above: empty, never a failure */
    CHECK(chdir("/") == 0);
    char c[64], b[256];
    mlk_git_head(c, sizeof c, b, sizeof b);
    CHECK(c[0] == '\0' && b[0] == '\0');
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    CHECK(system(cmd) == 0);
    return check_summary();
}
