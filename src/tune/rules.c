/* Reading the tuning file (rules.h): every mistake is refused with the file, the line and what
   is allowed, because a rule that silently means something else would replace a collective
   where nobody measured the mock-up to be faster. */
#include "rules.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "replacements.h"

#define MAX_LINE 4096
/* Larger than any message an int count of the largest predefined type can describe. */
#define MAX_BYTES (1ULL << 40)

static int refuse(char *error, size_t size, const char *path, int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static int refuse(char *error, size_t size, const char *path, int line, const char *fmt, ...)
{
    int used = line > 0 ? snprintf(error, size, "%s:%d: ", path, line)
                        : snprintf(error, size, "%s: ", path);
    if (used < 0 || (size_t)used >= size)
        return -1;
    va_list args;
    va_start(args, fmt);
    vsnprintf(error + used, size - (size_t)used, fmt, args);
    va_end(args);
    return -1;
}

/* The allowed mock-up names, comma-separated. */
static void list_replacements(char *out, size_t size)
{
    out[0] = '\0';
    size_t used = 0;
    for (size_t i = 0; i < tune_replacement_count && used < size; i++) {
        const int n = snprintf(out + used, size - used, "%s%s", i ? ", " : "",
                               tune_replacements[i].name);
        if (n < 0)
            return;
        used += (size_t)n;
    }
}

/* A decimal number in [min, max] spanning exactly [text, end). */
static int number(const char *text, const char *end, unsigned long long min,
                  unsigned long long max, unsigned long long *value)
{
    if (text == end || !isdigit((unsigned char)*text))
        return -1;
    unsigned long long v = 0;
    for (const char *c = text; c < end; c++) {
        if (!isdigit((unsigned char)*c))
            return -1;
        v = v * 10 + (unsigned long long)(*c - '0');
        if (v > max)
            return -1;
    }
    if (v < min)
        return -1;
    *value = v;
    return 0;
}

static int parse_ranks(const char *text, struct tune_rule *rule)
{
    const char *start = text;
    for (;;) {
        const char *end = strchr(start, ',');
        if (!end)
            end = start + strlen(start);
        unsigned long long ranks;
        if (number(start, end, 1, 1u << 24, &ranks) != 0 || rule->rank_count == TUNE_MAX_RANK_LISTS)
            return -1;
        rule->ranks[rule->rank_count++] = (int)ranks;
        if (*end == '\0')
            return 0;
        start = end + 1;
    }
}

static int parse_bytes(const char *text, struct tune_rule *rule)
{
    const char *dash = strchr(text, '-');
    const char *end = text + strlen(text);
    if (number(text, dash ? dash : end, 0, MAX_BYTES, &rule->lo) != 0)
        return -1;
    rule->hi = rule->lo;
    if (dash && number(dash + 1, end, rule->lo, MAX_BYTES, &rule->hi) != 0)
        return -1;
    return 0;
}

static int shares_ranks(const struct tune_rule *a, const struct tune_rule *b)
{
    for (int i = 0; i < a->rank_count; i++)
        for (int j = 0; j < b->rank_count; j++)
            if (a->ranks[i] == b->ranks[j])
                return 1;
    return 0;
}

/* One non-blank line, comments stripped, into rule. */
static int parse_line(char *text, const char *path, int line, struct tune_rule *rule,
                      char *error, size_t size)
{
    memset(rule, 0, sizeof *rule);
    rule->line = line;
    char *save = NULL;
    const char *name = strtok_r(text, " \t", &save);
    rule->replacement = tune_replacement_find(name);
    if (rule->replacement < 0) {
        char allowed[2048];
        list_replacements(allowed, sizeof allowed);
        return refuse(error, size, path, line,
                      "unknown mock-up '%s': a rule starts with one of %s", name, allowed);
    }
    int have_ranks = 0, have_bytes = 0;
    for (char *field; (field = strtok_r(NULL, " \t", &save)) != NULL;) {
        if (strncmp(field, "ranks=", 6) == 0 && !have_ranks) {
            have_ranks = 1;
            if (parse_ranks(field + 6, rule) != 0)
                return refuse(error, size, path, line,
                              "bad '%s': ranks= takes communicator sizes >= 1, separated by "
                              "commas (at most %d), e.g. ranks=2,4",
                              field, TUNE_MAX_RANK_LISTS);
        } else if (strncmp(field, "bytes=", 6) == 0 && !have_bytes) {
            have_bytes = 1;
            if (parse_bytes(field + 6, rule) != 0)
                return refuse(error, size, path, line,
                              "bad '%s': bytes= takes a message size or an inclusive range "
                              "LO-HI of them, 0 <= LO <= HI <= %llu, e.g. bytes=1024-65536",
                              field, MAX_BYTES);
        } else {
            return refuse(error, size, path, line,
                          "unexpected '%s': after the mock-up a rule takes ranks=<N>[,<N>...] "
                          "and bytes=<LO>[-<HI>], once each",
                          field);
        }
    }
    if (!have_ranks || !have_bytes)
        return refuse(error, size, path, line, "rule for %s lacks %s: a rule is '%s ranks=<N> "
                      "bytes=<LO>-<HI>'", name, have_ranks ? "bytes=" : "ranks=", name);
    return 0;
}

int tune_parse_rules(FILE *in, const char *path, struct tune_rules *out, char *error,
                     size_t error_size)
{
    out->rules = NULL;
    out->count = 0;
    size_t capacity = 0;
    char text[MAX_LINE + 2];
    for (int line = 1; fgets(text, sizeof text, in) != NULL; line++) {
        size_t length = strlen(text);
        if (length > 0 && text[length - 1] == '\n')
            length--;
        if (length > MAX_LINE)
            return refuse(error, error_size, path, line, "line longer than %d characters",
                          MAX_LINE);
        char *comment = strchr(text, '#');
        if (comment)
            *comment = '\0';
        text[strcspn(text, "\r\n")] = '\0';
        if (strspn(text, " \t") == strlen(text))
            continue;
        struct tune_rule rule;
        if (parse_line(text, path, line, &rule, error, error_size) != 0)
            return -1;
        const int collective = (int)tune_replacements[rule.replacement].collective;
        for (size_t i = 0; i < out->count; i++) {
            const struct tune_rule *other = &out->rules[i];
            if ((int)tune_replacements[other->replacement].collective == collective &&
                shares_ranks(other, &rule) && other->lo <= rule.hi && rule.lo <= other->hi)
                return refuse(error, error_size, path, line,
                              "overlaps line %d: both replace %s at the same number of ranks "
                              "and message sizes; one rule per collective, ranks and size",
                              other->line, tune_collective_names[collective]);
        }
        if (out->count == capacity) {
            capacity = capacity ? 2 * capacity : 8;
            struct tune_rule *grown = realloc(out->rules, capacity * sizeof *grown);
            if (!grown)
                return refuse(error, error_size, path, line, "out of memory");
            out->rules = grown;
        }
        out->rules[out->count++] = rule;
    }
    if (ferror(in))
        return refuse(error, error_size, path, 0, "cannot read: %s", strerror(errno));
    return 0;
}

int tune_read_rules(const char *path, struct tune_rules *out, char *error, size_t error_size)
{
    FILE *in = fopen(path, "r");
    if (!in)
        return refuse(error, error_size, path, 0, "cannot open the tuning file: %s",
                      strerror(errno));
    const int status = tune_parse_rules(in, path, out, error, error_size);
    fclose(in);
    return status;
}

bool tune_rule_covers_ranks(const struct tune_rule *rule, int ranks)
{
    for (int k = 0; k < rule->rank_count; k++)
        if (rule->ranks[k] == ranks)
            return true;
    return false;
}
