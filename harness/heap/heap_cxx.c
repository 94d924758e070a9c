/* heap_cxx.c: libmemleak_heap.so's C++ half: operator new/delete (plain, array, nothrow, sized, aligned),
 * forwarded to the next definition and counted once. It must never swallow or invent a bad_alloc. */
#include "heap_shim_internal.h"

#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>

/* jemalloc, tcmalloc and mimalloc define these operators, libstdc++ too. Some bottom out in the allocator
 * (tcmalloc's, mimalloc's, jemalloc's plain new), others come back through the PLT (libstdc++'s call
 * malloc, aligned_alloc and ::operator delete; jemalloc's unsized deletes jump to free and its aligned
 * news call aligned_alloc), so each operator counts only if nothing inside it did (heap_shim_internal.h).
 * That also counts the bad_alloc object libstdc++ mallocs inside operator new and frees far outside it. */

enum {
    MLK_NEW, MLK_NEW_ARR, MLK_NEW_NT, MLK_NEW_ARR_NT, MLK_NEW_AL, MLK_NEW_ARR_AL, MLK_NEW_AL_NT,
    MLK_NEW_ARR_AL_NT, MLK_DEL, MLK_DEL_ARR, MLK_DEL_NT, MLK_DEL_ARR_NT, MLK_DEL_SZ, MLK_DEL_ARR_SZ,
    MLK_DEL_AL, MLK_DEL_ARR_AL, MLK_DEL_AL_NT, MLK_DEL_ARR_AL_NT, MLK_DEL_SZ_AL, MLK_DEL_ARR_SZ_AL,
    MLK_N_CXX
};

static const char *const mlk_cxx_names[MLK_N_CXX] = {
    "_Znwm", "_Znam", "_ZnwmRKSt9nothrow_t", "_ZnamRKSt9nothrow_t", "_ZnwmSt11align_val_t",
    "_ZnamSt11align_val_t", "_ZnwmSt11align_val_tRKSt9nothrow_t", "_ZnamSt11align_val_tRKSt9nothrow_t",
    "_ZdlPv", "_ZdaPv", "_ZdlPvRKSt9nothrow_t", "_ZdaPvRKSt9nothrow_t", "_ZdlPvm", "_ZdaPvm",
    "_ZdlPvSt11align_val_t", "_ZdaPvSt11align_val_t", "_ZdlPvSt11align_val_tRKSt9nothrow_t",
    "_ZdaPvSt11align_val_tRKSt9nothrow_t", "_ZdlPvmSt11align_val_t", "_ZdaPvmSt11align_val_t",
};

static void *mlk_cxx_slot[MLK_N_CXX];
/* Objects loaded (dlpi_adds) when a slot was last looked up in vain: a C engine that dlopens a C++ one
 * brings libstdc++ later, so a miss is retried, but only once something new has been loaded. */
static unsigned long long mlk_cxx_missed_at[MLK_N_CXX];

static int mlk_count_adds(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    *(unsigned long long *)data = info->dlpi_adds;
    return 1;
}

/* The next definition, else libstdc++'s when it was dlopened locally (RTLD_NEXT only sees the global
 * scope, yet such a library's references bind to the shim first). */
static void *mlk_cxx_lookup(int slot)
{
    unsigned long long adds = 0;
    dl_iterate_phdr(mlk_count_adds, &adds);
    if (adds && __atomic_load_n(&mlk_cxx_missed_at[slot], __ATOMIC_RELAXED) == adds)
        return NULL;
    void *fn = dlsym(RTLD_NEXT, mlk_cxx_names[slot]);
    if (!fn) {
        void *lib = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_NOLOAD);
        if (lib) {
            fn = dlsym(lib, mlk_cxx_names[slot]);
            dlclose(lib);
        }
    }
    if (fn)
        __atomic_store_n(&mlk_cxx_slot[slot], fn, __ATOMIC_RELEASE);
    else
        __atomic_store_n(&mlk_cxx_missed_at[slot], adds, __ATOMIC_RELAXED);
    return fn;
}

static inline void *mlk_cxx_next(int slot)
{
    void *fn = __atomic_load_n(&mlk_cxx_slot[slot], __ATOMIC_ACQUIRE);
    return MLK_LIKELY(fn) ? fn : mlk_cxx_lookup(slot);
}

void mlk_heap_cxx_resolve(void)
{
    if (!mlk_cxx_lookup(MLK_NEW))
        return; /* no C++ runtime yet; the first operator new call looks again */
    for (int i = MLK_NEW + 1; i < MLK_N_CXX; i++)
        mlk_cxx_lookup(i);
}

/* ------------------------------------------------------------------ fallbacks */

static _Noreturn void mlk_cxx_bad_alloc(void)
{
    void (*thrower)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "_ZSt17__throw_bad_allocv");
    if (thrower)
        thrower();
    mlk_heap_note("operator new failed and no C++ runtime is loaded to throw std::bad_alloc: aborting");
    abort(); /* operator new may not return NULL; this is what an uncaught bad_alloc would do */
}

/* No operator new after the shim (a libstdc++ linked statically into a locally loaded library, say):
 * serve from the allocator's malloc, as libstdc++ would, count it here, and throw through libstdc++. */
static void *mlk_cxx_fallback_new(size_t n_bytes, size_t align, bool nothrow)
{
    static _Atomic int noted;
    if (!atomic_exchange_explicit(&noted, 1, memory_order_relaxed))
        mlk_heap_note("no operator new after the shim: serving C++ allocations from malloc");
    if (!n_bytes)
        n_bytes = 1;
    void *p = align ? mlk_heap_aligned_raw(align, n_bytes) : mlk_heap_real.malloc(n_bytes);
    if (p)
        mlk_heap_on_alloc(p);
    else if (!nothrow)
        mlk_cxx_bad_alloc();
    return p;
}

