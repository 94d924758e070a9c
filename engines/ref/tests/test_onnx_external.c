/* test_onnx_external.c: the reader's file side: embedded raw_data alignment (mapped vs copied) and external data
 * (mapped once, pread, ranges, lengths, and escapes by "..", absolute paths and symlinks). Fixtures: our writer only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "check.h"
#include "model.h"
#include "onnx/pb.h"

static ref_error err;
static char tmpdir[64];

static ref_options opts_mmap(int on)
{
    ref_options o;
    ref_options_init(&o);
    o.mmap = on;
    return o;
}

/* ================================================================================================
 * Files: alignment of embedded raw data, external data and escapes
 * ============================================================================================== */

static void write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f)
        return;
    CHECK(fwrite(p, 1, n, f) == n);
    fclose(f);
}

static const float W6[6] = {1, 2, 3, 4, 5, 6};

/* A model with one float initializer [2,3] named name; ext_loc NULL embeds raw_data, "" omits the location. */
static void encode_init_model(onnx_pbw *w, const char *name, const char *ext_loc, const char *ext_off,
                              const char *ext_len)
{
    const int64_t d23[] = {2, 3};
    onnx_pbw_init(w, NULL);
    onnx_pbw_i64(w, 1, 8);
    size_t g = onnx_pbw_begin(w, 7);
    size_t n = onnx_pbw_begin(w, 1);
    onnx_pbw_str(w, 1, name);
    onnx_pbw_str(w, 2, "y");
    onnx_pbw_str(w, 4, "Identity");
    onnx_pbw_end(w, n);
    onnx_pbw_str(w, 2, "g");
    size_t t = onnx_pbw_begin(w, 5);
    onnx_pbw_packed_i64(w, 1, d23, 2);
    onnx_pbw_i64(w, 2, REF_DT_FLOAT);
    onnx_pbw_str(w, 8, name);
    if (ext_loc) {
        const char *kv[3][2] = {{"location", ext_loc}, {"offset", ext_off}, {"length", ext_len}};
        for (int i = 0; i < 3; i++) {
            if (!kv[i][1] || !kv[i][1][0])
                continue;
            size_t e = onnx_pbw_begin(w, 13);
            onnx_pbw_str(w, 1, kv[i][0]);
            onnx_pbw_str(w, 2, kv[i][1]);
            onnx_pbw_end(w, e);
        }
        onnx_pbw_u64(w, 14, 1);
    } else {
        onnx_pbw_bytes(w, 9, W6, sizeof W6);
    }
    onnx_pbw_end(w, t);
    onnx_pbw_end(w, g);
    size_t op = onnx_pbw_begin(w, 8);
    onnx_pbw_i64(w, 2, 13);
    onnx_pbw_end(w, op);
}

/* The offset of W6's bytes in the encoding (they are unique there). */
static size_t find_raw(const onnx_pbw *w)
{
    for (size_t i = 0; i + sizeof W6 <= w->len; i++)
        if (!memcmp(w->buf + i, W6, sizeof W6))
            return i;
    return SIZE_MAX;
}

static void test_embedded_alignment(void)
{
    int seen[2] = {0, 0};
    const char *names[] = {"w", "ww", "www", "wwww"};
    for (int k = 0; k < 4; k++) {
        onnx_pbw w;
        encode_init_model(&w, names[k], NULL, NULL, NULL);
        size_t off = find_raw(&w);
        char path[128];
        snprintf(path, sizeof path, "%s/align%d.onnx", tmpdir, k);
        write_file(path, w.buf, w.len);
        onnx_pbw_free(&w);
        for (int mm = 0; mm < 2; mm++) {
            ref_options o = opts_mmap(mm);
            ref_model *m = NULL;
            CHECK_OK(ref_model_read(path, &o, &m, &err), &err);
            if (!m)
                continue;
            const ref_initializer *in = &m->graph.inits[0];
            CHECK(!memcmp(in->t.data, W6, sizeof W6));
            if (mm && off % 4 == 0) {
                CHECK(in->storage == REF_STORAGE_MAPPED && m->n_maps == 1);
                CHECK((const uint8_t *)in->t.data == (const uint8_t *)m->maps[0].addr + off);
            } else {
                CHECK(in->storage == REF_STORAGE_HEAP && (uintptr_t)in->t.data % 64 == 0);
            }
            seen[off % 4 == 0]++;
            ref_model_info info;
            ref_model_get_info(m, &info);
            CHECK(info.weight_bytes == 24 && info.mapped_bytes == (in->storage == REF_STORAGE_MAPPED ? 24u : 0u));
            ref_model_free(m);
        }
    }
    CHECK(seen[0] && seen[1]); /* both the aligned and the misaligned path ran */
}

static int read_ext(const char *loc, const char *off, const char *len, int mmap_on, ref_model **out)
{
    onnx_pbw w;
    encode_init_model(&w, "w", loc, off, len);
    char path[128];
    snprintf(path, sizeof path, "%s/model/ext.onnx", tmpdir);
    write_file(path, w.buf, w.len);
    onnx_pbw_free(&w);
    ref_options o = opts_mmap(mmap_on);
    *out = NULL;
    return ref_model_read(path, &o, out, &err);
}

