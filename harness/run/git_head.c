/* git_head.c: HEAD, the branch it names and the commit that branch points at, read from the repository's files.
 * It must never follow anything but regular files, nor read more than a small HEAD or ref file holds. */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "git_head.h"

/* a + "/" + b (b alone when a is NULL) into out; false when it does not fit: such a path is not used. */
static bool path_of(char *out, size_t len, const char *a, const char *b)
{
    int n = a ? snprintf(out, len, "%s/%s", a, b) : snprintf(out, len, "%s", b);
    return n >= 0 && (size_t)n < len;
}

/* The first line of a small regular file into out; false when there is none. */
static bool first_line(const char *path, char *out, size_t len)
{
    struct stat st;
    if (stat(path, &st) || !S_ISREG(st.st_mode) || st.st_size > 4096)
        return false;
    FILE *f = fopen(path, "r");
    bool ok = f && fgets(out, (int)len, f);
    if (f)
        fclose(f);
    if (ok)
        out[strcspn(out, "\r\n")] = '\0';
    return ok && out[0];
}

static bool is_sha(const char *s)
{
    size_t n = strspn(s, "0123456789abcdef");
    return n == 40 && (s[40] == '\0' || s[40] == ' ');
}

/* The folder holding HEAD (a checkout's .git folder, or what a .git file or a worktree names) and the one holding
 * refs (commondir for worktrees). */
static bool find_git_dir(char *git, size_t git_len, char *common, size_t common_len)
{
    char dir[PATH_MAX];
    if (!getcwd(dir, sizeof dir))
        return false;
    for (;;) {
        char cand[PATH_MAX], line[PATH_MAX];
        struct stat st;
        if (path_of(cand, sizeof cand, dir, ".git") && !stat(cand, &st)) {
            bool ok;
            if (S_ISDIR(st.st_mode))
                ok = path_of(git, git_len, NULL, cand);
            else if (first_line(cand, line, sizeof line) && !strncmp(line, "gitdir: ", 8))
                /* a .git file: its gitdir is absolute, or relative to the folder holding it */
                ok = path_of(git, git_len, line[8] == '/' ? NULL : dir, line + 8);
            else
                return false;
            char cd[PATH_MAX];
            if (!ok || !path_of(common, common_len, NULL, git) || !path_of(cd, sizeof cd, git, "commondir"))
                return false;
            if (first_line(cd, line, sizeof line) && !path_of(common, common_len, line[0] == '/' ? NULL : git, line))
                return false;
            return true;
        }
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir)
            return false;
        *slash = '\0';
    }
}

/* refs/heads/NAME's commit: its loose file, else its line in packed-refs. */
static bool ref_commit(const char *common, const char *ref, char *out, size_t len)
{
    char path[PATH_MAX], line[512];
    if (path_of(path, sizeof path, common, ref) && first_line(path, line, sizeof line) && is_sha(line)) {
        snprintf(out, len, "%.40s", line);
        return true;
    }
    struct stat st;
    if (!path_of(path, sizeof path, common, "packed-refs") || stat(path, &st) || !S_ISREG(st.st_mode))
        return false;
    FILE *f = fopen(path, "r");
    bool found = false;
    while (f && !found && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (is_sha(line) && !strcmp(line + 41, ref)) {
            snprintf(out, len, "%.40s", line);
            found = true;
        }
    }
    if (f)
        fclose(f);
    return found;
}

void mlk_git_head(char *commit, size_t commit_len, char *branch, size_t branch_len)
{
    commit[0] = branch[0] = '\0';
    char git[PATH_MAX], common[PATH_MAX], head[PATH_MAX], line[512];
    if (!find_git_dir(git, sizeof git, common, sizeof common) || !path_of(head, sizeof head, git, "HEAD") ||
        !first_line(head, line, sizeof line))
        return;
    if (is_sha(line)) { /* detached */
        snprintf(commit, commit_len, "%.40s", line);
        snprintf(branch, branch_len, "HEAD");
        return;
    }
    if (strncmp(line, "ref: ", 5))
        return;
    const char *ref = line + 5;
    snprintf(branch, branch_len, "%s", !strncmp(ref, "refs/heads/", 11) ? ref + 11 : ref);
    ref_commit(common, ref, commit, commit_len);
}
