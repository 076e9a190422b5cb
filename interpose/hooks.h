/* Owns: the tables of API entry points fikit replaces (one per backend,
 * registered with its descriptor), and how a program's
 * lookups of them are answered. An entry pairs an exported symbol name with
 * fikit's wrapper and the real function the wrapper calls. The real one is
 * learnt from whichever path the program took: the dynamic linker (RTLD_NEXT),
 * its own dlsym on the vendor library, or the vendor's proc-address query
 * (cuGetProcAddress, hipGetProcAddress). */
#ifndef FIKIT_INTERPOSE_HOOKS_H
#define FIKIT_INTERPOSE_HOOKS_H

#include <stdatomic.h>
#include <stdbool.h>

struct fikit_hook {
    const char *name;      /* the exported symbol, e.g. "cuLaunchKernel_ptsz" */
    void *wrapper;         /* fikit's function with the same signature */
    _Atomic(void *) real;  /* the vendor's */
    /* Where RTLD_NEXT failed to find it: the first of these libraries
     * loaded (dlopen NOLOAD) that has it; a NULL-terminated list. */
    const char *const *libraries;
};

/* A backend's descriptor (interpose/backend.h), registered at load time by
 * a constructor of the backend's: its hooks (a static array ending with
 * {NULL}) are found from then on, and dlsym looks up names that start with
 * one of its symbol_starts. */
struct fikit_backend;
void fikit_backend_register(const struct fikit_backend *b);

/* The hook for an exact symbol name, or NULL. */
struct fikit_hook *fikit_hook_find(const char *name);

/* A lookup answered real for name: remember real, return what the program
 * should get (the wrapper, or real when name is not hooked). */
void *fikit_hook_answer(const char *name, void *real);

/* The vendor's own lookup (its proc-address query) answered *pfn for h:
 * remember *pfn as h's real function and hand the program h's wrapper. A
 * *pfn that is h's wrapper already (a vendor that resolves its entries
 * through the symbol table finds fikit's first) is left alone, never taken
 * for the real function, or the wrapper would call itself. */
void fikit_hook_take(struct fikit_hook *h, void **pfn);

/* The hook of table (ending with {NULL}) for an exact name, and whether p
 * is one of table's wrappers. */
struct fikit_hook *fikit_hook_in(struct fikit_hook *table, const char *name);
bool fikit_hook_is_wrapper(const struct fikit_hook *table, const void *p);

/* The real function behind a hook, resolving it on first use. NULL if the
 * vendor library has no such symbol. */
void *fikit_hook_real(struct fikit_hook *h);

/* glibc's dlsym, never fikit's. */
void *fikit_real_dlsym(void *handle, const char *name);

#endif
