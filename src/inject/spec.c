#include "spec.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A slice of the spec string; the parser never copies or modifies the spec. */
struct token {
    const char *start;
    size_t length;
};

static struct token trim(const char *start, size_t length)
{
    while (length > 0 && isspace((unsigned char)start[0])) {
        start++;
        length--;
    }
    while (length > 0 && isspace((unsigned char)start[length - 1]))
        length--;
    return (struct token){start, length};
}

static int token_equals(struct token token, const char *text)
{
    return token.length == strlen(text) && memcmp(token.start, text, token.length) == 0;
}

/* Appends to a bounded message buffer; silently truncates, which only shortens the message. */
static void append(char *buffer, size_t size, const char *format, ...)
{
    const size_t used = strlen(buffer);
    if (used + 1 >= size)
        return;
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(buffer + used, size - used, format, arguments);
    va_end(arguments);
}

/* Starts the error message with the entry at fault, quoted as the user wrote it. */
static int fail(char *error, size_t size, size_t entry_number, struct token entry,
                const char *format, ...)
{
    snprintf(error, size, "entry %zu '%.*s': ", entry_number, (int)entry.length, entry.start);
    const size_t used = strlen(error);
    if (used + 1 < size) {
        va_list arguments;
        va_start(arguments, format);
        vsnprintf(error + used, size - used, format, arguments);
        va_end(arguments);
    }
    return -1;
}

static void append_names(char *error, size_t size, const char *const names[], size_t count)
{
    for (size_t i = 0; i < count; i++)
        append(error, size, "%s%s", i == 0 ? "" : ", ", names[i]);
}

/* A plain decimal number: strtod alone would also take "inf", "nan", hex and leading blanks. */
static int parse_amount(struct token text, double *amount)
{
    char digits[64];
    if (text.length == 0 || text.length >= sizeof digits)
        return -1;
    for (size_t i = 0; i < text.length; i++)
        if (!isdigit((unsigned char)text.start[i]) && strchr(".eE+-", text.start[i]) == NULL)
            return -1;
    memcpy(digits, text.start, text.length);
    digits[text.length] = '\0';
    char *end = NULL;
    *amount = strtod(digits, &end);
    return (*end == '\0' && isfinite(*amount)) ? 0 : -1;
}

/* The index of `text` in names[0..count), or count if it is none of them. */
static size_t lookup(struct token text, const char *const names[], size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (token_equals(text, names[i]))
            return i;
    return count;
}

/* The text up to the next ':' of an entry, or to its end; *rest moves past the ':'. */
static struct token next_field(struct token entry, const char **rest)
{
    const char *end = entry.start + entry.length;
    const char *colon = memchr(*rest, ':', (size_t)(end - *rest));
    const char *stop = colon == NULL ? end : colon;
    const struct token field = trim(*rest, (size_t)(stop - *rest));
    *rest = colon == NULL ? NULL : colon + 1;
    return field;
}

/* The amount of a "usec=N" or "fraction=F" field into *rule. */
static int parse_delay(struct token field, struct token entry, size_t entry_number,
                       struct inject_rule *rule, char *error, size_t size)
{
    const char *equals = memchr(field.start, '=', field.length);
    if (equals == NULL)
        return fail(error, size, entry_number, entry,
                    "expected NAME:usec=MICROSECONDS or NAME:fraction=FRACTION");
    const struct token key = trim(field.start, (size_t)(equals - field.start));
    const struct token value =
        trim(equals + 1, field.length - (size_t)(equals + 1 - field.start));
    double amount = 0.0;
    if (token_equals(key, "usec")) {
        if (parse_amount(value, &amount) != 0 || amount < 0.0 || amount > INJECT_MAX_USEC)
            return fail(error, size, entry_number, entry,
                        "usec must be a number of microseconds from 0 to %.0f",
                        INJECT_MAX_USEC);
        rule->kind = INJECT_USEC;
    } else if (token_equals(key, "fraction")) {
        if (parse_amount(value, &amount) != 0 || amount < 0.0 || amount > INJECT_MAX_FRACTION)
            return fail(error, size, entry_number, entry,
                        "fraction must be a number from 0 to %.0f (0.1 adds 10%% of the call's "
                        "duration)",
                        INJECT_MAX_FRACTION);
        rule->kind = INJECT_FRACTION;
    } else {
        return fail(error, size, entry_number, entry,
                    "unknown key '%.*s'; use usec=MICROSECONDS or fraction=FRACTION",
                    (int)key.length, key.start);
    }
    rule->amount = amount;
    return 0;
}

