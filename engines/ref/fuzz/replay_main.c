/* replay_main.c: runs a libFuzzer target's entry point over saved inputs without libFuzzer, so ctest replays the
 * bad-input corpora through every fuzz target in the plain and the ASan+UBSan builds. A target traps on a finding;
 * this driver fails on an unreadable corpus and must never pass having replayed nothing. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One file through the target; 0, or -1 when it cannot be read. */
static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    struct stat st;
    if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
        fclose(f);
        return -1;
    }
    size_t n = (size_t)st.st_size;
    uint8_t *buf = malloc(n ? n : 1);
    int rc = buf && fread(buf, 1, n, f) == n ? 0 : -1;
    fclose(f);
    if (!rc)
        LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return rc;
}

int main(int argc, char **argv)
{
    int n = 0;
    for (int a = 1; a < argc; a++) {
        DIR *d = opendir(argv[a]);
        if (!d) {
            fprintf(stderr, "replay: cannot open folder %s\n", argv[a]);
            return 1;
        }
        for (struct dirent *e; (e = readdir(d));) {
            if (e->d_name[0] == '.')
                continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[a], e->d_name);
            if (replay_file(path)) {
                fprintf(stderr, "replay: cannot read %s\n", path);
                closedir(d);
                return 1;
            }
            n++;
        }
        closedir(d);
    }
    printf("replayed %d inputs\n", n);
    return n ? 0 : 1;
}
