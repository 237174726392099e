/* pl_hash.h — FNV-1a 64-bit hash of a text: what checkpoints and sweep files
 * store to recognise the configuration they belong to. */
#ifndef PL_HASH_H
#define PL_HASH_H

/* The hash of the NUL-terminated text as 16 lower-case hex digits into hex[17]. */
void pl_hash_text(const char *text, char hex[17]);

#endif
