/* test_files.c: the file helpers (files.h) refuse a FIFO, a folder, a device, a socket and a link to nothing at once,
 * naming the path, for reading, for another library, and for writing; a regular file passes. It must never block. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "files.h"
#include "mlk_check.h"

static char dir[64];

static const char *at(const char *name)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/mlk-test-files-XXXXXX");
    CHECK(mkdtemp(dir) != NULL);
    char fifo[128], folder[128], sock[128], dangling[128], plain[128];
    snprintf(fifo, sizeof fifo, "%s", at("fifo"));
    snprintf(folder, sizeof folder, "%s", at("folder"));
    snprintf(sock, sizeof sock, "%s", at("sock"));
    snprintf(dangling, sizeof dangling, "%s", at("dangling"));
    snprintf(plain, sizeof plain, "%s", at("plain"));
    CHECK(mkfifo(fifo, 0600) == 0 && mkdir(folder, 0700) == 0 && symlink(at("nothing"), dangling) == 0);
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    CHECK(strlen(sock) < sizeof sa.sun_path);
    memcpy(sa.sun_path, sock, strlen(sock) < sizeof sa.sun_path ? strlen(sock) + 1 : 1);
    CHECK(s >= 0 && bind(s, (struct sockaddr *)&sa, sizeof sa) == 0);
    FILE *pf = fopen(plain, "w");
    CHECK(pf && fputs("hello", pf) >= 0 && fclose(pf) == 0);

    const char *special[] = {fifo, folder, "/dev/zero", sock, dangling};
    const char *kind[] = {"is a FIFO", "is a folder", "is a character device", "is a socket", "which does not exist"};
    for (int i = 0; i < 5; i++) {
        mlk_error err = {0};
        char *text = NULL;
        size_t len = 0;
        FILE *f = NULL;
        CHECK(mlk_check_regular(special[i], "db", i != 4, &err) == MLK_E_PARSE);
        CHECK(strstr(err.msg, special[i]) && strstr(err.msg, kind[i]));
        CHECK(mlk_read_regular(special[i], "report", 1 << 20, &text, &len, &err) == MLK_E_PARSE && !text);
        CHECK(strstr(err.msg, kind[i]) != NULL);
        int rc = mlk_create_file(special[i], "output", &f, &err);
        CHECK(rc == MLK_E_PARSE && !f);
        if (rc != MLK_E_PARSE)
            printf("  %s: %d %s\n", special[i], rc, err.msg);
        CHECK(strstr(err.msg, special[i]) != NULL);
    }
    CHECK(access(at("nothing"), F_OK) != 0); /* the link's target was never made */
    mlk_error err = {0};
    CHECK(mlk_check_regular(at("missing"), "db", true, &err) == MLK_OK);
    CHECK(mlk_check_regular(at("missing"), "db", false, &err) == MLK_E_NOTFOUND);
    char *text = NULL;
    size_t len = 0;
    CHECK(mlk_read_regular(plain, "report", 1 << 20, &text, &len, &err) == MLK_OK && len == 5 && !strcmp(text, "hello"));
    free(text);
    text = NULL;
    CHECK(mlk_read_regular(plain, "report", 4, &text, &len, &err) == MLK_E_PARSE && !text);
    FILE *f = NULL;
    CHECK(mlk_create_file(plain, "output", &f, &err) == MLK_OK && f);
    if (f) {
        fputs("x", f);
        fclose(f);
    }
    struct stat st;
    CHECK(stat(plain, &st) == 0 && st.st_size == 1); /* emptied, then written */
    CHECK(mlk_mkdirs(at("folder/a/b"), &err) == MLK_OK);
    CHECK(mlk_mkdirs(at("fifo/a"), &err) == MLK_E_PARSE && strstr(err.msg, "a FIFO is there"));
    CHECK(mlk_mkdirs(at("dangling/a"), &err) == MLK_E_PARSE && strstr(err.msg, "which does not exist"));
    close(s);
    unlink(sock);
    unlink(fifo);
    unlink(dangling);
    unlink(plain);
    rmdir(at("folder/a/b"));
    rmdir(at("folder/a"));
    rmdir(folder);
    rmdir(dir);
    return check_summary();
}
