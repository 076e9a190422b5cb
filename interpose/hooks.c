#include "interpose/hooks.h"

#include "interpose/backend.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

/* dlsym is called before constructors run and before a sanitizer runtime is
 * ready (the runtime resolves its own interceptors with it): the code on its
 * way to glibc, the hook lookup included, must not be instrumented. */
#define NO_SANITIZE __attribute__((no_sanitize("address", "undefined", "thread")))

#define MAX_TABLES 8

static struct fikit_hook *tables[MAX_TABLES];
static _Atomic int ntables;
/* The first characters of hooked names, from the backends' symbol_starts. */
static bool hooked_start[256];

void fikit_backend_register(const struct fikit_backend *b)
{
    if (!b->hooks)
        return;
    int n = atomic_load(&ntables);
    if (n < MAX_TABLES) {
        for (const char *c = b->symbol_starts; c && *c; c++)
            hooked_start[(unsigned char)*c] = true;
        tables[n] = b->hooks;
        atomic_store(&ntables, n + 1);
    }
}

NO_SANITIZE static int same(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

NO_SANITIZE struct fikit_hook *fikit_hook_find(const char *name)
{
    if (!name)
        return NULL;
    int n = atomic_load(&ntables);
    for (int t = 0; t < n; t++)
        for (struct fikit_hook *h = tables[t]; h->name; h++)
            if (h->name[0] == name[0] && same(h->name, name))
                return h;
    return NULL;
}

/* Remembers real as h's real function unless it is h's wrapper; returns
 * the wrapper. The first implementation found is the one the wrapper calls:
 * a symbol name fixes the ABI, so any implementation of it will do. */
NO_SANITIZE static void *take(struct fikit_hook *h, void *real)
{
    if (real != h->wrapper) {
        void *expected = NULL;
        atomic_compare_exchange_strong(&h->real, &expected, real);
    }
    return h->wrapper;
}

NO_SANITIZE void *fikit_hook_answer(const char *name, void *real)
{
    struct fikit_hook *h = fikit_hook_find(name);
    if (!h || !real)
        return real;
    return take(h, real); /* real == wrapper: asked of ourselves */
}

void fikit_hook_take(struct fikit_hook *h, void **pfn)
{
    if (h && pfn && *pfn)
        *pfn = take(h, *pfn);
}

struct fikit_hook *fikit_hook_in(struct fikit_hook *table, const char *name)
{
    if (!name)
        return NULL;
    for (struct fikit_hook *h = table; h->name; h++)
        if (strcmp(h->name, name) == 0)
            return h;
    return NULL;
}

bool fikit_hook_is_wrapper(const struct fikit_hook *table, const void *p)
{
    for (const struct fikit_hook *h = table; h->name; h++)
        if (h->wrapper == p)
            return true;
    return false;
}

/* --------------------------------------------------------------- dlsym */

typedef void *(*dlsym_fn)(void *, const char *);
static _Atomic(dlsym_fn) real_dlsym_fn;


NO_SANITIZE static dlsym_fn get_real_dlsym(void)
{
    dlsym_fn f = atomic_load_explicit(&real_dlsym_fn, memory_order_acquire);
    if (f)
        return f;
    /* dlvsym is not replaced, so this cannot recurse. glibc 2.34 moved
     * dlsym into libc; older ones have it in libdl. */
    f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (!f)
        f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    atomic_store_explicit(&real_dlsym_fn, f, memory_order_release);
    return f;
}

NO_SANITIZE void *fikit_real_dlsym(void *handle, const char *name) { return get_real_dlsym()(handle, name); }

void *fikit_hook_real(struct fikit_hook *h)
{
    void *r = atomic_load_explicit(&h->real, memory_order_acquire);
    if (r)
        return r;
    r = fikit_real_dlsym(RTLD_NEXT, h->name);
    if (r == h->wrapper)
        r = NULL;
    for (const char *const *l = h->libraries; !r && l && *l; l++) {
        void *lib = dlopen(*l, RTLD_LAZY | RTLD_NOLOAD);
        if (lib) {
            r = fikit_real_dlsym(lib, h->name);
            dlclose(lib);
        }
        if (r == h->wrapper)
            r = NULL;
    }
    if (r) {
        void *expected = NULL;
        atomic_compare_exchange_strong(&h->real, &expected, r);
        r = atomic_load(&h->real);
    }
    return r;
}

/* The program's dlsym. Only the exact names of hooked entry points are
 * answered differently; everything else is glibc's answer.
 *
 * RTLD_NEXT means "after the calling object", which glibc works out from
 * the return address. A C wrapper would make libfikit.so the caller (and
 * could hand an interposing library its own symbol back, or recurse through
 * a malloc it interposes), so the exported entry is a few instructions that
 * jump to glibc's dlsym for RTLD_NEXT, leaving the return address alone,
 * and to fikit_dlsym below for every other handle. Names asked for through
 * RTLD_NEXT are therefore never wrapped: that is how other interposers reach
 * the next definition, and they must get it. */
__attribute__((visibility("hidden"))) void *fikit_dlsym_next;
__attribute__((visibility("hidden"))) void *fikit_dlsym(void *handle, const char *name);
__attribute__((visibility("hidden"))) void *fikit_dlsym_find_next(void);

/* Called by the entry below the first time RTLD_NEXT is asked for. */
NO_SANITIZE void *fikit_dlsym_find_next(void)
{
    void *f = (void *)get_real_dlsym();
    __atomic_store_n(&fikit_dlsym_next, f, __ATOMIC_RELEASE);
    return f;
}

NO_SANITIZE void *fikit_dlsym(void *handle, const char *name)
{
    void *r = fikit_real_dlsym(handle, name);
    /* Only names that start as a backend's hooked names do (its symbol_starts). */
    if (!r || handle == RTLD_NEXT || !hooked_start[(unsigned char)name[0]])
        return r;
    struct fikit_hook *h = fikit_hook_find(name);
    if (h && r == h->wrapper) {
        /* The lookup found fikit's own export (a global lookup): the
         * program must learn whether the runtime has the function, so an
         * entry point the runtime lacks is reported missing. */
        return fikit_hook_real(h) ? r : NULL;
    }
    return fikit_hook_answer(name, r);
}

#if defined(__x86_64__)
__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, @function\n"
        "dlsym:\n"
        "    cmpq $-1, %rdi\n"              /* RTLD_NEXT */
        "    jne 1f\n"
        "    movq fikit_dlsym_next(%rip), %rax\n"
        "    testq %rax, %rax\n"
        "    jnz 2f\n"
        "    pushq %rdi\n"                  /* first use: find glibc's, keep the arguments */
        "    pushq %rsi\n"
        "    subq $8, %rsp\n"
        "    call fikit_dlsym_find_next\n"
        "    addq $8, %rsp\n"
        "    popq %rsi\n"
        "    popq %rdi\n"
        "2:  jmp *%rax\n"
        "1:  jmp fikit_dlsym\n"
        ".size dlsym, .-dlsym\n");
#elif defined(__aarch64__)
__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, %function\n"
        "dlsym:\n"
        "    cmn x0, #1\n"
        "    b.ne 1f\n"
        "    adrp x16, fikit_dlsym_next\n"
        "    ldr x16, [x16, :lo12:fikit_dlsym_next]\n"
        "    cbnz x16, 2f\n"
        "    stp x0, x1, [sp, #-32]!\n"
        "    str x30, [sp, #16]\n"
        "    bl fikit_dlsym_find_next\n"
        "    mov x16, x0\n"
        "    ldr x30, [sp, #16]\n"
        "    ldp x0, x1, [sp], #32\n"
        "2:  br x16\n"
        "1:  b fikit_dlsym\n"
        ".size dlsym, .-dlsym\n");
#else
/* Elsewhere RTLD_NEXT lookups resolve relative to libfikit.so. */
__attribute__((visibility("default"))) void *dlsym(void *handle, const char *name)
{
    return fikit_dlsym(handle, name);
}
#endif
