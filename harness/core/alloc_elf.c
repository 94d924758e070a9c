/* alloc_elf.c: checks a scenario's own allocator library (allocator: {name, preload}) before anything runs: an
 * absolute path to a regular, readable ELF shared object whose dynamic symbols define malloc and free.
 * It must never load or run the library (its constructors would run in memleak-run): it reads the file's tables. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "allocators.h"

/* Every offset and size read from the file is checked against its length before use. */
static bool in_file(size_t len, uint64_t off, uint64_t size)
{
    return off <= len && size <= len - off;
}

/* 1 when the dynamic symbol table defines every name of want (n of them), 0 when not, -1 when the tables are bad. */
static int defines(const unsigned char *f, size_t len, const char *const *want, int n)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)f;
    if (eh->e_shentsize != sizeof(Elf64_Shdr) || !in_file(len, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr)))
        return -1;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(f + eh->e_shoff);
    int found = 0;
    bool seen[8] = {false};
    for (int i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_DYNSYM)
            continue;
        if (sh[i].sh_entsize != sizeof(Elf64_Sym) || sh[i].sh_link >= eh->e_shnum ||
            !in_file(len, sh[i].sh_offset, sh[i].sh_size))
            return -1;
        const Elf64_Shdr *strs = &sh[sh[i].sh_link];
        if (!in_file(len, strs->sh_offset, strs->sh_size) || strs->sh_size == 0)
            return -1;
        const char *str = (const char *)(f + strs->sh_offset);
        const Elf64_Sym *sym = (const Elf64_Sym *)(f + sh[i].sh_offset);
        for (uint64_t k = 0; k < sh[i].sh_size / sizeof *sym; k++) {
            int type = ELF64_ST_TYPE(sym[k].st_info);
            if (sym[k].st_shndx == SHN_UNDEF || sym[k].st_name >= strs->sh_size ||
                (type != STT_FUNC && type != STT_GNU_IFUNC))
                continue;
            const char *name = str + sym[k].st_name;
            size_t room = strs->sh_size - sym[k].st_name;
            for (int w = 0; w < n && w < 8; w++)
                if (!seen[w] && strnlen(name, room) < room && !strcmp(name, want[w]))
                    seen[w] = true, found++;
        }
    }
    return found == n;
}

int mlk_allocator_check_preload(const char *name, const char *path, mlk_error *err)
{
    if (path[0] != '/')
        return mlk_fail(err, MLK_E_PARSE, "allocator %s: preload '%s' is not an absolute path", name, path);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return mlk_fail(err, MLK_E_NOTFOUND, "allocator %s: cannot open %s: %s", name, path, strerror(e));
    }
    if (!S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
        close(fd);
        return mlk_fail(err, MLK_E_PARSE, "allocator %s: %s is not a shared library (%s)", name, path,
                        S_ISREG(st.st_mode) ? "too short" : "not a regular file");
    }
    size_t len = (size_t)st.st_size;
    unsigned char *f = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (f == MAP_FAILED)
        return mlk_fail(err, MLK_E_IO, "allocator %s: cannot read %s: %s", name, path, strerror(errno));
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)f;
    static const char *const want[] = {"malloc", "free"};
    int rc = MLK_OK;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_type != ET_DYN ||
        eh->e_machine != EM_X86_64)
        rc = mlk_fail(err, MLK_E_PARSE, "allocator %s: %s is not an x86-64 ELF shared library", name, path);
    else {
        int d = defines(f, len, want, 2);
        if (d < 0)
            rc = mlk_fail(err, MLK_E_PARSE, "allocator %s: %s has damaged ELF tables", name, path);
        else if (!d)
            rc = mlk_fail(err, MLK_E_PARSE, "allocator %s: %s does not define malloc and free (not an allocator?)",
                          name, path);
    }
    munmap(f, len);
    return rc;
}