/* The read fails with code and a message containing what; a model read by mistake is freed. */
static int ext_fails(const char *loc, const char *off, const char *len, int mmap_on, int code, const char *what)
{
    ref_model *m;
    int rc = read_ext(loc, off, len, mmap_on, &m);
    ref_model_free(m);
    if (rc != code || !strstr(err.msg, what) || m) {
        fprintf(stderr, "ext_fails(%s): rc %d: %s\n", loc, rc, err.msg);
        return 0;
    }
    return 1;
}

static void test_external(void)
{
    char p[256], q[256];
    snprintf(p, sizeof p, "%s/model", tmpdir);
    mkdir(p, 0755);
    /* w.bin: 8 bytes of junk, then the 24 bytes. */
    uint8_t blob[40] = {0};
    memcpy(blob + 8, W6, sizeof W6);
    snprintf(p, sizeof p, "%s/model/w.bin", tmpdir);
    write_file(p, blob, sizeof blob);
    snprintf(p, sizeof p, "%s/model/sub", tmpdir);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/model/sub/v.bin", tmpdir);
    write_file(p, W6, sizeof W6);
    snprintf(p, sizeof p, "%s/outside.bin", tmpdir);
    write_file(p, W6, sizeof W6);
    snprintf(q, sizeof q, "%s/model/link.bin", tmpdir);
    CHECK(symlink(p, q) == 0);             /* points out of the folder */
    snprintf(q, sizeof q, "%s/model/inlink.bin", tmpdir);
    CHECK(symlink("sub/v.bin", q) == 0);   /* stays inside */

    for (int mm = 0; mm < 2; mm++) {
        ref_model *m;
        CHECK_OK(read_ext("w.bin", "8", "24", mm, &m), &err);
        if (m) {
            const ref_initializer *in = &m->graph.inits[0];
            CHECK(!memcmp(in->t.data, W6, sizeof W6));
            CHECK(in->storage == (mm ? REF_STORAGE_MAPPED : REF_STORAGE_HEAP));
            CHECK(m->n_maps == (mm ? 2u : 0u)); /* the model file and w.bin */
            ref_model_free(m);
        }
        CHECK_OK(read_ext("sub/v.bin", NULL, NULL, mm, &m), &err); /* no offset, no length: whole file */
        if (m) {
            CHECK(!memcmp(m->graph.inits[0].t.data, W6, sizeof W6));
            ref_model_free(m);
        }
        CHECK_OK(read_ext("inlink.bin", "0", "24", mm, &m), &err);
        ref_model_free(m);
        CHECK(read_ext("w.bin", "2", "24", mm, &m) == 0); /* misaligned in the mapping: copied */
        if (m) {
            CHECK(m->graph.inits[0].storage == REF_STORAGE_HEAP);
            ref_model_free(m);
        }

        CHECK(ext_fails("../outside.bin", "0", "24", mm, REF_E_PARSE, "escapes the model folder"));
        CHECK(strstr(err.msg, "ext.onnx: graph.initializer[0] @ byte "));
        CHECK(ext_fails("sub/../../outside.bin", "0", "24", mm, REF_E_PARSE, "escapes the model folder"));
        CHECK(ext_fails(p, "0", "24", mm, REF_E_PARSE, "absolute"));
        CHECK(ext_fails("link.bin", "0", "24", mm, REF_E_PARSE, "outside the model folder"));
        CHECK(ext_fails("w.bin", "20", "24", mm, REF_E_PARSE, "lie outside"));
        CHECK(ext_fails("w.bin", "8", "20", mm, REF_E_PARSE, "needs 24"));
        CHECK(ext_fails("w.bin", "-8", "24", mm, REF_E_PARSE, "not a byte count"));
        CHECK(ext_fails("w.bin", "18446744073709551615", "24", mm, REF_E_PARSE, "lie outside"));
        CHECK(ext_fails("w.bin", "8", "18446744073709551615", mm, REF_E_PARSE, "lie outside"));
        CHECK(ext_fails("w.bin", "99999999999999999999", "24", mm, REF_E_PARSE, "not a byte count"));
        CHECK(ext_fails("missing.bin", "0", "24", mm, REF_E_IO, "missing.bin"));
        CHECK(ext_fails("sub", "0", "24", mm, REF_E_IO, "not a regular file"));
        CHECK(ext_fails("", NULL, NULL, mm, REF_E_PARSE, "without a location"));
    }
    /* From memory there is no folder to resolve in. */
    onnx_pbw w;
    encode_init_model(&w, "w", "w.bin", "8", "24");
    ref_model *m = NULL;
    CHECK(ref_model_read_buffer(w.buf, w.len, NULL, &m, &err) == REF_E_UNSUPPORTED && !m);
    onnx_pbw_free(&w);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_onnx_external.XXXXXX");
    if (!mkdtemp(tmpdir))
        CHECK_SKIP("cannot create a temporary folder");
    ref_alloc_stats s0, s1;
    ref_alloc_get_stats(&s0);
    test_embedded_alignment();
    test_external();
    ref_alloc_get_stats(&s1);
    CHECK(s1.live_bytes == s0.live_bytes);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    CHECK(system(cmd) == 0);
    return check_summary();
}
