// test_heap_cxx.cc: checks libmemleak_heap.so with libstdc++ linked in: every operator new/delete variant,
// bad_alloc unwinding through the shim, and heavy std::vector/std::string/map use. Never sanitized.
#include "heap_test.h"

#include <malloc.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace {

// Escaping through a volatile global keeps the compiler from pairing up and eliding new and delete.
void *volatile sink;

struct alignas(256) Overaligned {
    char bytes[1000];
};

// A misaligned block is the shim's fault only if the allocator, called past the shim, aligns it.
// (Debian's mimalloc 2.0.9 returns `new` of a 1024-byte alignas(256) struct 128-aligned, shim or not.)
// Runs outside any measured window: dlopen allocates.
struct misaligned {
    const char *what;
    size_t n, align;
    void *p;
} misaligned_seen[8];
int n_misaligned;

void check_misaligned()
{
    void *h = heap_test_cxx_runtime();
    using aligned_new = void *(*)(size_t, std::align_val_t);
    using aligned_delete = void (*)(void *, std::align_val_t);
    auto direct_new = h ? reinterpret_cast<aligned_new>(dlsym(h, "_ZnwmSt11align_val_t")) : nullptr;
    auto direct_delete = h ? reinterpret_cast<aligned_delete>(dlsym(h, "_ZdlPvSt11align_val_t")) : nullptr;
    for (int i = 0; i < n_misaligned; i++) {
        const misaligned &m = misaligned_seen[i];
        bool allocator_too = false;
        if (direct_new && direct_delete) {
            void *q = direct_new(m.n, std::align_val_t(m.align));
            allocator_too = (reinterpret_cast<uintptr_t>(q) & (m.align - 1)) != 0;
            direct_delete(q, std::align_val_t(m.align));
        }
        HT_CHECK(allocator_too, "%s(%zu): %p not aligned to %zu, though the allocator aligns it", m.what, m.n, m.p,
                 m.align);
        if (allocator_too)
            printf("note: under %s, %s(%zu) is misaligned to %zu without the shim too: the allocator's bug\n",
                   getenv("MLK_HEAP_ALLOCATOR"), m.what, m.n, m.align);
    }
    if (h)
        dlclose(h);
}

// One operator: +1 alloc, live grows by the block's usable size (at least n), the delete takes it back.
template <typename New, typename Delete>
void check_pair(const char *what, size_t n, size_t align, New make, Delete drop)
{
    mlk_heap_stats s0 = heap_test_stats();
    void *p = make();
    sink = p;
    mlk_heap_stats d = heap_test_delta(s0, heap_test_stats());
    HT_CHECK(p != nullptr, "%s(%zu) returned NULL", what, n);
    if (!p)
        return;
    size_t usable = malloc_usable_size(p);
    HT_CHECK(d.n_allocs == 1 && d.n_frees == 0, "%s(%zu): +%lld allocs +%lld frees, want +1 +0", what, n,
             (long long)d.n_allocs, (long long)d.n_frees);
    HT_CHECK(d.live_bytes == (int64_t)usable && usable >= n, "%s(%zu): live %+lld, usable %zu", what, n,
             (long long)d.live_bytes, usable);
    if (align && (reinterpret_cast<uintptr_t>(p) & (align - 1)) != 0 && n_misaligned < 8)
        misaligned_seen[n_misaligned++] = {what, n, align, p};
    static_cast<volatile char *>(p)[n ? n - 1 : 0] = 1;
    s0 = heap_test_stats();
    drop(p);
    d = heap_test_delta(s0, heap_test_stats());
    HT_CHECK(d.n_frees == 1 && d.n_allocs == 0 && d.live_bytes == -(int64_t)usable,
             "delete after %s(%zu): +%lld frees live %+lld, want +1 -%zu", what, n, (long long)d.n_frees,
             (long long)d.live_bytes, usable);
}

