/* test_onnx_truncate.c: hostile bytes for the reader: every truncation of real models and tensors, an SQLite-style
 * OOM loop over every allocation of a read, and single-byte corruption; each must fail cleanly and leak nothing.
 * It must never accept a cut model: every strict prefix of a model is an error that names a byte offset. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "check.h"
#include "model.h"
#include "onnx/pb.h"

#define DATA "/usr/share/libonnx-testdata/data"

static ref_error err;

static const char *models[] = {
    DATA "/pytorch-converted/test_Conv2d/model.onnx",
    DATA "/node/test_resize_upsample_scales_linear/model.onnx",
    DATA "/node/test_constant/model.onnx",
    DATA "/node/test_conv_with_strides_padding/model.onnx",
};

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc((size_t)n + 1);
    *len = p ? fread(p, 1, (size_t)n, f) : 0;
    fclose(f);
    return p;
}

static int64_t live(void)
{
    ref_alloc_stats s;
    ref_alloc_get_stats(&s);
    return s.live_bytes;
}

static ref_options opts_mmap(int on)
{
    ref_options o;
    ref_options_init(&o);
    o.mmap = on;
    return o;
}

/* Every prefix [0, cut) of every model, mmap on and off. Returns the number of offsets tried. */
static long test_truncation(void)
{
    long offsets = 0;
    for (size_t k = 0; k < sizeof models / sizeof models[0]; k++) {
        size_t len;
        uint8_t *buf = slurp(models[k], &len);
        CHECK(buf != NULL);
        if (!buf)
            continue;
        int bad = 0;
        for (size_t cut = 0; cut < len; cut++) {
            for (int mm = 0; mm < 2; mm++) {
                ref_options o = opts_mmap(mm);
                int64_t before = live();
                ref_model *m = NULL;
                err.msg[0] = 0;
                int rc = ref_model_read_buffer(buf, cut, &o, &m, &err);
                ref_model_free(m);
                if (rc == 0 || m || !err.msg[0] || !strstr(err.msg, "@ byte") || live() != before) {
                    if (bad++ < 5)
                        fprintf(stderr, "%s cut at %zu (mmap %d): rc %d, msg '%s', leaked %lld\n", models[k], cut, mm,
                                rc, err.msg, (long long)(live() - before));
                }
            }
            offsets++;
        }
        CHECK(bad == 0);
        /* The whole file still reads. */
        ref_model *m = NULL;
        CHECK_OK(ref_model_read_buffer(buf, len, NULL, &m, &err), &err);
        ref_model_free(m);
        free(buf);
    }
    return offsets;
}

/* Truncated files through ref_model_read (mapping and unmapping), at a stride. */
static void test_truncated_files(const char *dir)
{
    size_t len;
    uint8_t *buf = slurp(models[0], &len);
    if (!buf)
        return;
    char path[256];
    snprintf(path, sizeof path, "%s/cut.onnx", dir);
    int bad = 0;
    for (size_t cut = 0; cut < len; cut += 7) {
        FILE *f = fopen(path, "wb");
        if (!f)
            break;
        fwrite(buf, 1, cut, f);
        fclose(f);
        for (int mm = 0; mm < 2; mm++) {
            ref_options o = opts_mmap(mm);
            int64_t before = live();
            ref_model *m = NULL;
            int rc = ref_model_read(path, &o, &m, &err);
            ref_model_free(m);
            bad += rc == 0 || !strstr(err.msg, "@ byte") || !strstr(err.msg, path) || live() != before;
        }
    }
    CHECK(bad == 0);
    free(buf);
}

/* Every prefix of a serialized TensorProto fails too (raw_data is its last field). */
static void test_truncated_tensor(void)
{
    size_t len;
    uint8_t *buf = slurp(DATA "/pytorch-converted/test_Conv2d/test_data_set_0/input_0.pb", &len);
    CHECK(buf != NULL);
    if (!buf)
        return;
    int bad = 0;
    for (size_t cut = 0; cut < len; cut++) {
        int64_t before = live();
        ref_tensor t;
        void *data = NULL;
        char *name = NULL;
        int rc = ref_onnx_parse_tensor(buf, cut, &t, &data, &name, &err);
        if (!rc) {
            ref_free(data);
            ref_free(name);
        }
        bad += rc == 0 || !strstr(err.msg, "@ byte") || live() != before;
    }
    CHECK(bad == 0);
    free(buf);
}

