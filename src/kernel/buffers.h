/* Communication buffers of one experiment: each one a fresh anonymous mapping, so that its
   placement (page offset, heap or mmap, neighbours) never depends on what ran before or on the
   C library's allocator settings (e.g. GLIBC_TUNABLES=glibc.malloc.mmap_threshold). */
#ifndef MPIGUIDE_BUFFERS_H
#define MPIGUIDE_BUFFERS_H

#include <stddef.h>

#include <mpi.h>

struct buffer_mapping {
    void *base;
    size_t length;
};

struct buffer_pool {
    size_t offset;                 /* bytes from the page start to every buffer (buffer_offset) */
    struct buffer_mapping *maps;   /* the live mappings */
    size_t count, capacity;
    /* For the provenance: allocations made, bytes requested, and the smallest and largest
       distance of a buffer from its page start. */
    size_t allocations, bytes;
    size_t min_page_offset, max_page_offset;
};

/* An empty pool placing every buffer `offset` bytes after a page start. */
void buffer_pool_init(struct buffer_pool *pool, size_t offset);
/* A zeroed buffer of `bytes` (at least one byte is mapped), its pages already touched so that
   no first-touch page fault falls into a timed repetition. Aborts when memory runs out. */
unsigned char *buffer_alloc(struct buffer_pool *pool, size_t bytes);
/* Unmaps one buffer of the pool (NULL: nothing). */
void buffer_release(struct buffer_pool *pool, void *buffer);
/* Unmaps every buffer; the statistics stay. */
void buffer_pool_free(struct buffer_pool *pool);
/* The system's page size. */
size_t buffer_page_size(void);

/* What the provenance records of an experiment's buffers, over all ranks. */
struct buffer_report {
    unsigned long long page_size, offset;
    unsigned long long allocations;      /* summed over the ranks */
    unsigned long long largest_rank_bytes;
    /* Distance of the buffers from their page start, smallest and largest over every buffer
       of every rank (both equal offset when buffer_offset < page_size); no buffers: none. */
    int any;
    unsigned long long min_page_offset, max_page_offset;
};

/* Collective over comm; the result is complete on rank 0. */
void buffer_report_gather(const struct buffer_pool *pool, MPI_Comm comm,
                          struct buffer_report *report);

#endif
