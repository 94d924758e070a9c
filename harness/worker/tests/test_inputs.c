/* test_inputs.c: the inputs a worker feeds under a shape schedule, against a fake engine: named dims take the
 * iteration's sizes, the buffer is made once for the largest sizes, and each misuse fails naming what is wrong (an
 * engine that cannot name its dims, a dim the model lacks, a scheduled dim of a .pb input). It must never load a
 * real engine: the fake one records what set_input was given. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inputs.h"
#include "mlk_check.h"

/* One float input [batch, seq, 4], batch and seq symbolic (default 1). */
static int64_t got_dims[ENGINE_MAX_RANK], got_rank;
static size_t got_bytes;
static const void *got_data;

static size_t n_inputs(engine_compiled *c)
{
    (void)c;
    return 1;
}

static int input_info(engine_compiled *c, size_t i, engine_tensor_info *out)
{
    (void)c;
    (void)i;
    memset(out, 0, sizeof *out);
    out->name = "x";
    out->dtype = 1;
    out->rank = 3;
    out->dims[0] = out->dims[1] = 1;
    out->dims[2] = 4;
    return 0;
}

static const char *dim_param(engine_compiled *c, size_t i, int axis)
{
    (void)c;
    (void)i;
    return axis == 0 ? "batch" : axis == 1 ? "seq" : NULL;
}

static int set_input(engine_request *r, size_t i, const engine_tensor_info *info, const void *data, size_t nbytes,
                     engine_error *err)
{
    (void)r;
    (void)i;
    (void)err;
    got_rank = info->rank;
    memcpy(got_dims, info->dims, sizeof got_dims);
    got_bytes = nbytes;
    got_data = data;
    return 0;
}

static mlk_shapes schedule(const char *a, const char *b)
{
    mlk_shapes sh;
    memset(&sh, 0, sizeof sh);
    mlk_error e = {0};
    if (a && !mlk_shape_dim_parse(a, &sh.dims[sh.n_dims], &e))
        sh.n_dims++;
    if (b && !mlk_shape_dim_parse(b, &sh.dims[sh.n_dims], &e))
        sh.n_dims++;
    return sh;
}

int main(void)
{
    engine_api api = {.name = "fake", .n_inputs = n_inputs, .input_info = input_info, .set_input = set_input,
                      .input_dim_param = dim_param};
    mlk_inputs *in = NULL;
    mlk_error err = {0};
    engine_error e = {0};
    CHECK(mlk_inputs_new(NULL, 0, &in, &err) == MLK_OK);

    /* Without a schedule: the default shape. */
    CHECK(mlk_inputs_apply(in, &api, NULL, NULL, NULL, NULL, &e) == 0);
    CHECK(got_rank == 3 && got_dims[0] == 1 && got_dims[1] == 1 && got_dims[2] == 4 && got_bytes == 16);

    /* seq cycles, batch from a range: each call takes the sizes it is given; the buffer stays the one made first,
     * for the largest sizes (3 x 64 x 4 floats), and a smaller shape's data is a prefix of the same values. */
    mlk_shapes sh = schedule("seq=cycle:8,64,16", "batch=range:1:3:1");
    CHECK(sh.n_dims == 2);
    int64_t sizes[2] = {64, 3};
    CHECK(mlk_inputs_apply(in, &api, NULL, NULL, &sh, sizes, &e) == 0);
    CHECK(got_dims[0] == 3 && got_dims[1] == 64 && got_dims[2] == 4 && got_bytes == 3 * 64 * 4 * 4);
    const void *first = got_data;
    float head[8];
    memcpy(head, first, sizeof head);
    sizes[0] = 8;
    sizes[1] = 1;
    CHECK(mlk_inputs_apply(in, &api, NULL, NULL, &sh, sizes, &e) == 0);
    CHECK(got_dims[0] == 1 && got_dims[1] == 8 && got_bytes == 8 * 4 * 4);
    CHECK(got_data == first && !memcmp(head, got_data, sizeof head));

    /* A dim the model does not have: named, with the model's own. */
    mlk_shapes bad = schedule("len=cycle:2", NULL);
    int64_t two = 2;
    CHECK(mlk_inputs_apply(in, &api, NULL, NULL, &bad, &two, &e) != 0);
    CHECK(strstr(e.msg, "no input of the model has a symbolic dim named 'len' (its symbolic dims: batch, seq)") != NULL);

    /* An engine whose plugin cannot name its dims (built before input_dim_param). */
    engine_api old = api;
    old.input_dim_param = NULL;
    CHECK(mlk_inputs_apply(in, &old, NULL, NULL, &sh, sizes, &e) != 0);
    CHECK(strstr(e.msg, "engine 'fake' cannot vary input shapes") && strstr(e.msg, "input_dim_param"));
    mlk_inputs_free(in);

    /* An input read from a .pb has its file's shape: scheduling its dims is refused, naming the input. The file is a
     * TensorProto written byte by byte: dims 1, 1, 4; float; name "x"; 16 raw bytes. */
    char path[] = "/tmp/test_inputs_XXXXXX";
    int fd = mkstemp(path);
    static const unsigned char pb[] = {0x08, 1, 0x08, 1, 0x08, 4, 0x10, 1, 0x42, 1, 'x', 0x4a, 16,
                                       0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64, 0, 0, 128, 64};
    CHECK(fd >= 0 && write(fd, pb, sizeof pb) == (ssize_t)sizeof pb);
    if (fd >= 0)
        close(fd);
    const char *paths[] = {path};
    CHECK(mlk_inputs_new(paths, 1, &in, &err) == MLK_OK);
    CHECK(in && mlk_inputs_apply(in, &api, NULL, NULL, NULL, NULL, &e) == 0 && got_dims[2] == 4 && got_bytes == 16);
    CHECK(in && mlk_inputs_apply(in, &api, NULL, NULL, &sh, sizes, &e) != 0);
    CHECK(strstr(e.msg, "input 'x' is read from a .pb file, whose shape is fixed") != NULL);
    mlk_inputs_free(in);
    unlink(path);
    mlk_inputs_free(NULL);
    return check_summary();
}