/* ================================================================================================
 * OOM loop: fail allocation k (once) for k = 0, 1, ... until the operation succeeds.
 * ============================================================================================== */

typedef struct read_case {
    const char *what;
    const uint8_t *buf; /* read from memory ... */
    size_t len;
    const char *path;   /* ... or from this file */
} read_case;

static int do_read(const read_case *c, int mmap_on, ref_model **out)
{
    ref_options o = opts_mmap(mmap_on);
    return c->path ? ref_model_read(c->path, &o, out, &err) : ref_model_read_buffer(c->buf, c->len, &o, out, &err);
}

/* Returns the number of allocations the read makes (the first k that succeeds). */
static int oom_loop(const read_case *c, int mmap_on)
{
    int bad = 0, k;
    for (k = 0; k < 100000; k++) {
        int64_t before = live();
        ref_model *m = NULL;
        ref_alloc_fail_after(k, 0);
        int rc = do_read(c, mmap_on, &m);
        ref_alloc_fail_after(-1, 0);
        if (rc == 0) {
            ref_model_free(m);
            bad += live() != before;
            break;
        }
        if (rc != REF_E_NOMEM || m || live() != before) {
            if (bad++ < 3)
                fprintf(stderr, "%s (mmap %d) failing allocation %d: rc %d '%s', leaked %lld\n", c->what, mmap_on, k,
                        rc, err.msg, (long long)(live() - before));
        }
    }
    CHECK(bad == 0 && k > 0 && k < 100000);
    return k;
}

/* A model whose initializer lives in w.bin next to it, written with our own protobuf writer. */
static void write_external_model(const char *dir, char *path, size_t cap)
{
    static const float w6[6] = {1, 2, 3, 4, 5, 6};
    const int64_t d23[] = {2, 3};
    onnx_pbw w;
    onnx_pbw_init(&w, NULL);
    onnx_pbw_i64(&w, 1, 8);
    size_t g = onnx_pbw_begin(&w, 7);
    size_t n = onnx_pbw_begin(&w, 1);
    onnx_pbw_str(&w, 1, "w");
    onnx_pbw_str(&w, 2, "y");
    onnx_pbw_str(&w, 4, "Identity");
    onnx_pbw_end(&w, n);
    size_t t = onnx_pbw_begin(&w, 5);
    onnx_pbw_packed_i64(&w, 1, d23, 2);
    onnx_pbw_i64(&w, 2, REF_DT_FLOAT);
    onnx_pbw_str(&w, 8, "w");
    const char *kv[3][2] = {{"location", "w.bin"}, {"offset", "0"}, {"length", "24"}};
    for (int i = 0; i < 3; i++) {
        size_t e = onnx_pbw_begin(&w, 13);
        onnx_pbw_str(&w, 1, kv[i][0]);
        onnx_pbw_str(&w, 2, kv[i][1]);
        onnx_pbw_end(&w, e);
    }
    onnx_pbw_u64(&w, 14, 1);
    onnx_pbw_end(&w, t);
    onnx_pbw_end(&w, g);
    size_t op = onnx_pbw_begin(&w, 8);
    onnx_pbw_i64(&w, 2, 13);
    onnx_pbw_end(&w, op);
    snprintf(path, cap, "%s/w.bin", dir);
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(w6, 1, sizeof w6, f);
        fclose(f);
    }
    snprintf(path, cap, "%s/ext.onnx", dir);
    f = fopen(path, "wb");
    if (f) {
        fwrite(w.buf, 1, w.len, f);
        fclose(f);
    }
    onnx_pbw_free(&w);
}

