#include "tk_malloc_limit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TK_SANITIZED 1
#endif
#endif

static size_t tk_limit = 0;

void tk_malloc_limit_set(size_t bytes) { tk_limit = bytes; }

#ifdef TK_SANITIZED

int tk_malloc_limit_available(void) { return 0; }

#else

int tk_malloc_limit_available(void) { return 1; }

// glibc's own allocator, under the names it exports for this purpose.
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);

// Reports with write(2) only: no allocation while reporting one. A trap here (not abort(),
// whose frames in libc the unwinder cannot walk) lets the Swift runtime print the stack
// that asked.
static void tk_over_limit(size_t size) {
    char text[128];
    int length = snprintf(text, sizeof text, "tilekit-fuzz: malloc(%zu) exceeds the limit of %zu MB\n", size, tk_limit >> 20);
    if (length > 0) (void)write(2, text, (size_t)length);
    __builtin_trap();
}

static void tk_check(size_t size) {
    if (tk_limit != 0 && size > tk_limit) tk_over_limit(size);
}

void *malloc(size_t size) {
    tk_check(size);
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    size_t total;
    if (__builtin_mul_overflow(count, size, &total)) total = (size_t)-1;
    tk_check(total);
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    tk_check(size);
    return __libc_realloc(pointer, size);
}

void *memalign(size_t alignment, size_t size) {
    tk_check(size);
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    tk_check(size);
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
    tk_check(size);
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *result = pointer;
    return 0;
}

#endif
