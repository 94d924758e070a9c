#!/usr/bin/env bash
# `cmake --install` puts librefengine, refengine.h and refengine.pc in a prefix, and a program built with
# `pkg-config --cflags --libs refengine` against them compiles a generated model and runs it.
source "$(dirname "$0")/lib.sh"
build="${MLK_BUILD_DIR:?MLK_BUILD_DIR must point at the build tree}"
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
libdir=$(ls -d "$prefix"/lib*/ | head -n 1)
check "header installed" test -f "$prefix/include/refengine.h"
check "pkg-config file installed" test -f "$libdir/pkgconfig/refengine.pc"
check "shared library installed" test -e "$libdir/librefengine.so"
check "refengine installed" test -x "$prefix/bin/refengine"
check "memleak-run installed" test -x "$prefix/bin/memleak-run"
cat > "$work/use.c" <<'C'
#include <stdio.h>
#include <refengine.h>
int main(int argc, char **argv)
{
    (void)argc;
    ref_error err = {0};
    ref_model *m = NULL;
    ref_compiled *c = NULL;
    ref_request *r = NULL;
    if (ref_model_read(argv[1], NULL, &m, &err) || ref_compile(m, NULL, &c, &err) || ref_request_new(c, &r, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    ref_value_desc d;
    ref_compiled_input(c, 0, &d);
    static float x[784];
    ref_tensor t = d.shape;
    t.data = x;
    if (ref_request_set_input(r, 0, &t, &err) || ref_infer(r, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    ref_tensor y;
    ref_request_output(r, 0, &y, &err);
    float sum = 0;
    for (int i = 0; i < 10; i++)
        sum += ((float *)y.data)[i];
    printf("%d %.3f\n", (int)y.dims[1], sum); /* softmax over 10 classes sums to 1 */
    ref_request_free(r);
    ref_compiled_free(c);
    ref_model_free(m);
    return 0;
}
C
export PKG_CONFIG_PATH="$libdir/pkgconfig"
check "pkg-config knows refengine" pkg-config --exists refengine
cc "$work/use.c" -o "$work/use" $(pkg-config --cflags --libs refengine) -Wl,-rpath,"$libdir"
"$prefix/bin/refengine" gen mlp --mlp-hidden 32 --out "$work/mlp.onnx" > /dev/null
check "an installed-library program runs a model" eq "$("$work/use" "$work/mlp.onnx")" "10 1.000"
finish
