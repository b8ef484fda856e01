#include "pattern.h"

#include <stdint.h>
#include <string.h>

static unsigned char pattern_byte(int sender, int receiver, size_t index)
{
    uint32_t h = (uint32_t)index * 0x9E3779B1u;
    h ^= ((uint32_t)sender + 1u) * 0x85EBCA77u;
    h ^= ((uint32_t)receiver + 2u) * 0xC2B2AE3Du;
    h ^= h >> 15;
    h *= 0x2C1B3C6Du;
    h ^= h >> 12;
    return (unsigned char)h;
}

void pattern_fill(unsigned char *buf, size_t bytes, int sender, int receiver)
{
    for (size_t i = 0; i < bytes; i++)
        buf[i] = pattern_byte(sender, receiver, i);
}

void pattern_poison(unsigned char *buf, size_t bytes, int sender, int receiver)
{
    for (size_t i = 0; i < bytes; i++)
        buf[i] = (unsigned char)~pattern_byte(sender, receiver, i);
}

static void note_mismatch(struct mismatch *m, size_t offset, int sender, unsigned expected,
                          unsigned got)
{
    if (m->count++ == 0) {
        m->offset = offset;
        m->sender = sender;
        m->expected = expected;
        m->got = got;
    }
}

void pattern_check(const unsigned char *buf, size_t bytes, int sender, int receiver, size_t base,
                   struct mismatch *m)
{
    for (size_t i = 0; i < bytes; i++) {
        unsigned char want = pattern_byte(sender, receiver, i);
        if (buf[i] != want)
            note_mismatch(m, base + i, sender, want, buf[i]);
    }
}

/* The MPI standard leaves an overflowing sum undefined, and libraries differ: Open MPI's AVX
   reductions saturate 8-bit sums (open-mpi/ompi#8045, closed as wontfix), so with every rank
   contributing up to 61 --verify failed for char on 5 ranks. A char element therefore gets a
   value from at most CHAR_CONTRIBUTORS ranks (sum <= 4 x 61 < 256): rank r contributes to the
   elements i with i = r (mod stride), stride = ceil(nranks / CHAR_CONTRIBUTORS), so that every
   rank's contribution is still checked once there are stride elements. The wider types hold
   any sum of 61 per rank exactly. */
enum { CHAR_CONTRIBUTORS = 4 };

static long long reduction_value(enum dtype dtype, int nranks, int rank, size_t index)
{
    if (dtype == DTYPE_CHAR) {
        const size_t stride = ((size_t)nranks + CHAR_CONTRIBUTORS - 1) / CHAR_CONTRIBUTORS;
        if (index % stride != (size_t)rank % stride)
            return 0;
    }
    return (long long)(((size_t)rank * 3u + index * 5u) % 61u) + 1;
}

static long long reduction_sum(enum dtype dtype, int nranks, size_t index, int lo, int hi)
{
    long long sum = 0;
    for (int r = lo; r <= hi; r++)
        sum += reduction_value(dtype, nranks, r, index);
    return sum;
}

/* Stores v as element i of a dtype array (through memcpy: buf may be any byte buffer). */
static void store(void *buf, enum dtype dtype, size_t i, long long v)
{
    unsigned char *at = (unsigned char *)buf + i * dtype_size(dtype);
    switch (dtype) {
    case DTYPE_CHAR:
        *at = (unsigned char)(v & 0xff);
        break;
    case DTYPE_INT: {
        int x = (int)v;
        memcpy(at, &x, sizeof x);
        break;
    }
    case DTYPE_FLOAT: {
        float x = (float)v;
        memcpy(at, &x, sizeof x);
        break;
    }
    default: {
        double x = (double)v;
        memcpy(at, &x, sizeof x);
        break;
    }
    }
}

void reduction_fill(void *buf, enum dtype dtype, int nranks, size_t count, int rank, size_t first)
{
    for (size_t i = 0; i < count; i++)
        store(buf, dtype, i, reduction_value(dtype, nranks, rank, first + i));
}

void reduction_poison(void *buf, enum dtype dtype, int nranks, size_t count, size_t first, int lo,
                      int hi)
{
    for (size_t i = 0; i < count; i++)
        store(buf, dtype, i, reduction_sum(dtype, nranks, first + i, lo, hi));
    unsigned char *bytes = buf;
    for (size_t i = 0; i < count * dtype_size(dtype); i++)
        bytes[i] = (unsigned char)~bytes[i];
}

void reduction_check(const void *buf, enum dtype dtype, int nranks, size_t count, size_t first,
                     int lo, int hi, struct mismatch *m)
{
    const size_t size = dtype_size(dtype);
    const unsigned char *got = buf;
    unsigned char want[sizeof(double)];
    for (size_t i = 0; i < count; i++) {
        store(want, dtype, 0, reduction_sum(dtype, nranks, first + i, lo, hi));
        for (size_t b = 0; b < size; b++)
            if (got[i * size + b] != want[b])
                note_mismatch(m, i * size + b, -1, want[b], got[i * size + b]);
    }
}
