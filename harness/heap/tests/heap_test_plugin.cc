// heap_test_plugin.cc: a small C++ library test_heap_shim dlopens locally, as memleak-run loads an engine.
// It must never allocate except in the two calls below, so the test can count every operator call.
#include <cstddef>
#include <vector>

namespace {
std::vector<char *> held;
}

// Holds n blocks of 4 KiB from new[]: exactly n + 1 operator new calls (the vector reserves once).
extern "C" __attribute__((visibility("default"))) int heap_plugin_hold(int n)
{
    held.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; i++) {
        char *p = new char[4096];
        p[0] = static_cast<char>(i);
        held.push_back(p);
    }
    return static_cast<int>(held.size());
}

// Deletes every held block and the vector's buffer: n + 1 operator delete calls; returns n.
extern "C" __attribute__((visibility("default"))) int heap_plugin_release(void)
{
    int n = static_cast<int>(held.size());
    for (char *p : held)
        delete[] p;
    std::vector<char *>().swap(held);
    return n;
}
