/* test_onnx_tensor_file.c: files: the .pb tensor loader (regular file, directory and FIFO refused, truncation named
 * by byte offset) and the file helpers under it (bounded read through a hook, map, pread). One mkdtemp folder. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "onnx/file.h"
#include "onnx/tensor_file.h"
#include "onnx_check.h"

#define CONV_SET "/usr/share/libonnx-testdata/data/node/test_conv_with_strides_padding/test_data_set_0"

static onnx_error err;
static char dir[64];

static int write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(p, 1, n, f);
    return fclose(f) || w != n ? -1 : 0;
}

/* A float [2,3] tensor named "x", raw_data last. */
static void encode_x(onnx_pbw *w)
{
    static const float v[6] = {1, 2, 3, 4, 5, 6};
    const int64_t d23[] = {2, 3};
    onnx_pbw_init(w, NULL);
    onnx_pbw_packed_i64(w, 1, d23, 2);
    onnx_pbw_i64(w, 2, ONNX_DT_FLOAT);
    onnx_pbw_str(w, 8, "x");
    onnx_pbw_bytes(w, 9, v, sizeof v);
}

static void test_load_regular(void)
{
    onnx_pbw w;
    encode_x(&w);
    char path[128];
    snprintf(path, sizeof path, "%s/x.pb", dir);
    CHECK(write_file(path, w.buf, w.len) == 0);
    onnx_tensor *t = NULL;
    CHECK_OK(onnx_tensor_load(path, &t, &err), &err);
    CHECK(t && t->dtype == ONNX_DT_FLOAT && t->rank == 2 && t->dims[0] == 2 && t->dims[1] == 3);
    CHECK(t && t->numel == 6 && t->nbytes == 24 && !strcmp(t->name, "x"));
    CHECK(t && ((const float *)t->data)[0] == 1.0f && ((const float *)t->data)[5] == 6.0f);
    onnx_tensor_free(t);

    /* Every strict prefix fails, naming the file and a byte offset; a cut inside raw_data names the
     * offset of its length, with the exact count of bytes left. */
    int bad = 0;
    for (size_t cut = 0; cut < w.len; cut++) {
        CHECK(write_file(path, w.buf, cut) == 0);
        onnx_tensor *keep = (onnx_tensor *)&bad;
        int rc = onnx_tensor_load(path, &keep, &err);
        bad += rc == 0 || keep != (onnx_tensor *)&bad || strncmp(err.msg, path, strlen(path)) != 0 ||
               !strstr(err.msg, "@ byte");
    }
    CHECK(bad == 0);
    CHECK(write_file(path, w.buf, w.len - 10) == 0);
    CHECK(onnx_tensor_load(path, &t, &err) == ONNX_E_PARSE);
    char want[256];
    snprintf(want, sizeof want, "%s: raw_data @ byte %zu: length 24 exceeds the 14 bytes left", path, w.len - 25);
    CHECK(!strcmp(err.msg, want));
    /* Empty: a tensor without a type. */
    CHECK(write_file(path, "", 0) == 0);
    CHECK(onnx_tensor_load(path, &t, &err) == ONNX_E_PARSE && strstr(err.msg, "has no data_type"));
    unlink(path);
    onnx_pbw_free(&w);
}

static void test_load_refusals(void)
{
    onnx_tensor *t = NULL;
    CHECK(onnx_tensor_load(dir, &t, &err) == ONNX_E_IO && t == NULL);
    char want[128];
    snprintf(want, sizeof want, "%s: not a regular file", dir);
    CHECK(!strcmp(err.msg, want));

    char fifo[128];
    snprintf(fifo, sizeof fifo, "%s/fifo.pb", dir);
    CHECK(mkfifo(fifo, 0600) == 0);
    /* No writer ever opens it: a blocking open would hang here. */
    CHECK(onnx_tensor_load(fifo, &t, &err) == ONNX_E_IO && t == NULL && strstr(err.msg, "fifo.pb: not a regular file"));
    unlink(fifo);

    char gone[128];
    snprintf(gone, sizeof gone, "%s/gone.pb", dir);
    CHECK(onnx_tensor_load(gone, &t, &err) == -ENOENT && strstr(err.msg, gone) && strstr(err.msg, "cannot open"));
    CHECK(onnx_tensor_load(NULL, &t, &err) == ONNX_E_INVALID);
    CHECK(onnx_tensor_load(gone, NULL, NULL) == ONNX_E_INVALID);
    CHECK(onnx_tensor_load(gone, &t, NULL) == -ENOENT); /* no error record: the status alone */
}

static void test_file_helpers(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/bytes.bin", dir);
    CHECK(write_file(path, "0123456789", 10) == 0);

    /* Reads go through the caller's table, and a failed allocation leaves nothing behind. */
    uint8_t *buf = NULL;
    size_t len = 0;
    test_alloc_fail_in(0);
    CHECK(onnx_file_read(path, test_alloc(), &buf, &len, &err) == ONNX_E_NOMEM && buf == NULL && len == 0);
    CHECK(strstr(err.msg, "cannot allocate 10 bytes") != NULL && test_alloc_live_ == 0);
    test_alloc_fail_in(-1);
    CHECK_OK(onnx_file_read(path, test_alloc(), &buf, &len, &err), &err);
    CHECK(len == 10 && buf && !memcmp(buf, "0123456789", 10) && test_alloc_live_ == 1);
    test_alloc()->free_fn(buf);
    CHECK(test_alloc_live_ == 0);
    CHECK(onnx_file_read(dir, NULL, &buf, &len, &err) == ONNX_E_IO && strstr(err.msg, "not a regular file"));

    /* pread: exact, and short reads are errors. */
    int fd;
    size_t size;
    CHECK_OK(onnx_file_open(path, &fd, &size, &err), &err);
    char part[4] = "";
    CHECK(size == 10 && onnx_file_pread(fd, part, 4, 3) == 0 && !memcmp(part, "3456", 4));
    CHECK(onnx_file_pread(fd, part, 4, 8) == -EIO);
    close(fd);

    /* map: the whole file, and an empty one maps to nothing. */
    void *addr = NULL;
    CHECK_OK(onnx_file_map(path, &addr, &len, &err), &err);
    CHECK(addr && len == 10 && !memcmp(addr, "0123456789", 10));
    if (addr)
        munmap(addr, len);
    CHECK(write_file(path, "", 0) == 0);
    CHECK_OK(onnx_file_read(path, NULL, &buf, &len, &err), &err);
    CHECK(len == 0 && buf != NULL);
    free(buf);
    CHECK_OK(onnx_file_map(path, &addr, &len, &err), &err);
    CHECK(addr == NULL && len == 0);
    unlink(path);
}

/* A real test-data tensor, when the package is installed. */
static void test_testdata(void)
{
    if (access(CONV_SET "/input_0.pb", R_OK)) {
        printf("note: libonnx-testdata is not installed; real tensors not read\n");
        return;
    }
    onnx_tensor *t = NULL;
    CHECK_OK(onnx_tensor_load(CONV_SET "/input_0.pb", &t, &err), &err);
    CHECK(t && !strcmp(t->name, "x") && t->dtype == ONNX_DT_FLOAT && t->rank == 4 && t->dims[2] == 7 &&
          t->dims[3] == 5);
    CHECK(t && ((const float *)t->data)[4] == 4.0f && ((const float *)t->data)[34] == 34.0f);
    onnx_tensor_free(t);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/test_onnx_tensor_file.XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_load_regular();
    test_load_refusals();
    test_file_helpers();
    test_testdata();
    CHECK(rmdir(dir) == 0); /* everything made inside was removed */
    return check_summary();
}
