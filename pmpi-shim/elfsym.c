/* Function names for call sites, read from an object's ELF file: the
 * .symtab (every function, static ones included, unless the file is
 * stripped), else the .dynsym (exported functions). dladdr() reads only the
 * loaded .dynsym, which lacks an executable's functions unless it was linked
 * with -rdynamic, and takes the loader's lock; libunwind 1.6 has no lookup
 * by address. The sender calls this once per site: the file is mapped,
 * searched and unmapped, every offset checked against its size (the file
 * may have changed on disk, or be anything). System calls go straight to
 * the kernel: none of this is the application's I/O. */
#include <elf.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sites.h"

struct image {
	const uint8_t *p;
	size_t size;
};

/* n items of size sz at off, inside the image */
static const void *at(const struct image *im, uint64_t off, uint64_t n, uint64_t sz)
{
	if (sz && n > (im->size / sz))
		return NULL;
	if (off > im->size || n * sz > im->size - off)
		return NULL;
	return im->p + off;
}

/* The best function of one symbol table holding addr: the one starting
 * closest below it. */
static bool search(const struct image *im, const Elf64_Shdr *tab, const Elf64_Shdr *strs,
                   uint64_t addr, char *name, size_t cap, uint64_t *start)
{
	uint64_t n = tab->sh_size / sizeof(Elf64_Sym);
	const Elf64_Sym *syms = at(im, tab->sh_offset, n, sizeof(Elf64_Sym));
	const char *str = at(im, strs->sh_offset, strs->sh_size, 1);
	if (!syms || !str || tab->sh_entsize != sizeof(Elf64_Sym))
		return false;
	const Elf64_Sym *best = NULL;
	for (uint64_t i = 0; i < n; i++) {
		const Elf64_Sym *s = &syms[i];
		unsigned type = ELF64_ST_TYPE(s->st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s->st_shndx == SHN_UNDEF ||
		    s->st_value > addr || addr - s->st_value >= (s->st_size ? s->st_size : 1) ||
		    s->st_name >= strs->sh_size || !str[s->st_name])
			continue;
		if (!best || s->st_value > best->st_value)
			best = s;
	}
	if (!best)
		return false;
	size_t i = 0;
	for (uint64_t o = best->st_name; o < strs->sh_size && str[o] && i + 1 < cap; o++)
		name[i++] = str[o];
	name[i] = 0;
	*start = best->st_value;
	return true;
}

static bool lookup(const struct image *im, uint64_t addr, char *name, size_t cap, uint64_t *start)
{
	const Elf64_Ehdr *eh = at(im, 0, 1, sizeof *eh);
	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shentsize != sizeof(Elf64_Shdr))
		return false;
	const Elf64_Shdr *sh = at(im, eh->e_shoff, eh->e_shnum, sizeof *sh);
	if (!sh)
		return false;
	static const unsigned kinds[] = {SHT_SYMTAB, SHT_DYNSYM};
	for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
		for (unsigned i = 0; i < eh->e_shnum; i++)
			if (sh[i].sh_type == kinds[k] && sh[i].sh_link < eh->e_shnum &&
			    search(im, &sh[i], &sh[sh[i].sh_link], addr, name, cap, start))
				return true;
	return false;
}

bool shim_elf_function(const char *path, uint64_t addr, char *name, size_t cap, uint64_t *start)
{
	if (!path[0] || cap == 0)
		return false;
	long fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	struct stat st;
	bool found = false;
	if (syscall(SYS_fstat, fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		void *p = (void *)syscall(SYS_mmap, NULL, (size_t)st.st_size, PROT_READ,
		                          MAP_PRIVATE, fd, 0);
		if (p != MAP_FAILED) {
			struct image im = {p, (size_t)st.st_size};
			found = lookup(&im, addr, name, cap, start);
			syscall(SYS_munmap, p, (size_t)st.st_size);
		}
	}
	syscall(SYS_close, fd);
	return found;
}
