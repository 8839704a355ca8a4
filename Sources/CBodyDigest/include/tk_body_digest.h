#ifndef TK_BODY_DIGEST_H
#define TK_BODY_DIGEST_H
#include <stddef.h>
#include <stdint.h>

/* A 64-bit digest of `count` bytes for ETags: not cryptographic, every byte and the count
   change it. The same value on every x86-64 CPU (AVX2 or not) and on other CPUs, little- or big-endian. */
uint64_t tk_body_digest(const uint8_t *bytes, size_t count);

/* The same digest without the AVX2 path: what a CPU without AVX2 runs (for tests). */
uint64_t tk_body_digest_portable(const uint8_t *bytes, size_t count);

#endif
