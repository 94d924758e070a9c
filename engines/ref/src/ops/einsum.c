/* einsum.c: Einsum: an equation's labels (letters, and "..." for broadcast dims) give every input dim a label;
 * each output element sums, over the labels the output lacks, the product of the inputs at those labels (a
 * repeated label within one input walks its diagonal). A direct loop, accumulated in double. It must never
 * index an input with a label size it does not have: sizes are checked (1 broadcasts under "...") at infer. */
#include <string.h>

#include "op.h"
#include "reduce_elem.h"

#define EIN_LETTERS 52                      /* a-z, A-Z */
#define EIN_LABELS (EIN_LETTERS + REF_MAX_RANK) /* then one per ellipsis dim */
#define EIN_MAX_IN 8

typedef struct {
    int n_in;
    int rank[EIN_MAX_IN], out_rank;
    int label[EIN_MAX_IN][REF_MAX_RANK], out_label[REF_MAX_RANK];
    int64_t size[EIN_LABELS];
    bool used[EIN_LABELS], in_out[EIN_LABELS];
    int n_sum, sum[EIN_LABELS]; /* labels summed over */
} ein_plan;

static int letter(char ch)
{
    if (ch >= 'a' && ch <= 'z')
        return ch - 'a';
    if (ch >= 'A' && ch <= 'Z')
        return 26 + ch - 'A';
    return -1;
}

/* Labels of one term ("ab...c") for a tensor of rank r; ellipsis dims right-aligned as labels 52.. */
static int parse_term(ref_op_ctx *c, const char *t, size_t len, int r, int *labels, int *n, int *ell_rank)
{
    int letters = 0, at = 0;
    bool ell = false;
    for (size_t i = 0; i < len; i++)
        if (t[i] == '.') {
            if (i + 2 >= len || t[i + 1] != '.' || t[i + 2] != '.' || ell)
                return ref_fail(c->err, REF_E_PARSE, "Einsum: bad ellipsis in '%.*s'", (int)len, t);
            ell = true;
            i += 2;
        } else if (letter(t[i]) >= 0) {
            letters++;
        } else {
            return ref_fail(c->err, REF_E_PARSE, "Einsum: '%c' in '%.*s'", t[i], (int)len, t);
        }
    int er = r < 0 ? *ell_rank : r - letters;
    if (er < 0 || (!ell && er != 0) || letters + er > REF_MAX_RANK)
        return ref_fail(c->err, REF_E_SHAPE, "Einsum: term '%.*s' for rank %d", (int)len, t, r);
    if (ell && r >= 0 && er > *ell_rank)
        *ell_rank = er;
    for (size_t i = 0; i < len; i++) {
        if (t[i] == '.') {
            int total = r < 0 ? *ell_rank : er;
            for (int k = 0; k < total; k++)
                labels[at++] = EIN_LETTERS + (*ell_rank - total) + k;
            i += 2;
        } else {
            labels[at++] = letter(t[i]);
        }
    }
    *n = at;
    return REF_OK;
}

