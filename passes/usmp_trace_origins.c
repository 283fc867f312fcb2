/* The replay's origin checks and writes (usmp_replay.py's _Replay.check and
 * _Replay.write) for one set of bytes, in C: one pass, no temporary arrays.
 *
 * The replay keeps two memories: per logical byte the stamp of the write
 * that gave it its value (int32, -1: none yet), and per physical byte its
 * origin, stamp * 2^32 + logical byte index (int64). The bytes of one call
 * are n pairs (logical index, physical index): logical l0 + k or lidx[k],
 * physical p0 + k or pidx[k], for the k where mask[k] is set (mask NULL:
 * every k).
 *
 * rt_check: the number of pairs whose physical origin is not
 * stamp * 2^32 + logical index, among those whose logical byte has a stamp
 * (the numpy path's verdict; its halves comparison gives the same one);
 * it stops counting at the first such pair (the caller then takes the
 * numpy path, which words the report).
 * rt_write: stamps the logical bytes with `stamp` and their physical bytes
 * with their new origin (in order: a physical byte given twice keeps the
 * last, as numpy's assignment does).
 *
 * Both return -1 and write nothing when an index is outside its memory (the
 * caller's numpy path then raises as before) or the stamp is negative.
 * Built on first use by usmp_trace_origins.py (minimalloc_native.compiled)
 * and loaded with ctypes; without a compiler the numpy path runs instead.
 * tests/test_usmp_trace_origins.py compares the two paths. Plain C99, no
 * globals, no allocation. */

#include <stddef.h>
#include <stdint.h>

typedef int64_t i64;

/* Whether every index the pairs use is inside its memory. */
static int inside(i64 n, i64 l0, const i64 *lidx, i64 nlog, i64 p0,
                  const i64 *pidx, i64 nphys, const unsigned char *mask) {
  i64 k;
  if (n < 0)
    return 0;
  if (n == 0)
    return 1;
  if (lidx == NULL && (l0 < 0 || l0 > nlog - n))
    return 0;
  if (pidx == NULL && (p0 < 0 || p0 > nphys - n))
    return 0;
  if (lidx != NULL)
    for (k = 0; k < n; k++)
      if ((mask == NULL || mask[k]) && (lidx[k] < 0 || lidx[k] >= nlog))
        return 0;
  if (pidx != NULL)
    for (k = 0; k < n; k++)
      if ((mask == NULL || mask[k]) && (pidx[k] < 0 || pidx[k] >= nphys))
        return 0;
  return 1;
}

i64 rt_check(const int32_t *logical, i64 nlog, const i64 *physical, i64 nphys,
             i64 n, i64 l0, const i64 *lidx, i64 p0, const i64 *pidx,
             const unsigned char *mask) {
  i64 k;
  if (!inside(n, l0, lidx, nlog, p0, pidx, nphys, mask))
    return -1;
  if (lidx == NULL && pidx == NULL && mask == NULL) { /* two ranges */
    const int32_t *s = logical + l0;
    const i64 *o = physical + p0;
    for (k = 0; k < n; k++) {
      const i64 stamp = s[k];
      if (stamp != -1 && o[k] != (i64)((uint64_t)stamp << 32) + l0 + k)
        return 1;
    }
    return 0;
  }
  for (k = 0; k < n; k++) {
    i64 l, stamp;
    if (mask != NULL && !mask[k])
      continue;
    l = lidx == NULL ? l0 + k : lidx[k];
    stamp = logical[l];
    if (stamp != -1 &&
        physical[pidx == NULL ? p0 + k : pidx[k]] !=
            (i64)((uint64_t)stamp << 32) + l)
      return 1;
  }
  return 0;
}

int rt_write(int32_t *logical, i64 nlog, i64 *physical, i64 nphys, i64 n,
             i64 l0, const i64 *lidx, i64 p0, const i64 *pidx,
             const unsigned char *mask, int32_t stamp) {
  const i64 high = (i64)((uint64_t)(stamp < 0 ? 0 : stamp) << 32);
  i64 k;
  if (stamp < 0 || !inside(n, l0, lidx, nlog, p0, pidx, nphys, mask))
    return -1;
  if (lidx == NULL && pidx == NULL && mask == NULL) { /* two ranges */
    int32_t *s = logical + l0;
    i64 *o = physical + p0;
    for (k = 0; k < n; k++) {
      s[k] = stamp;
      o[k] = high + l0 + k;
    }
    return 0;
  }
  for (k = 0; k < n; k++) {
    i64 l;
    if (mask != NULL && !mask[k])
      continue;
    l = lidx == NULL ? l0 + k : lidx[k];
    logical[l] = stamp;
    physical[pidx == NULL ? p0 + k : pidx[k]] = high + l;
  }
  return 0;
}
