/* placement.py's decode (first fit, best fit, after conflicts) in C.
 *
 * The same placements as the Python function, buffer for buffer: the buffers
 * are visited in the given order, each goes to the first candidate pool
 * where an offset is found below its limit, at the offset the rule picks
 * among the ranges its placed conflicting buffers occupy in that pool. Built
 * on first use by placement_native.py with the system's C compiler and
 * loaded with ctypes; without a compiler the Python function runs instead.
 * Keep the two in step: tests/test_planning_decode.py compares them.
 *
 * What differs is how the conflicting buffers are found: not from a list of
 * every conflicting pair (a dense problem has hundreds of conflicts per
 * buffer: tens of millions of pairs at 50,000 buffers), but from the live
 * intervals, with a segment tree over the start times (the buffers live at
 * a buffer's start) and the buffers sorted by start (those starting during
 * its life), plus the explicit conflicts. Memory: O(n log n).
 *
 * Entry point: pd_decode (see the end of the file). Plain C99, no globals,
 * no dependencies. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int64_t i64;

enum { AFTER_CONFLICTS = 0, FIRST_FIT = 1, BEST_FIT = 2 };

typedef struct {
  i64 off, end;
} Range;

static i64 align_up(i64 value, i64 alignment) {
  i64 q;
  if (alignment <= 1) return value;
  if ((alignment & (alignment - 1)) == 0) /* a power of two: no division */
    return (i64)(((uint64_t)value + (uint64_t)alignment - 1) &
                 ~((uint64_t)alignment - 1));
  q = value / alignment; /* truncates: the ceiling for value <= 0 */
  if (value % alignment > 0) ++q;
  return q * alignment;
}

static int less(const Range *a, const Range *b) {
  return a->off < b->off || (a->off == b->off && a->end < b->end);
}

static void swap_ranges(Range *a, Range *b) {
  Range t = *a;
  *a = *b;
  *b = t;
}

static void sift_down(Range *r, int root, int m) {
  for (;;) {
    int child = 2 * root + 1;
    if (child >= m) return;
    if (child + 1 < m && less(&r[child], &r[child + 1])) ++child;
    if (!less(&r[root], &r[child])) return;
    swap_ranges(&r[root], &r[child]);
    root = child;
  }
}

/* Sort r[0..m) by (off, end): an introsort (quicksort with a median of
 * three, heap sort past a depth limit, insertion sort for short runs); the
 * comparisons inline, which qsort's callback is not (the decode of a dense
 * problem spends most of its time here). */
static void sort_ranges(Range *r, int m, int depth) {
  while (m > 16) {
    int mid = m / 2, i = 0, j = m - 1;
    Range pivot;
    if (depth-- == 0) {
      int k;
      for (k = m / 2 - 1; k >= 0; --k) sift_down(r, k, m);
      for (k = m - 1; k > 0; --k) {
        swap_ranges(&r[0], &r[k]);
        sift_down(r, 0, k);
      }
      return;
    }
    if (less(&r[mid], &r[0])) swap_ranges(&r[mid], &r[0]);
    if (less(&r[m - 1], &r[0])) swap_ranges(&r[m - 1], &r[0]);
    if (less(&r[m - 1], &r[mid])) swap_ranges(&r[m - 1], &r[mid]);
    pivot = r[mid];
    for (;;) { /* Hoare partition */
      while (less(&r[i], &pivot)) ++i;
      while (less(&pivot, &r[j])) --j;
      if (i >= j) break;
      swap_ranges(&r[i], &r[j]);
      ++i;
      --j;
    }
    /* recurse into the smaller side, loop on the larger */
    if (j + 1 < m - (j + 1)) {
      sort_ranges(r, j + 1, depth);
      r += j + 1;
      m -= j + 1;
    } else {
      sort_ranges(r + j + 1, m - (j + 1), depth);
      m = j + 1;
    }
  }
  {
    int k;
    for (k = 1; k < m; ++k) {
      Range x = r[k];
      int j = k - 1;
      while (j >= 0 && less(&x, &r[j])) {
        r[j + 1] = r[j];
        --j;
      }
      r[j + 1] = x;
    }
  }
}

static int cmp_i64_at(const i64 *keys, int a, int b) {
  if (keys[a] != keys[b]) return keys[a] < keys[b] ? -1 : 1;
  return a < b ? -1 : (a > b);
}

