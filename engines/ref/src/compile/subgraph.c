/* subgraph.c: compiles the subgraphs of a node (If's branches, Loop's and Scan's bodies) as compiled models of
 * their own, whose outer-scope reads are the parent's constants or inputs bound at run time.
 * It must never compile a subgraph before every value its node reads is final (constant or not). */
#include <string.h>

#include "../alloc.h"
#include "compiled.h"

int ref_compile_node_subs(ref_compiled *c, int k, ref_error *err)
{
    ref_exec_node *e = &c->nodes[k];
    const ref_node *n = e->node;
    int count = 0;
    for (int a = 0; a < n->n_attrs; a++)
        count += n->attrs[a].g != NULL;
    if (!count || e->subs)
        return REF_OK;
    e->subs = ref_calloc((size_t)count, sizeof *e->subs);
    if (!e->subs)
        return ref_fail(err, REF_E_NOMEM, "compile: out of memory for %d subgraphs", count);
    for (int a = 0; a < n->n_attrs; a++) {
        if (!n->attrs[a].g)
            continue;
        int rc = ref_compile_sub(c, k, n->attrs[a].g, &e->subs[e->n_subs], err);
        if (rc)
            return ref_fail_prefix(err, "subgraph '%s': ", n->attrs[a].name);
        e->n_subs++;
    }
    return REF_OK;
}