void test_operators()
{
    mlk_heap_stats base = heap_test_stats();
    int n_pairs = 0;
    for (size_t n : {size_t(0), size_t(8), size_t(100), size_t(5000), size_t(1) << 20}) {
        std::align_val_t al{64}, big{4096};
        check_pair("new", n, 0, [&] { return ::operator new(n); }, [](void *p) { ::operator delete(p); });
        check_pair("new[]", n, 0, [&] { return ::operator new[](n); }, [](void *p) { ::operator delete[](p); });
        check_pair("new nothrow", n, 0, [&] { return ::operator new(n, std::nothrow); },
                   [](void *p) { ::operator delete(p, std::nothrow); });
        check_pair("new[] nothrow", n, 0, [&] { return ::operator new[](n, std::nothrow); },
                   [](void *p) { ::operator delete[](p, std::nothrow); });
        check_pair("new/sized delete", n, 0, [&] { return ::operator new(n); },
                   [&](void *p) { ::operator delete(p, n); });
        check_pair("new[]/sized delete[]", n, 0, [&] { return ::operator new[](n); },
                   [&](void *p) { ::operator delete[](p, n); });
        check_pair("new aligned", n, 64, [&] { return ::operator new(n, al); },
                   [&](void *p) { ::operator delete(p, al); });
        check_pair("new[] aligned", n, 4096, [&] { return ::operator new[](n, big); },
                   [&](void *p) { ::operator delete[](p, big); });
        check_pair("new aligned nothrow", n, 64, [&] { return ::operator new(n, al, std::nothrow); },
                   [&](void *p) { ::operator delete(p, al, std::nothrow); });
        check_pair("new[] aligned nothrow", n, 4096, [&] { return ::operator new[](n, big, std::nothrow); },
                   [&](void *p) { ::operator delete[](p, big, std::nothrow); });
        check_pair("new aligned/sized delete", n, 64, [&] { return ::operator new(n, al); },
                   [&](void *p) { ::operator delete(p, n, al); });
        check_pair("new[] aligned/sized delete[]", n, 4096, [&] { return ::operator new[](n, big); },
                   [&](void *p) { ::operator delete[](p, n, big); });
        n_pairs += 12;
    }
    check_pair("new-expression overaligned", sizeof(Overaligned), alignof(Overaligned),
               [] { return static_cast<void *>(new Overaligned); },
               [](void *p) { delete static_cast<Overaligned *>(p); });
    n_pairs++;
    mlk_heap_stats d = heap_test_delta(base, heap_test_stats());
    HT_CHECK(d.live_bytes == 0 && d.n_allocs == n_pairs && d.n_frees == n_pairs,
             "operators: live %+lld, +%lld allocs +%lld frees for %d pairs", (long long)d.live_bytes,
             (long long)d.n_allocs, (long long)d.n_frees, n_pairs);
    check_misaligned();
}

// Whether fn throws bad_alloc, found in a child process: an allocator may abort instead.
template <typename F> bool throws_bad_alloc(F fn)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit no_core = {0, 0}; // an allocator that aborts here must not leave a core file behind
        setrlimit(RLIMIT_CORE, &no_core);
        try {
            fn();
        } catch (const std::bad_alloc &) {
            _exit(0);
        }
        _exit(1);
    }
    int status = 0;
    return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// In process: two bad_allocs caught; only their exception objects came and went.
void check_bad_alloc_counts(size_t huge)
{
    mlk_heap_stats s0 = heap_test_stats();
    int n_caught = 0;
    try {
        sink = ::operator new(huge);
    } catch (const std::bad_alloc &) {
        n_caught++;
    }
    try {
        sink = ::operator new[](huge, std::align_val_t{64});
    } catch (const std::bad_alloc &) {
        n_caught++;
    }
    HT_CHECK(n_caught == 2, "operator new(%zu) did not throw bad_alloc twice (%d)", huge, n_caught);
    mlk_heap_stats d = heap_test_delta(s0, heap_test_stats());
    HT_CHECK(d.live_bytes == 0 && d.n_allocs == d.n_frees,
             "after bad_alloc: live %+lld, +%lld allocs +%lld frees (the exception objects only)",
             (long long)d.live_bytes, (long long)d.n_allocs, (long long)d.n_frees);
}


