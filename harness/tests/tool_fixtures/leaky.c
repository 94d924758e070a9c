/* leaky.c: a program that leaks every kind valgrind's LEAK SUMMARY counts, at known sizes, for test_tool_valgrind.
 * It must never be sanitized (valgrind cannot run an ASan binary) and never let the compiler drop an allocation:
 * every block is written through a volatile pointer. */
#include <stdlib.h>
#include <string.h>

struct node {
    struct node *next;
    char pad[24];
};

static void *volatile reachable; /* still reachable: a global points at its start */
static char *volatile interior;  /* possibly lost: only a pointer into its middle survives */

__attribute__((noinline)) static void *block(size_t n)
{
    volatile char *p = malloc(n);
    if (!p)
        exit(2);
    for (size_t i = 0; i < n; i++)
        p[i] = (char)i;
    return (void *)p;
}

__attribute__((noinline)) static void definitely(int k)
{
    for (int i = 0; i < k; i++)
        block(100); /* dropped: 100 bytes per call, definitely lost */
}

/* A definitely lost head owning two indirectly lost blocks: XML reports the head with them (direct + indirect). */
__attribute__((noinline)) static void owned_chain(void)
{
    struct node *a = block(sizeof *a), *b = block(sizeof *b);
    a->next = b;
    b->next = block(sizeof *b);
    b->next->next = NULL;
}

int main(void)
{
    definitely(3);
    owned_chain();
    reachable = block(77);
    interior = (char *)block(64) + 8;
    return 0;
}
