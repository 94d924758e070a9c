/* scope.h: outer-scope names of subgraphs, and the string set that collects them (first-insertion order kept).
 * It must never copy a name: every name is borrowed from the model and lives as long as it. */
#ifndef REF_SCOPE_H
#define REF_SCOPE_H

#include <stdbool.h>

#include "../model.h"

typedef struct ref_strset {
    const char **names; /* n names in insertion order */
    int n;
    int *slots;         /* open addressing over names, cap entries (a power of two), -1 empty */
    size_t cap;
} ref_strset;

/* Add name unless present. REF_E_NOMEM on allocation failure (the set is unchanged). */
int ref_strset_add(ref_strset *s, const char *name);
bool ref_strset_has(const ref_strset *s, const char *name);
/* Free the arrays; the set is empty and reusable afterwards. */
void ref_strset_free(ref_strset *s);

/* Add to out every name g reads but does not define (node inputs, its subgraphs' outer names, outputs),
 * in first-use order. REF_E_NOMEM on allocation failure. */
int ref_scope_free_names(const ref_graph *g, ref_strset *out);
/* Add to out the outer names of every subgraph attribute of node n (its implicit inputs). */
int ref_scope_node_uses(const ref_node *n, ref_strset *out);

#endif
