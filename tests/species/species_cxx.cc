// species_cxx.cc: the C++ species of engine_species.so: operator new[] blocks that are never deleted.
// It must never delete what it loses, and never let an exception cross into C.
#include <cstddef>
#include <new>

extern "C" {
#include "species.h"
}

extern "C" void species_cxx_lose(size_t n)
{
    unsigned char *p = new (std::nothrow) unsigned char[n];
    species_lose(p, n);
}