// A bad_alloc thrown by the allocator unwinds through the shim's frame; the shim must let it through where
// the allocator throws (Debian's mimalloc 2.0.9 aborts instead: then the shim must abort too), and still
// count afterwards. nothrow variants return NULL.
void test_bad_alloc()
{
    const size_t huge = SIZE_MAX / 4;
    void *h = heap_test_cxx_runtime();
    auto direct_new = h ? reinterpret_cast<void *(*)(size_t)>(dlsym(h, "_Znwm")) : nullptr;
    HT_CHECK(direct_new != nullptr, "no operator new found past the shim");
    bool allocator_throws = direct_new && throws_bad_alloc([&] { sink = direct_new(huge); });
    bool shim_throws = throws_bad_alloc([&] { sink = ::operator new(huge); });
    if (h)
        dlclose(h);
    HT_CHECK(shim_throws == allocator_throws, "operator new(%zu) %s through the shim, %s without", huge,
             shim_throws ? "throws" : "does not throw", allocator_throws ? "throws" : "does not throw");
    if (!allocator_throws) {
        printf("note: under %s, a failed operator new aborts instead of throwing bad_alloc (so it does with the "
               "shim); skipping the in-process check\n", getenv("MLK_HEAP_ALLOCATOR"));
    } else {
        check_bad_alloc_counts(huge);
    }
    mlk_heap_stats s0 = heap_test_stats();
    void *p = ::operator new(huge, std::nothrow);
    void *q = ::operator new(huge, std::align_val_t{64}, std::nothrow);
    mlk_heap_stats d = heap_test_delta(s0, heap_test_stats());
    HT_CHECK(p == nullptr && q == nullptr, "nothrow new(%zu) gave %p, %p", huge, p, q);
    // libstdc++'s nothrow new catches a bad_alloc from operator new: its exception object comes and goes.
    HT_CHECK(d.live_bytes == 0 && d.n_allocs == d.n_frees,
             "nothrow failures: live %+lld +%lld allocs +%lld frees", (long long)d.live_bytes,
             (long long)d.n_allocs, (long long)d.n_frees);
    check_pair("new after bad_alloc", 64, 0, [] { return ::operator new(64); }, [](void *r) { ::operator delete(r); });
}

// Containers of every shape; returns a checksum so nothing is optimised away.
size_t churn(unsigned seed, int n)
{
    std::vector<std::string> strings;
    std::map<int, std::string> ordered;
    std::unordered_map<std::string, std::vector<int>> hashed;
    std::vector<std::shared_ptr<std::string>> shared;
    size_t sum = 0;
    for (int i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        std::string s(16 + seed % 300, static_cast<char>('a' + i % 26));
        s += std::to_string(seed);
        strings.push_back(s);
        if (i % 4 == 0)
            ordered[static_cast<int>(seed % 5000)] = s + "!";
        if (i % 8 == 0)
            hashed[s.substr(0, 20)].push_back(i);
        if (i % 16 == 0)
            shared.push_back(std::make_shared<std::string>(s));
        if (i % 1000 == 999) {
            sum += strings.size();
            strings.clear();
            strings.shrink_to_fit();
        }
    }
    return sum + ordered.size() + hashed.size() + shared.size();
}

void test_containers()
{
    mlk_heap_stats s0 = heap_test_stats();
    size_t sum = churn(1, 100000);
    mlk_heap_stats d = heap_test_delta(s0, heap_test_stats());
    HT_CHECK(sum > 0, "churn did nothing");
    HT_CHECK(d.live_bytes == 0, "containers: live %+lld after every container died", (long long)d.live_bytes);
    HT_CHECK(d.n_allocs == d.n_frees && d.n_allocs >= 100000, "containers: +%lld allocs +%lld frees",
             (long long)d.n_allocs, (long long)d.n_frees);
    printf("containers: %lld allocations, peak %lld bytes\n", (long long)d.n_allocs,
           (long long)heap_test_stats().peak_bytes);
}

// The same churn on 4 threads, measured between gates so thread start-up and exit stay outside.
void test_container_threads()
{
    const int n_threads = 4;
    std::atomic<int> n_ready{0}, n_done{0};
    std::atomic<bool> go{false}, leave{false};
    std::atomic<size_t> total{0};
    std::vector<std::thread> threads;
    threads.reserve(n_threads);
    for (int t = 0; t < n_threads; t++) {
        threads.emplace_back([&, t] {
            n_ready++;
            while (!go)
                std::this_thread::yield();
            total += churn(static_cast<unsigned>(t) + 7u, 50000);
            n_done++;
            while (!leave)
                std::this_thread::yield();
        });
    }
    while (n_ready < n_threads)
        std::this_thread::yield();
    mlk_heap_stats s0 = heap_test_stats();
    go = true;
    while (n_done < n_threads)
        std::this_thread::yield();
    mlk_heap_stats d = heap_test_delta(s0, heap_test_stats());
    leave = true;
    for (auto &th : threads)
        th.join();
    HT_CHECK(total > 0, "threads churned nothing");
    HT_CHECK(d.live_bytes == 0 && d.n_allocs == d.n_frees && d.n_allocs >= 4 * 50000,
             "container threads: live %+lld, +%lld allocs +%lld frees", (long long)d.live_bytes,
             (long long)d.n_allocs, (long long)d.n_frees);
}

} // namespace

int main()
{
    int rc = heap_test_setup();
    if (rc)
        return rc;
    test_operators();
    test_bad_alloc();
    test_containers();
    test_container_threads();
    return heap_test_finish("test_heap_cxx");
}
