/* MAP_ANONYMOUS is not part of POSIX.1-2008. */
#define _DEFAULT_SOURCE
#include "buffers.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"

size_t buffer_page_size(void)
{
    long page = sysconf(_SC_PAGESIZE);
    return page > 0 ? (size_t)page : 4096;
}

void buffer_pool_init(struct buffer_pool *pool, size_t offset)
{
    memset(pool, 0, sizeof *pool);
    pool->offset = offset;
    pool->min_page_offset = SIZE_MAX;
}

unsigned char *buffer_alloc(struct buffer_pool *pool, size_t bytes)
{
    const size_t page = buffer_page_size();
    const size_t wanted = pool->offset + (bytes ? bytes : 1);
    const size_t length = (wanted + page - 1) / page * page;
    void *base = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED)
        fail_abort("cannot map a buffer of %zu bytes", length);
#ifdef MADV_NOHUGEPAGE
    /* Where transparent huge pages are "always", whether a large mapping gets them depends on
       its address, i.e. on what was mapped before: small pages everywhere instead. A kernel
       without huge pages refuses the advice (EINVAL), which changes nothing. */
    (void)madvise(base, length, MADV_NOHUGEPAGE);
#endif
    /* Anonymous pages read as zero; writing them faults them in now, untimed. */
    memset(base, 0, length);
    if (pool->count == pool->capacity) {
        size_t capacity = pool->capacity ? 2 * pool->capacity : 8;
        struct buffer_mapping *maps = xmalloc(capacity * sizeof *maps);
        if (pool->count)
            memcpy(maps, pool->maps, pool->count * sizeof *maps);
        free(pool->maps);
        pool->maps = maps;
        pool->capacity = capacity;
    }
    pool->maps[pool->count++] = (struct buffer_mapping){base, length};
    unsigned char *buffer = (unsigned char *)base + pool->offset;
    const size_t page_offset = (size_t)((uintptr_t)buffer % page);
    if (page_offset < pool->min_page_offset)
        pool->min_page_offset = page_offset;
    if (page_offset > pool->max_page_offset)
        pool->max_page_offset = page_offset;
    pool->allocations++;
    pool->bytes += bytes;
    return buffer;
}

static void unmap(const struct buffer_mapping *map)
{
    if (munmap(map->base, map->length) != 0)
        fail_abort("cannot unmap a buffer of %zu bytes", map->length);
}

void buffer_release(struct buffer_pool *pool, void *buffer)
{
    if (!buffer)
        return;
    for (size_t i = 0; i < pool->count; i++)
        if ((unsigned char *)pool->maps[i].base + pool->offset == buffer) {
            unmap(&pool->maps[i]);
            pool->maps[i] = pool->maps[--pool->count];
            return;
        }
    fail_abort("release of a buffer the pool does not hold");
}

void buffer_pool_free(struct buffer_pool *pool)
{
    for (size_t i = 0; i < pool->count; i++)
        unmap(&pool->maps[i]);
    free(pool->maps);
    pool->maps = NULL;
    pool->count = pool->capacity = 0;
}

void buffer_report_gather(const struct buffer_pool *pool, MPI_Comm comm,
                          struct buffer_report *report)
{
    unsigned long long low = pool->allocations ? pool->min_page_offset : ULLONG_MAX;
    unsigned long long high[2] = {pool->max_page_offset, pool->bytes}, highest[2] = {0, 0};
    unsigned long long allocations = pool->allocations, lowest = 0, total = 0;
    MPI_CHECK(MPI_Reduce(&low, &lowest, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, 0, comm));
    MPI_CHECK(MPI_Reduce(high, highest, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, 0, comm));
    MPI_CHECK(MPI_Reduce(&allocations, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, comm));
    *report = (struct buffer_report){
        .page_size = buffer_page_size(),
        .offset = pool->offset,
        .allocations = total,
        .largest_rank_bytes = highest[1],
        .any = total > 0,
        .min_page_offset = lowest,
        .max_page_offset = highest[0],
    };
}
