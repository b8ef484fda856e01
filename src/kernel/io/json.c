#include "io/json.h"

/* Length of the well-formed UTF-8 sequence at p (1-4), or 0 if p starts no such sequence
   (stray continuation byte, overlong form, surrogate, beyond U+10FFFF, truncated). */
static int utf8_sequence(const unsigned char *p)
{
    /* Lead byte pattern, its payload bits, and the smallest code point of each length. */
    static const struct {
        unsigned char mask, lead, payload;
        unsigned min;
    } forms[] = {{0xE0, 0xC0, 0x1F, 0x80}, {0xF0, 0xE0, 0x0F, 0x800}, {0xF8, 0xF0, 0x07, 0x10000}};
    if (p[0] < 0x80)
        return 1;
    int n = 0;
    unsigned min = 0, code = 0;
    for (int f = 0; f < 3 && n == 0; f++)
        if ((p[0] & forms[f].mask) == forms[f].lead) {
            n = f + 2;
            min = forms[f].min;
            code = p[0] & forms[f].payload;
        }
    if (n == 0)
        return 0;
    for (int i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80) /* also stops at the terminating NUL */
            return 0;
        code = code << 6 | (p[i] & 0x3Fu);
    }
    if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF))
        return 0;
    return n;
}

void json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        int n = utf8_sequence(p);
        if (n == 0) {
            /* Paths and host names are bytes: a byte that is not UTF-8 would make the whole
               file unreadable as JSON. It is written as the code point of the same value
               (as Latin-1 would read it). */
            fprintf(out, "\\u%04x", *p++);
            continue;
        }
        if (n > 1) {
            fwrite(p, 1, (size_t)n, out);
            p += n;
            continue;
        }
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", out);
        else if (*p == '\t')
            fputs("\\t", out);
        else if (*p < 0x20)
            fprintf(out, "\\u%04x", *p);
        else
            fputc(*p, out);
        p++;
    }
    fputc('"', out);
}

void json_key(FILE *out, const char *key)
{
    json_string(out, key);
    fputs(": ", out);
}
