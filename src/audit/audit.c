/* libozdgemm_audit.so: the LD_AUDIT companion of libozdgemm.so, for programs that load cuBLAS
 * with dlopen and take its entry points with dlsym (JAX/XLA): LD_PRELOAD alone never reaches
 * those calls, since dlsym on a handle searches that library, not the global scope.
 *
 *   LD_PRELOAD=libozdgemm.so LD_AUDIT=libozdgemm_audit.so program
 *
 * glibc reports every dlsym result to the audit module (la_symbind64 with LA_SYMB_DLSYM) when
 * the defining object asked for LA_FLG_BINDTO. Only libcublas objects of the main namespace
 * ask (and libcublasLt objects, below), and only for them is a name that libozdgemm.so exports
 * answered with libozdgemm.so's definition: what a program linked with libcublas gets under
 * LD_PRELOAD. The list of names is libozdgemm.so's own dynamic symbol table
 * (cmake/ozdgemm.map), so the two cannot drift.
 * Lookups made by libozdgemm.so itself (its hooks finding the real cuBLAS) are never
 * redirected, and without libozdgemm.so in the process nothing is.
 *
 * The module is loaded into a link namespace of its own before the program: it uses libc only
 * (no CUDA, no C++ runtime, no libozdgemm.so) and reads no settings. No object gets
 * LA_FLG_BINDFROM, so ordinary (PLT and GOT) bindings are never reported to it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define OZDGEMM_AUDIT_API __attribute__((visibility("default")))

/* libozdgemm.so in the main namespace, or NULL. Set in la_objopen, cleared in la_objclose, read
 * in la_symbind64 (atomics: nothing here relies on which glibc lock a caller holds). */
static struct link_map* ozdgemm_map;

static struct link_map* ozdgemm(void) { return __atomic_load_n(&ozdgemm_map, __ATOMIC_ACQUIRE); }

static int basename_starts_with(const char* path, const char* prefix) {
  if (path == NULL) return 0;
  const char* slash = strrchr(path, '/');
  const char* base = slash != NULL ? slash + 1 : path;
  return strncmp(base, prefix, strlen(prefix)) == 0;
}

/* libcublas.so, libcublas.so.13, ...: its names are answered with libozdgemm.so's of the same
 * name. libcublasLt.so*: its names with libozdgemm.so's "ozdgemm_audit_" + name, where it has one
 * (cublasLtMatmul): libozdgemm.so does not export cuBLASLt's own names, since libcublas calls
 * them through its PLT and a preloaded definition would take those calls too. */
static int is_cublas(const struct link_map* map) {
  return basename_starts_with(map->l_name, "libcublas.so");
}
static int is_cublaslt(const struct link_map* map) {
  return basename_starts_with(map->l_name, "libcublasLt.so");
}

/* The callbacks used here have the same ABI in interface versions 1 and 2 (version 2, glibc
 * 2.35, changed AArch64's la_pltenter registers), so any version from 1 up is accepted. */
OZDGEMM_AUDIT_API unsigned int la_version(unsigned int version) {
  if (version == 0) return 0;
  return version < LAV_CURRENT ? version : LAV_CURRENT;
}

OZDGEMM_AUDIT_API unsigned int la_objopen(struct link_map* map, Lmid_t lmid, uintptr_t* cookie) {
  (void)cookie; /* left as glibc sets it: the object's link_map */
  /* Other namespaces (dlmopen) hold no libozdgemm.so whose hooks would find their cuBLAS. */
  if (lmid != LM_ID_BASE) return 0;
  if (basename_starts_with(map->l_name, "libozdgemm.so")) {
    struct link_map* none = NULL;
    __atomic_compare_exchange_n(&ozdgemm_map, &none, map, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    return 0; /* no flags: its own lookups must reach the real cuBLAS */
  }
  return is_cublas(map) || is_cublaslt(map) ? LA_FLG_BINDTO : 0;
}

OZDGEMM_AUDIT_API unsigned int la_objclose(uintptr_t* cookie) {
  struct link_map* closing = (struct link_map*)*cookie;
  __atomic_compare_exchange_n(&ozdgemm_map, &closing, NULL, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
  return 0;
}

/* The first object of `map`'s namespace: the program, whose search list is the global scope
 * (the program, the preloaded libraries, their dependencies, RTLD_GLOBAL libraries). */
static struct link_map* program_of(struct link_map* map) {
  while (map->l_prev != NULL) map = map->l_prev;
  return map;
}

/* Set while this module's own lookup runs: when the global scope's definition is libcublas's,
 * glibc reports that lookup here again. dlsym holds glibc's recursive load lock while it calls
 * la_symbind64 (checked on 2.36), so only that nested call sees the flag set; where it did not,
 * a concurrent lookup could only miss its redirect. */
static int looking_up;

OZDGEMM_AUDIT_API uintptr_t la_symbind64(Elf64_Sym* sym, unsigned int ndx, uintptr_t* refcook,
                                         uintptr_t* defcook, unsigned int* flags,
                                         const char* symname) {
  (void)ndx;
  (void)flags;
  struct link_map* target = ozdgemm();
  /* libozdgemm.so's own lookups (its hooks' real cuBLAS, its private handles' entry points) must
   * get cuBLAS's definitions, or its calls would come back into its hooks. */
  if (target == NULL || *refcook == (uintptr_t)target) return sym->st_value;
  const struct link_map* definer = (const struct link_map*)*defcook;
  /* cuBLAS's own lookups of its entry points stay cuBLAS's. */
  const struct link_map* asker = (const struct link_map*)*refcook;
  if (asker != NULL && (is_cublas(asker) || is_cublaslt(asker))) return sym->st_value;
  char renamed[128];
  const char* name = symname;
  if (is_cublaslt(definer)) {
    static const char prefix[] = "ozdgemm_audit_";
    const size_t len = strlen(symname);
    if (len + sizeof prefix > sizeof renamed) return sym->st_value;
    memcpy(renamed, prefix, sizeof prefix - 1);
    memcpy(renamed + sizeof prefix - 1, symname, len + 1);
    name = renamed;
  } else if (!is_cublas(definer)) {
    return sym->st_value;
  }
  if (__atomic_exchange_n(&looking_up, 1, __ATOMIC_ACQ_REL) != 0) return sym->st_value;
  /* The definition a program linked with libcublas gets under LD_PRELOAD: the global scope's.
   * (dlsym on libozdgemm.so's own link_map is no substitute: a preloaded object's own search
   * list is never set up.) */
  void* winner = dlsym(program_of(target), name);
  __atomic_store_n(&looking_up, 0, __ATOMIC_RELEASE);
  if (winner == NULL) return sym->st_value;
  Dl_info info;
  struct link_map* owner = NULL;
  if (dladdr1(winner, &info, (void**)&owner, RTLD_DL_LINKMAP) == 0 || owner != target)
    return sym->st_value;
  return (uintptr_t)winner;
}