static void test_oom(const char *dir)
{
    size_t lens[4];
    uint8_t *bufs[4];
    for (int k = 0; k < 4; k++) {
        bufs[k] = slurp(models[k], &lens[k]);
        CHECK(bufs[k] != NULL);
        if (!bufs[k])
            return;
    }
    char ext[256];
    write_external_model(dir, ext, sizeof ext);
    read_case cases[] = {
        {"Conv2d buffer", bufs[0], lens[0], NULL}, {"resize buffer", bufs[1], lens[1], NULL},
        {"constant buffer", bufs[2], lens[2], NULL}, {"conv buffer", bufs[3], lens[3], NULL},
        {"Conv2d file", NULL, 0, models[0]},         {"external file", NULL, 0, ext},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int mm = 0; mm < 2; mm++)
            printf("OOM loop %s (mmap %d): %d allocations, each failed in turn\n", cases[c].what, mm,
                   oom_loop(&cases[c], mm));
    /* ref_tensor_load_pb too. */
    int k, bad = 0;
    for (k = 0; k < 1000; k++) {
        int64_t before = live();
        ref_tensor t;
        char *name = NULL;
        ref_alloc_fail_after(k, 0);
        int rc = ref_tensor_load_pb(DATA "/node/test_constant/test_data_set_0/output_0.pb", &t, &name, &err);
        ref_alloc_fail_after(-1, 0);
        if (!rc) {
            ref_tensor_data_free(&t);
            ref_string_free(name);
            bad += live() != before;
            break;
        }
        bad += rc != REF_E_NOMEM || live() != before;
    }
    CHECK(bad == 0 && k == 3); /* file buffer, data, name */
    for (int i = 0; i < 4; i++)
        free(bufs[i]);
}

/* ================================================================================================
 * Corruption: every bit of every byte flipped, and bytes forced to 0x00, 0x7f, 0x80 and 0xff.
 * Any status is fine; a crash, an out-of-bounds read (under ASan) or a leak is not.
 * ============================================================================================== */

static long test_corruption(void)
{
    long reads = 0;
    int bad = 0, accepted = 0;
    for (size_t k = 0; k < sizeof models / sizeof models[0]; k++) {
        size_t len;
        uint8_t *buf = slurp(models[k], &len);
        if (!buf)
            continue;
        for (size_t off = 0; off < len; off++) {
            uint8_t orig = buf[off];
            uint8_t variants[12];
            for (int b = 0; b < 8; b++)
                variants[b] = (uint8_t)(orig ^ (1u << b));
            variants[8] = 0x00, variants[9] = 0x7f, variants[10] = 0x80, variants[11] = 0xff;
            for (int v = 0; v < 12; v++) {
                buf[off] = variants[v];
                for (int mm = 0; mm < 2; mm++) {
                    ref_options o = opts_mmap(mm);
                    int64_t before = live();
                    ref_model *m = NULL;
                    int rc = ref_model_read_buffer(buf, len, &o, &m, &err);
                    accepted += rc == 0;
                    bad += rc != 0 && (m != NULL || !err.msg[0]);
                    ref_model_free(m);
                    bad += live() != before;
                    reads++;
                }
            }
            buf[off] = orig;
        }
        free(buf);
    }
    CHECK(bad == 0);
    printf("corruption: %ld reads, %d accepted\n", reads, accepted);
    return reads;
}

int main(void)
{
    if (access(models[0], R_OK) || access(models[1], R_OK))
        CHECK_SKIP("libonnx-testdata is not installed");
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/test_onnx_truncate.XXXXXX");
    if (!mkdtemp(dir))
        CHECK_SKIP("cannot create a temporary folder");
    int64_t start = live();
    long offsets = test_truncation();
    printf("truncation: %ld offsets, each read with mmap on and off\n", offsets);
    CHECK(offsets > 1000);
    test_truncated_files(dir);
    test_truncated_tensor();
    test_oom(dir);
    test_corruption();
    CHECK(live() == start);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
    return check_summary();
}
