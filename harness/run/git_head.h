/* git_head.h: the commit and branch of the git checkout around the current folder, read from its files (HEAD, refs,
 * packed-refs; worktrees and `.git` files included), so that memleak-run never starts git. It must never write. */
#ifndef MLK_GIT_HEAD_H
#define MLK_GIT_HEAD_H

#include <stddef.h>

/* commit (40 hex digits) and branch ("HEAD" when detached, as git rev-parse --abbrev-ref says) of the checkout holding
 * the current folder; each left "" when it cannot be found. */
void mlk_git_head(char *commit, size_t commit_len, char *branch, size_t branch_len);

#endif
