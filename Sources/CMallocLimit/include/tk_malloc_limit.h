#ifndef TK_MALLOC_LIMIT_H
#define TK_MALLOC_LIMIT_H
#include <stddef.h>

// Makes any single allocation above `bytes` stop the process with a trap (0: no limit), as
// libFuzzer's -malloc_limit_mb does, so the replay of Fuzz/ (a build without libFuzzer)
// fails on the same memory bombs the fuzzer reports. It works by defining malloc, calloc,
// realloc and the aligned allocators in the executable, in front of glibc's. Built with
// AddressSanitizer (make fuzz), it does nothing: ASan and libFuzzer own malloc there.
void tk_malloc_limit_set(size_t bytes);

// 1 when the limit can be enforced in this build, 0 under a sanitizer.
int tk_malloc_limit_available(void);

#endif
