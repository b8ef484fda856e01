/* SHA-256 (FIPS 180-4), for the provenance of INPUT.csv; no library dependency. */
#ifndef MPIGUIDE_SHA256_H
#define MPIGUIDE_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sha256 {
    uint32_t state[8];
    uint64_t length; /* bytes hashed so far */
    unsigned char block[64];
    size_t used;     /* bytes in block */
};

void sha256_init(struct sha256 *h);
void sha256_update(struct sha256 *h, const void *data, size_t bytes);
/* Finishes and writes 64 lowercase hex digits and a NUL. */
void sha256_hex(struct sha256 *h, char hex[65]);

#endif