static int ein_plan_build(ref_op_ctx *c, ein_plan *p)
{
    const char *eq = ref_attr_str_or(c->node, "equation", NULL);
    char buf[256];
    size_t n = 0;
    for (const char *s = eq ? eq : ""; *s && n + 1 < sizeof buf; s++)
        if (*s != ' ')
            buf[n++] = *s;
    buf[n] = '\0';
    memset(p, 0, sizeof *p);
    if (!eq || c->n_in < 1 || c->n_in > EIN_MAX_IN)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "Einsum needs an equation and 1 to %d inputs", EIN_MAX_IN);
    char *arrow = strstr(buf, "->");
    size_t lhs = arrow ? (size_t)(arrow - buf) : n;
    int ell_rank = 0, rc = REF_OK;
    /* Twice: the first pass finds the widest ellipsis, which the second right-aligns every input's to. */
    for (int pass = 0; pass < 2; pass++) {
        const char *t = buf;
        for (int i = 0; i < c->n_in && !rc; i++) {
            const char *end = memchr(t, ',', lhs - (size_t)(t - buf));
            size_t len = end ? (size_t)(end - t) : lhs - (size_t)(t - buf);
            if ((i + 1 < c->n_in) != (end != NULL))
                return ref_fail(c->err, REF_E_PARSE, "Einsum: '%s' does not have %d input terms", buf, c->n_in);
            rc = parse_term(c, t, len, c->in[i]->rank, p->label[i], &p->rank[i], &ell_rank);
            t = end ? end + 1 : t;
        }
    }
    for (int i = 0; i < c->n_in && !rc; i++)
        for (int d = 0; d < p->rank[i]; d++) {
            int l = p->label[i][d];
            int64_t s = c->in[i]->dims[d];
            p->used[l] = true;
            if (p->size[l] == 0 || p->size[l] == 1)
                p->size[l] = s > p->size[l] || p->size[l] == 0 ? s : p->size[l];
            else if (s != p->size[l] && !(l >= EIN_LETTERS && s == 1))
                return ref_fail(c->err, REF_E_SHAPE, "Einsum: label sizes %lld and %lld disagree", (long long)s,
                                (long long)p->size[l]);
        }
    if (rc)
        return rc;
    if (arrow) {
        rc = parse_term(c, arrow + 2, strlen(arrow + 2), -1, p->out_label, &p->out_rank, &ell_rank);
    } else { /* implicit: ellipsis dims, then letters used once, alphabetically */
        for (int k = 0; k < ell_rank; k++)
            p->out_label[p->out_rank++] = EIN_LETTERS + k;
        for (int l = 0; l < EIN_LETTERS; l++) {
            int count = 0;
            for (int i = 0; i < c->n_in; i++)
                for (int d = 0; d < p->rank[i]; d++)
                    count += p->label[i][d] == l;
            if (count == 1)
                p->out_label[p->out_rank++] = l;
        }
    }
    for (int d = 0; d < p->out_rank && !rc; d++) {
        if (!p->used[p->out_label[d]] || p->in_out[p->out_label[d]])
            return ref_fail(c->err, REF_E_PARSE, "Einsum: output label %d repeated or unknown", d);
        p->in_out[p->out_label[d]] = true;
    }
    for (int l = 0; l < EIN_LABELS; l++)
        if (p->used[l] && !p->in_out[l])
            p->sum[p->n_sum++] = l;
    return rc;
}

static int ein_infer(ref_op_ctx *c)
{
    ein_plan p;
    int rc = ein_plan_build(c, &p);
    if (rc)
        return rc;
    for (int i = 0; i < c->n_in; i++)
        if (c->in[i]->dtype != c->in[0]->dtype || !ref_dtype_size(c->in[i]->dtype) || c->in[i]->dtype == REF_DT_BOOL)
            return ref_fail(c->err, REF_E_UNSUPPORTED, "Einsum: inputs of one numeric type");
    c->out[0]->dtype = c->in[0]->dtype;
    c->out[0]->rank = p.out_rank;
    for (int d = 0; d < p.out_rank; d++)
        c->out[0]->dims[d] = p.size[p.out_label[d]];
    return REF_OK;
}

static int ein_run(ref_op_ctx *c)
{
    ein_plan p;
    int rc = ein_plan_build(c, &p);
    if (rc)
        return rc;
    int64_t stride[EIN_MAX_IN][EIN_LABELS];
    memset(stride, 0, sizeof stride);
    for (int i = 0; i < c->n_in; i++)
        for (int64_t d = p.rank[i] - 1, s = 1; d >= 0; s *= c->in[i]->dims[d], d--)
            if (c->in[i]->dims[d] != 1 || p.size[p.label[i][d]] == 1)
                stride[i][p.label[i][d]] += s;
    ref_tensor *y = c->out[0];
    int64_t n_out = ref_tensor_numel(y), n_sum = 1, idx[EIN_LABELS];
    for (int k = 0; k < p.n_sum; k++)
        n_sum *= p.size[p.sum[k]];
    for (int64_t o = 0; o < n_out; o++) {
        int64_t rest = o;
        for (int d = p.out_rank - 1; d >= 0; d--) {
            idx[p.out_label[d]] = rest % y->dims[d];
            rest /= y->dims[d];
        }
        double acc = 0;
        for (int64_t s = 0; s < n_sum; s++) {
            rest = s;
            for (int k = p.n_sum - 1; k >= 0; k--) {
                idx[p.sum[k]] = rest % p.size[p.sum[k]];
                rest /= p.size[p.sum[k]];
            }
            double prod = 1;
            for (int i = 0; i < c->n_in; i++) {
                int64_t at = 0;
                for (int l = 0; l < EIN_LABELS; l++)
                    if (stride[i][l])
                        at += idx[l] * stride[i][l];
                prod *= ref_elem_ld(c->in[i]->data, c->in[i]->dtype, at);
            }
            acc += prod;
        }
        ref_elem_st(y->data, y->dtype, o, acc);
    }
    return REF_OK;
}

const ref_op ref_ops_einsum[] = {
    {.name = "Einsum", .infer = ein_infer, .run = ein_run},
    {.name = NULL},
};