/* The optional "datatype=TYPE" field into *rule, for a function that moves one datatype. */
static int parse_datatype(struct token field, struct token entry, size_t entry_number,
                          const struct inject_names *names, size_t function,
                          struct inject_rule *rule, char *error, size_t size)
{
    const char *equals = memchr(field.start, '=', field.length);
    const struct token key =
        trim(field.start, equals == NULL ? field.length : (size_t)(equals - field.start));
    if (equals == NULL || !token_equals(key, "datatype"))
        return fail(error, size, entry_number, entry,
                    "unknown field '%.*s' after the delay; the only one is datatype=TYPE",
                    (int)field.length, field.start);
    if (!names->typed[function])
        return fail(error, size, entry_number, entry,
                    "%s moves no data of one datatype; datatype= applies to the functions "
                    "with a datatype argument",
                    names->functions[function]);
    const struct token value =
        trim(equals + 1, field.length - (size_t)(equals + 1 - field.start));
    const size_t datatype = lookup(value, names->datatypes, names->datatype_count);
    if (datatype == names->datatype_count) {
        fail(error, size, entry_number, entry, "'%.*s' is not a datatype a filter can name; use: ",
             (int)value.length, value.start);
        append_names(error, size, names->datatypes, names->datatype_count);
        return -1;
    }
    rule->datatype = (int)datatype;
    return 0;
}

static int parse_entry(struct token entry, size_t entry_number, const struct inject_names *names,
                       struct inject_rule rules[], char *error, size_t size)
{
    const char *rest = entry.start;
    const struct token name = next_field(entry, &rest);
    if (rest == NULL)
        return fail(error, size, entry_number, entry,
                    "expected NAME:usec=MICROSECONDS or NAME:fraction=FRACTION");
    const size_t function = lookup(name, names->functions, names->function_count);
    if (function == names->function_count) {
        fail(error, size, entry_number, entry,
             "'%.*s' is not a function libmpiguide-inject can slow down; it can slow down: ",
             (int)name.length, name.start);
        append_names(error, size, names->functions, names->function_count);
        return -1;
    }
    if (rules[function].kind != INJECT_OFF)
        return fail(error, size, entry_number, entry, "%s is named more than once",
                    names->functions[function]);

    struct inject_rule rule = {INJECT_OFF, 0.0, INJECT_ANY_DATATYPE};
    if (parse_delay(next_field(entry, &rest), entry, entry_number, &rule, error, size) != 0)
        return -1;
    if (rest != NULL &&
        parse_datatype(next_field(entry, &rest), entry, entry_number, names, function, &rule,
                       error, size) != 0)
        return -1;
    if (rest != NULL)
        return fail(error, size, entry_number, entry,
                    "too many fields; expected NAME:KEY=VALUE[:datatype=TYPE]");
    rules[function] = rule;
    return 0;
}

int inject_parse_spec(const char *spec, const struct inject_names *names,
                      struct inject_rule rules[], char *error, size_t error_size)
{
    error[0] = '\0';
    for (size_t i = 0; i < names->function_count; i++)
        rules[i] = (struct inject_rule){INJECT_OFF, 0.0, INJECT_ANY_DATATYPE};

    if (trim(spec, strlen(spec)).length == 0) {
        snprintf(error, error_size,
                 "is empty; name the functions to slow down, e.g. 'MPI_Allreduce:usec=200'");
        return -1;
    }
    size_t entry_number = 1;
    for (const char *start = spec;; entry_number++) {
        const char *comma = strchr(start, ',');
        const size_t length = comma == NULL ? strlen(start) : (size_t)(comma - start);
        const struct token entry = trim(start, length);
        if (entry.length == 0)
            return fail(error, error_size, entry_number, entry,
                        "is empty (a stray comma?)");
        if (parse_entry(entry, entry_number, names, rules, error, error_size) != 0)
            return -1;
        if (comma == NULL)
            return 0;
        start = comma + 1;
    }
}

void inject_describe(const struct inject_rule rules[], const struct inject_names *names,
                     char *out, size_t out_size)
{
    out[0] = '\0';
    for (size_t i = 0; i < names->function_count; i++) {
        const char *separator = out[0] == '\0' ? "" : ", ";
        if (rules[i].kind == INJECT_USEC)
            append(out, out_size, "%s%s +%g us", separator, names->functions[i],
                   rules[i].amount);
        else if (rules[i].kind == INJECT_FRACTION)
            append(out, out_size, "%s%s +%g%% of its duration", separator, names->functions[i],
                   100.0 * rules[i].amount);
        if (rules[i].kind != INJECT_OFF && rules[i].datatype != INJECT_ANY_DATATYPE)
            append(out, out_size, " for %s", names->datatypes[rules[i].datatype]);
    }
}

int64_t inject_delay_ns(const struct inject_rule *rule, int64_t elapsed_ns)
{
    switch (rule->kind) {
    case INJECT_USEC:
        return (int64_t)llround(rule->amount * 1e3);
    case INJECT_FRACTION:
        return (int64_t)llround(rule->amount * (double)elapsed_ns);
    case INJECT_OFF:
        break;
    }
    return 0;
}
