/* Minimal JSON writing helpers for the provenance file. */
#ifndef MPIGUIDE_JSON_H
#define MPIGUIDE_JSON_H

#include <stdio.h>

/* Writes s as a JSON string literal (quoted, escaped); a byte that is not part of valid UTF-8
   becomes the code point of its value, so the file is always valid JSON. */
void json_string(FILE *out, const char *s);
/* Writes "key": (quoted key and colon). */
void json_key(FILE *out, const char *key);

#endif
