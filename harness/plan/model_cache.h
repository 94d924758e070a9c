/* model_cache.h: the cache of generated models: where it is (a folder only the user can write), what in it may be
 * used (a model whose hash matches the one written beside it when it was generated), and its litter (generation
 * folders of processes that are gone). It must never use a folder other users can write, nor trust a file by name. */
#ifndef MLK_MODEL_CACHE_H
#define MLK_MODEL_CACHE_H

#include <stdbool.h>

#include "status.h"

/* The cache folder, made when missing: option (--model-cache), else $XDG_CACHE_HOME/memleak/models, else
 * $HOME/.cache/memleak/models, else the passwd entry's home, else (none, or one that cannot be made: a note says so)
 * $TMPDIR or /tmp. When that folder is not the user's or others
 * may write it (a world-writable /tmp/.cache, --model-cache /tmp), the private folder memleak-UID inside it is used
 * instead: made 0700, and refused (MLK_E_PARSE naming why) when it is a link, another user's, or open to others.
 * *dir is malloc'd. */
int mlk_model_cache_dir(const char *option, char **dir, mlk_error *err);

/* Remove the generation folders (.gen-PID-KEY) in dir whose process is gone: what a run killed (SIGKILL, a power cut)
 * while it generated a model left behind. Folders of live processes are left alone. */
void mlk_model_cache_sweep(const char *dir);

/* Remove gen_dir (a generation folder: files only, no subfolders) and everything in it. */
void mlk_model_cache_remove(const char *gen_dir);

/* *ok: model (and model.data when there) hashes to what model.hash says. A missing or different hash is not an
 * error (*ok false, *why says which, static text: the caller generates it again); MLK_E_INTERRUPTED while hashing,
 * MLK_E_IO on a read error. */
int mlk_model_cache_verify(const char *model, bool *ok, const char **why, mlk_error *err);

/* Write model.hash (model and model.data when there) beside a model just generated, before it is moved into the
 * cache. MLK_E_IO, MLK_E_INTERRUPTED. */
int mlk_model_cache_seal(const char *model, mlk_error *err);

#endif