/* ------------------------------------------------------------------ operators */

/* A throwing next operator unwinds through these frames: the shim is built with -fexceptions so they
 * have unwind tables, and they hold no state an exception could leave behind. */
#define MLK_NEW_OP(sym, slot, params, args, align, nothrow)                                                  \
    MLK_EXPORT void *sym params;                                                                             \
    MLK_EXPORT void *sym params                                                                              \
    {                                                                                                        \
        if (MLK_UNLIKELY(!mlk_heap_ready())) {                                                               \
            void *b = mlk_heap_boot_alloc(align, n);                                                         \
            if (!b && !nothrow)                                                                              \
                mlk_cxx_bad_alloc();                                                                         \
            return b;                                                                                        \
        }                                                                                                    \
        void *(*next) params = (void *(*) params)mlk_cxx_next(slot);                                         \
        if (MLK_UNLIKELY(!next))                                                                             \
            return mlk_cxx_fallback_new(n, align, nothrow);                                                  \
        uint64_t mark = mlk_heap_alloc_mark();                                                               \
        return mlk_heap_counted_asked(next args, mark, n);                                                   \
    }

#define MLK_DELETE_OP(sym, slot, params, args)                                                               \
    MLK_EXPORT void sym params;                                                                              \
    MLK_EXPORT void sym params                                                                               \
    {                                                                                                        \
        if (!p || MLK_UNLIKELY(mlk_heap_is_boot(p) || !mlk_heap_ready()))                                    \
            return;                                                                                          \
        void (*next) params = (void (*) params)mlk_cxx_next(slot);                                           \
        if (MLK_UNLIKELY(mlk_sites_on_free(p))) { /* the unwinder's own block: malloc'ed, never counted */     \
            mlk_heap_real.free(p);                                                                           \
            return;                                                                                          \
        }                                                                                                    \
        if (MLK_UNLIKELY(!next)) {                                                                           \
            mlk_heap_on_free(mlk_heap_size_of(p));                                                           \
            mlk_heap_real.free(p);                                                                           \
            return;                                                                                          \
        }                                                                                                    \
        int64_t n_bytes = mlk_heap_size_of(p);                                                               \
        uint64_t mark = mlk_heap_self.n_free_events;                                                         \
        next args;                                                                                           \
        mlk_heap_counted_free(n_bytes, mark);                                                                \
    }

/* align_val_t is an enum of size_t and nothrow_t is passed by reference: both are plain words here. */
MLK_NEW_OP(_Znwm, MLK_NEW, (size_t n), (n), 0, false)
MLK_NEW_OP(_Znam, MLK_NEW_ARR, (size_t n), (n), 0, false)
MLK_NEW_OP(_ZnwmRKSt9nothrow_t, MLK_NEW_NT, (size_t n, const void *nt), (n, nt), 0, true)
MLK_NEW_OP(_ZnamRKSt9nothrow_t, MLK_NEW_ARR_NT, (size_t n, const void *nt), (n, nt), 0, true)
MLK_NEW_OP(_ZnwmSt11align_val_t, MLK_NEW_AL, (size_t n, size_t al), (n, al), al, false)
MLK_NEW_OP(_ZnamSt11align_val_t, MLK_NEW_ARR_AL, (size_t n, size_t al), (n, al), al, false)
MLK_NEW_OP(_ZnwmSt11align_val_tRKSt9nothrow_t, MLK_NEW_AL_NT, (size_t n, size_t al, const void *nt),
           (n, al, nt), al, true)
MLK_NEW_OP(_ZnamSt11align_val_tRKSt9nothrow_t, MLK_NEW_ARR_AL_NT, (size_t n, size_t al, const void *nt),
           (n, al, nt), al, true)

MLK_DELETE_OP(_ZdlPv, MLK_DEL, (void *p), (p))
MLK_DELETE_OP(_ZdaPv, MLK_DEL_ARR, (void *p), (p))
MLK_DELETE_OP(_ZdlPvRKSt9nothrow_t, MLK_DEL_NT, (void *p, const void *nt), (p, nt))
MLK_DELETE_OP(_ZdaPvRKSt9nothrow_t, MLK_DEL_ARR_NT, (void *p, const void *nt), (p, nt))
MLK_DELETE_OP(_ZdlPvm, MLK_DEL_SZ, (void *p, size_t n), (p, n))
MLK_DELETE_OP(_ZdaPvm, MLK_DEL_ARR_SZ, (void *p, size_t n), (p, n))
MLK_DELETE_OP(_ZdlPvSt11align_val_t, MLK_DEL_AL, (void *p, size_t al), (p, al))
MLK_DELETE_OP(_ZdaPvSt11align_val_t, MLK_DEL_ARR_AL, (void *p, size_t al), (p, al))
MLK_DELETE_OP(_ZdlPvSt11align_val_tRKSt9nothrow_t, MLK_DEL_AL_NT, (void *p, size_t al, const void *nt),
              (p, al, nt))
MLK_DELETE_OP(_ZdaPvSt11align_val_tRKSt9nothrow_t, MLK_DEL_ARR_AL_NT, (void *p, size_t al, const void *nt),
              (p, al, nt))
MLK_DELETE_OP(_ZdlPvmSt11align_val_t, MLK_DEL_SZ_AL, (void *p, size_t n, size_t al), (p, n, al))
MLK_DELETE_OP(_ZdaPvmSt11align_val_t, MLK_DEL_ARR_SZ_AL, (void *p, size_t n, size_t al), (p, n, al))