/* Sort idx[0..m) by keys[idx] (ties by index): a heap sort, no recursion. */
static void sort_by(int *idx, int m, const i64 *keys) {
  int start, end;
  for (start = m / 2 - 1; start >= 0; --start) {
    int root = start;
    for (;;) {
      int child = 2 * root + 1, t;
      if (child >= m) break;
      if (child + 1 < m && cmp_i64_at(keys, idx[child], idx[child + 1]) < 0) ++child;
      if (cmp_i64_at(keys, idx[root], idx[child]) >= 0) break;
      t = idx[root];
      idx[root] = idx[child];
      idx[child] = t;
      root = child;
    }
  }
  for (end = m - 1; end > 0; --end) {
    int root = 0, t = idx[0];
    idx[0] = idx[end];
    idx[end] = t;
    for (;;) {
      int child = 2 * root + 1;
      if (child >= end) break;
      if (child + 1 < end && cmp_i64_at(keys, idx[child], idx[child + 1]) < 0) ++child;
      if (cmp_i64_at(keys, idx[root], idx[child]) >= 0) break;
      t = idx[root];
      idx[root] = idx[child];
      idx[child] = t;
      root = child;
    }
  }
}

/* First index of sorted v[0..m) with v[k] >= x (lower) or > x (upper). */
static int bound(const i64 *v, int m, i64 x, int upper) {
  int lo = 0, hi = m;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (v[mid] < x || (upper && v[mid] == x))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Sort r[0..m) by (off, end), tmp[0..m) scratch: a radix sort on the
 * offset (branch free: comparison sorts of random offsets spend their time
 * in mispredicted branches), then runs of equal offsets by end. */
static void sort_ranges_radix(Range *r, Range *tmp, int m) {
  i64 lo = r[0].off, hi = r[0].off;
  uint64_t span;
  Range *src = r, *dst = tmp, *t;
  int k, shift;
  for (k = 1; k < m; ++k) {
    if (r[k].off < lo) lo = r[k].off;
    if (r[k].off > hi) hi = r[k].off;
  }
  span = (uint64_t)hi - (uint64_t)lo;
  for (shift = 0; shift < 64 && (span >> shift) != 0; shift += 8) {
    int count[257] = {0}, b;
    for (k = 0; k < m; ++k)
      ++count[(((uint64_t)src[k].off - (uint64_t)lo) >> shift & 255) + 1];
    for (b = 0; b < 256; ++b) count[b + 1] += count[b];
    for (k = 0; k < m; ++k)
      dst[count[((uint64_t)src[k].off - (uint64_t)lo) >> shift & 255]++] = src[k];
    t = src;
    src = dst;
    dst = t;
  }
  if (src != r) memcpy(r, src, sizeof(Range) * (size_t)m);
  for (k = 0; k < m;) { /* equal offsets: by end */
    int e = k + 1;
    while (e < m && r[e].off == r[k].off) ++e;
    if (e - k > 1) sort_ranges(r + k, e - k, 2 * 31);
    k = e;
  }
}

/* The offset rule over the ranges to avoid (placement.py's _offset_in_pool). */
static i64 offset_in_pool(Range *occ, Range *tmp, int m, i64 size, i64 alignment, int rule,
                          i64 limit) {
  i64 candidate = 0, best = -1, best_gap = -1;
  int k;
  if (m == 0) return 0;
  if (rule == AFTER_CONFLICTS) {
    i64 top = occ[0].end;
    for (k = 1; k < m; ++k)
      if (occ[k].end > top) top = occ[k].end;
    return align_up(top, alignment);
  }
  if (m > 48)
    sort_ranges_radix(occ, tmp, m);
  else
    sort_ranges(occ, m, 2 * 31);
  for (k = 0; k < m; ++k) {
    if (candidate + size <= occ[k].off) {
      i64 gap;
      if (rule == FIRST_FIT) return candidate;
      gap = occ[k].off - candidate;
      if ((best < 0 || gap < best_gap) && (limit < 0 || candidate + size <= limit)) {
        best = candidate;
        best_gap = gap;
      }
    }
    if (occ[k].end > candidate) candidate = align_up(occ[k].end, alignment);
  }
  return best >= 0 ? best : candidate;
}

/* Place order[0..n_order) (see placement.py's decode). Buffer i conflicts
 * with j when both have a size and their live intervals [start, end) meet
 * (both non-empty), or when an explicit conflict links them (xc: CSR,
 * symmetric, sized buffers only). fb (CSR): per buffer i, the buffers j of
 * an allowed overlap and the open interval (lo, hi) that offset[i] -
 * offset[j] must avoid instead of (-size[i], size[j]). Candidate pools and
 * their alignments: CSR cand/cand_align; limits[p] < 0: unbounded.
 *
 * Returns -1 with pool_of/offset_of filled, or the position in order of the
 * first buffer that fits no candidate, with tried[k] the end it would have
 * had in its k-th candidate pool; -2 when out of memory; -3 when
 * cpu_budget >= 0 and more than that many seconds of process CPU time
 * (clock()) have passed, looked at every 64 buffers. */
int pd_decode(int n, int rule, const int *order, int n_order, const i64 *sizes,
              const i64 *starts, const i64 *ends, const i64 *buf_align,
              const int *cand_start, const int *cand, const i64 *cand_align,
              const i64 *limits, const i64 *pool_align, const int *xc_start,
              const int *xc, const int *fb_start, const int *fb,
              const i64 *fb_lo, const i64 *fb_hi, int *pool_of, i64 *offset_of,
              i64 *tried, double cpu_budget) {
  int *live = NULL, *node_start = NULL, *node_list = NULL;
  int *lo_leaf = NULL, *hi_leaf = NULL, *stamp = NULL, *fstamp = NULL;
  int *near = NULL, *fill = NULL;
  i64 *keys = NULL, *flo = NULL, *fhi = NULL;
  Range *occ = NULL, *tmp = NULL;
  int n_live = 0, n_leaf = 0, leaves = 1, k, pos, result = -2;
  clock_t t0 = clock();

  live = malloc(sizeof(int) * (size_t)(n + 1));
  keys = malloc(sizeof(i64) * (size_t)(n + 1));
  lo_leaf = malloc(sizeof(int) * (size_t)(n + 1));
  hi_leaf = malloc(sizeof(int) * (size_t)(n + 1));
  stamp = calloc((size_t)(n + 1), sizeof(int));
  fstamp = calloc((size_t)(n + 1), sizeof(int));
  flo = malloc(sizeof(i64) * (size_t)(n + 1));
  fhi = malloc(sizeof(i64) * (size_t)(n + 1));
  near = malloc(sizeof(int) * (size_t)(n + 1));
  occ = malloc(sizeof(Range) * (size_t)(n + 1));
  tmp = malloc(sizeof(Range) * (size_t)(n + 1));
  if (!live || !keys || !lo_leaf || !hi_leaf || !stamp || !fstamp || !flo ||
      !fhi || !near || !occ || !tmp)
    goto done;

  /* The live buffers sorted by start; the leaves are their distinct starts. */
  for (k = 0; k < n; ++k) {
    pool_of[k] = -1;
    offset_of[k] = 0;
    if (sizes[k] > 0 && starts[k] < ends[k]) live[n_live++] = k;
  }
  sort_by(live, n_live, starts);
  for (k = 0; k < n_live; ++k) {
    i64 s = starts[live[k]];
    if (n_leaf == 0 || keys[n_leaf - 1] != s) keys[n_leaf++] = s;
  }
  while (leaves < n_leaf) leaves *= 2;
  for (k = 0; k < n_live; ++k) {
    int i = live[k];
    lo_leaf[i] = bound(keys, n_leaf, starts[i], 0);
    hi_leaf[i] = bound(keys, n_leaf, ends[i], 0);
  }
  /* Segment tree (nodes 1 .. 2 * leaves - 1): each live buffer in the
   * canonical nodes of its leaf range, as CSR (count, then fill). */
  node_start = calloc((size_t)(2 * leaves + 1), sizeof(int));
  fill = malloc(sizeof(int) * (size_t)(2 * leaves + 1));
  if (!node_start || !fill) goto done;
  for (pos = 0; pos < 2; ++pos) {
    for (k = 0; k < n_live; ++k) {
      int i = live[k], l = lo_leaf[i] + leaves, r = hi_leaf[i] + leaves;
      for (; l < r; l >>= 1, r >>= 1) {
        if (l & 1) {
          if (pos) node_list[fill[l]++] = i; else ++node_start[l + 1];
          ++l;
        }
        if (r & 1) {
          --r;
          if (pos) node_list[fill[r]++] = i; else ++node_start[r + 1];
        }
      }
    }
    if (!pos) {
      for (k = 0; k < 2 * leaves; ++k) node_start[k + 1] += node_start[k];
      for (k = 0; k < 2 * leaves; ++k) fill[k] = node_start[k];
      node_list = malloc(sizeof(int) * (size_t)(node_start[2 * leaves] + 1));
      if (!node_list) goto done;
    }
  }
  /* starts of the live buffers in start order, for the second query */
  for (k = 0; k < n_live; ++k) keys[k] = starts[live[k]];

  for (pos = 0; pos < n_order; ++pos) {
    int i = order[pos], n_near = 0, c;
    if (cpu_budget >= 0 && (pos & 63) == 0 &&
        (double)(clock() - t0) / CLOCKS_PER_SEC > cpu_budget) {
      result = -3; /* out of time: no plan */
      goto done;
    }
    i64 size = sizes[i];
    int mark = pos + 1;
    stamp[i] = mark; /* never its own neighbour */
    if (size > 0 && starts[i] < ends[i]) {
      /* live at its start: on the path from its leaf to the root */
      int x;
      for (x = lo_leaf[i] + leaves; x >= 1; x >>= 1) {
        int e;
        for (e = node_start[x]; e < node_start[x + 1]; ++e) {
          int j = node_list[e];
          if (pool_of[j] >= 0 && stamp[j] != mark) {
            stamp[j] = mark;
            near[n_near++] = j;
          }
        }
      }
      /* starting during its life, after its start */
      {
        int a = bound(keys, n_live, starts[i], 1);
        int b = bound(keys, n_live, ends[i], 0);
        for (; a < b; ++a) {
          int j = live[a];
          if (pool_of[j] >= 0 && stamp[j] != mark) {
            stamp[j] = mark;
            near[n_near++] = j;
          }
        }
      }
    }
    if (size > 0) {
      int e;
      for (e = xc_start[i]; e < xc_start[i + 1]; ++e) {
        int j = xc[e];
        if (pool_of[j] >= 0 && stamp[j] != mark) {
          stamp[j] = mark;
          near[n_near++] = j;
        }
      }
    } else {
      n_near = 0; /* no bytes: conflicts with nothing */
    }
    {
      int e;
      for (e = fb_start[i]; e < fb_start[i + 1]; ++e) {
        fstamp[fb[e]] = mark;
        flo[fb[e]] = fb_lo[e];
        fhi[fb[e]] = fb_hi[e];
      }
    }
    for (c = cand_start[i]; c < cand_start[i + 1]; ++c) {
      int pool = cand[c], m = 0, t;
      i64 limit = limits[pool], offset;
      for (t = 0; t < n_near; ++t) {
        int j = near[t];
        if (pool_of[j] != pool) continue;
        if (rule == AFTER_CONFLICTS) {
          i64 al = buf_align[j] > pool_align[pool] ? buf_align[j] : pool_align[pool];
          occ[m].off = offset_of[j];
          occ[m].end = align_up(offset_of[j] + sizes[j], al);
        } else if (fstamp[j] == mark) {
          occ[m].off = offset_of[j] + flo[j] + size;
          occ[m].end = offset_of[j] + fhi[j];
        } else {
          occ[m].off = offset_of[j];
          occ[m].end = offset_of[j] + sizes[j];
        }
        ++m;
      }
      offset = offset_in_pool(occ, tmp, m, size, cand_align[c], rule, limit);
      if (limit < 0 || offset + size <= limit) {
        pool_of[i] = pool;
        offset_of[i] = offset;
        break;
      }
      tried[c - cand_start[i]] = offset + size;
    }
    if (pool_of[i] < 0) {
      result = pos;
      goto done;
    }
  }
  result = -1;
done:
  free(live);
  free(keys);
  free(lo_leaf);
  free(hi_leaf);
  free(stamp);
  free(fstamp);
  free(flo);
  free(fhi);
  free(near);
  free(occ);
  free(tmp);
  free(node_start);
  free(node_list);
  free(fill);
  return result;
}
