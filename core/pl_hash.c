/* pl_hash.c — FNV-1a 64-bit (offset basis 1469598103934665603, prime 1099511628211). */
#include "pl_hash.h"

#include <stdint.h>
#include <stdio.h>

void pl_hash_text(const char *text, char hex[17])
{
    uint64_t h = UINT64_C(1469598103934665603);
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        h ^= *p;
        h *= UINT64_C(1099511628211);
    }
    snprintf(hex, 17, "%016llx", (unsigned long long)h);
}
