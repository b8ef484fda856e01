#include "topology/dims.h"

/* Depth-first search over non-increasing factorisations in increasing lexicographic order:
   at each position try the smallest admissible factor first, so the first complete
   factorisation found is the lexicographically smallest. A factor f at position i (ndims-i
   factors left for n) must satisfy f^(ndims-i) >= n (it is the largest of the rest) and
   f <= limit (non-increasing). */
static int ipow_at_least(long long base, int exp, long long target)
{
    long long v = 1;
    for (int i = 0; i < exp; i++) {
        v *= base;
        if (v >= target)
            return 1;
    }
    return v >= target;
}

static int search(int n, int left, int limit, int *dims)
{
    if (left == 1) {
        if (n > limit)
            return 0;
        dims[0] = n;
        return 1;
    }
    for (int f = 1; f <= limit && f <= n; f++) {
        if (n % f != 0 || !ipow_at_least(f, left, n))
            continue;
        dims[0] = f;
        if (search(n / f, left - 1, f, dims + 1))
            return 1;
    }
    return 0;
}

int dims_create(int nnodes, int ndims, int dims[])
{
    if (nnodes < 1 || ndims < 1)
        return -1;
    return search(nnodes, ndims, nnodes, dims) ? 0 : -1;
}
