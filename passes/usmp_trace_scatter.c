/* The replay's byte enumeration (usmp_kernel_trace.py's _Tracer.light_result)
 * for one access of a loop nest, in C: every iteration that runs, its time
 * and its element address, scattered into a per-element array (the first
 * time, the last time, or only "touched").
 *
 * The same values as the numpy path (_event_times, _in_buffer, ufunc.at):
 * the time of an iteration is t0 + sum(k[a] * tstep[a]); its address is
 * offset + sum(term_i[k] * coef_i) in 64-bit two's complement (numpy's int64
 * wraps; here unsigned arithmetic, which wraps without undefined behaviour),
 * and an address outside [0, n) is no element of the buffer. The order the
 * iterations are visited in does not matter (minima, maxima, marks).
 * tests/test_usmp_trace_native.py compares the two paths.
 *
 * Every iteration is visited. The inner axes along which each term moves by
 * a constant step and the mask does not vary (the affine block: most loop
 * nests' inner loops) are walked by adding steps, with no value read per
 * iteration and, where the block's extreme addresses are inside the
 * buffer, no bounds check; the outer axes read the terms' values.
 *
 * Built on first use by usmp_trace_native.py (minimalloc_native.compiled)
 * and loaded with ctypes; without a compiler the numpy path runs instead.
 * Plain C99, no globals, no allocation; every array access is within the
 * lengths the caller passes (checked before the walk: rt_scatter returns
 * nonzero and writes nothing on inconsistent arguments). */

#include <stddef.h>
#include <stdint.h>

typedef int64_t i64;
typedef uint64_t u64;

#define MAX_AXES 64
#define MAX_TERMS 64
#define I64_MAX INT64_MAX

enum { FIRST = 0, LAST = 1, MARK = 2 };

typedef struct {
  int d;
  const i64 *shape;   /* d: iterations per axis (each >= 1) */
  const i64 *tstep;   /* d: time between iterations of each axis */
  const i64 *data;    /* the terms' values, concatenated */
  const i64 *strides; /* n_terms x d: a term's element stride per axis */
  const i64 *coef;    /* n_terms: each term's multiplier */
  int n_terms;
  const unsigned char *mask; /* NULL: every iteration runs */
  const i64 *mstrides;       /* d */
  int mlast;                 /* the mask's last varying axis */
  /* the terms by the last axis they vary along (level_terms[level_start[j]
   * .. level_start[j + 1]]: those of axis j) */
  int level_start[MAX_AXES + 1];
  int level_terms[MAX_TERMS];
  /* the affine block: axes b .. d - 1 (b == d: none), along which the
   * address moves by step[a] (mod 2^64) per iteration; lo and hi bound the
   * block's addresses relative to its first (exact: |values| < 2^62) */
  int b;
  u64 step[MAX_AXES];
  i64 lo, hi;
  int bounded; /* lo and hi known */
  u64 n;
  void *target;
} Ctx;

/* The affine block at address base (its first iteration) and time time. */
#define DEFINE_BLOCK(NAME, TYPE, STORE)                                       \
  static void NAME##_block(const Ctx *c, u64 base, i64 time) {               \
    TYPE *out = (TYPE *)c->target;                                            \
    const int b = c->b, d = c->d;                                             \
    const i64 m = c->shape[d - 1], ts = c->tstep[d - 1];                      \
    const u64 s = c->step[d - 1];                                             \
    i64 idx[MAX_AXES];                                                        \
    u64 row = base;                                                           \
    i64 t = time;                                                             \
    int ax, checked = 1;                                                      \
    if (c->bounded && base < c->n) {                                          \
      const i64 first = (i64)base; /* < 2^63 */                               \
      checked = !(first + c->lo >= 0 && first <= I64_MAX - c->hi &&         \
                  (u64)(first + c->hi) < c->n);                               \
    }                                                                         \
    for (ax = b; ax < d - 1; ax++)                                            \
      idx[ax] = 0;                                                            \
    for (;;) {                                                                \
      i64 k;                                                                  \
      if (checked) {                                                          \
        for (k = 0; k < m; k++) {                                             \
          const u64 a = row + (u64)k * s;                                     \
          if (a < c->n) {                                                     \
            const i64 tm = t + k * ts;                                        \
            (void)tm;                                                         \
            STORE;                                                            \
          }                                                                   \
        }                                                                     \
      } else if (s == 1) { /* contiguous */                                   \
        for (k = 0; k < m; k++) {                                             \
          const u64 a = row + (u64)k;                                         \
          const i64 tm = t + k * ts;                                          \
          (void)tm;                                                           \
          STORE;                                                              \
        }                                                                     \
      } else {                                                                \
        for (k = 0; k < m; k++) {                                             \
          const u64 a = row + (u64)k * s;                                     \
          const i64 tm = t + k * ts;                                          \
          (void)tm;                                                           \
          STORE;                                                              \
        }                                                                     \
      }                                                                       \
      for (ax = d - 2; ax >= b; ax--) { /* the next row */                    \
        if (idx[ax] + 1 < c->shape[ax]) {                                     \
          idx[ax]++;                                                          \
          row += c->step[ax];                                                 \
          t += c->tstep[ax];                                                  \
          break;                                                              \
        }                                                                     \
        row -= c->step[ax] * (u64)idx[ax];                                    \
        t -= c->tstep[ax] * idx[ax];                                          \
        idx[ax] = 0;                                                          \
      }                                                                       \
      if (ax < b)                                                             \
        return;                                                               \
    }                                                                         \
  }

/* An outer axis j (below b): each iteration adds the values of the terms
 * whose last varying axis is j; the block (or, without one, each
 * iteration of the innermost axis) at the end. */
#define DEFINE_WALK(NAME, TYPE, STORE)                                        \
  DEFINE_BLOCK(NAME, TYPE, STORE)                                             \
  static void NAME(const Ctx *c, int j, u64 addr, i64 time, const i64 *pos,   \
                   i64 mpos) {                                                \
    const int d = c->d;                                                       \
    i64 k;                                                                    \
    if (j == c->b) { /* the block: the values of its terms at its start */    \
      int q;                                                                  \
      for (q = c->level_start[j]; q < c->level_start[d]; q++) {               \
        const int t = c->level_terms[q];                                      \
        addr += (u64)c->data[pos[t]] * (u64)c->coef[t];                       \
      }                                                                       \
      NAME##_block(c, addr, time);                                            \
      return;                                                                 \
    }                                                                         \
    {                                                                         \
      const i64 m = c->shape[j];                                              \
      const int *lt = c->level_terms + c->level_start[j];                     \
      const int nl = c->level_start[j + 1] - c->level_start[j];               \
      const i64 ts = c->tstep[j];                                             \
      const int check = c->mask != NULL && c->mlast == j;                     \
      const i64 ms = c->mstrides[j];                                          \
      for (k = 0; k < m; k++) {                                               \
        i64 next[MAX_TERMS];                                                  \
        u64 a = addr;                                                         \
        int t, q;                                                             \
        if (check && !c->mask[mpos + k * ms])                                 \
          continue;                                                           \
        for (t = 0; t < c->n_terms; t++)                                      \
          next[t] =                                                           \
              pos[t] + k * c->strides[(size_t)t * (size_t)d + (size_t)j];     \
        for (q = 0; q < nl; q++)                                              \
          a += (u64)c->data[next[lt[q]]] * (u64)c->coef[lt[q]];               \
        if (j == d - 1) {                                                     \
          if (a < c->n) {                                                     \
            TYPE *out = (TYPE *)c->target;                                    \
            const i64 tm = time + k * ts;                                     \
            (void)tm;                                                         \
            STORE;                                                            \
          }                                                                   \
        } else                                                                \
          NAME(c, j + 1, a, time + k * ts, next, mpos + k * ms);              \
      }                                                                       \
    }                                                                         \
  }

/* (branch-free: whether a time replaces the one stored is unpredictable) */
DEFINE_WALK(walk_first32, int32_t, {
  const i64 o = out[a];
  out[a] = (int32_t)(o < tm ? o : tm);
})
DEFINE_WALK(walk_first64, i64, {
  const i64 o = out[a];
  out[a] = o < tm ? o : tm;
})
DEFINE_WALK(walk_last32, int32_t, {
  const i64 o = out[a];
  out[a] = (int32_t)(o > tm ? o : tm);
})
DEFINE_WALK(walk_last64, i64, {
  const i64 o = out[a];
  out[a] = o > tm ? o : tm;
})
DEFINE_WALK(walk_mark, unsigned char, out[a] = 1)

/* a + b * c for non-negative values, or -1 past I64_MAX. */
static i64 add_product(i64 a, i64 b, i64 c) {
  if (a < 0 || b < 0 || c < 0)
    return -1;
  if (b != 0 && c > (I64_MAX - a) / b)
    return -1;
  return a + b * c;
}

/* Whether term t (values v, len of them) moves by the same step along axis
 * a everywhere (that step in *delta). Its values are a C-ordered array: an
 * element's index along the axis of stride s and extent m is (i / s) % m. */
static int affine(const i64 *v, i64 len, i64 s, i64 m, u64 *delta) {
  i64 i;
  if (s == 0 || m <= 1) {
    *delta = 0;
    return 1;
  }
  if (s >= len)
    return 0;
  *delta = (u64)v[s] - (u64)v[0];
  for (i = 0; i < len; i++)
    if ((i / s) % m < m - 1 &&
        (i + s >= len || (u64)v[i + s] - (u64)v[i] != *delta))
      return 0;
  return 1;
}

/* The affine block of c (c->b, c->step, c->lo, c->hi, c->bounded). */
static void find_block(Ctx *c, const i64 *start) {
  const int d = c->d;
  const i64 lim = (i64)1 << 31;
  int a;
  c->b = d;
  for (a = d - 1; a >= 0; a--) {
    u64 step = 0;
    int t, ok = c->mask == NULL || c->mlast < a;
    for (t = 0; t < c->n_terms && ok; t++) {
      u64 delta;
      ok = affine(c->data + start[t], start[t + 1] - start[t],
                  c->strides[(size_t)t * (size_t)d + (size_t)a], c->shape[a],
                  &delta);
      step += delta * (u64)c->coef[t];
    }
    if (!ok)
      break;
    c->step[a] = step;
    c->b = a;
  }
  /* the extremes, where every |step| and extent is below 2^31 (the sum of
   * at most 64 products each below 2^62 in magnitude: no overflow in the
   * running sum bounded by 2^62 checked at each step) */
  c->lo = c->hi = 0;
  c->bounded = 1;
  for (a = c->b; a < d && c->bounded; a++) {
    const i64 s = (i64)c->step[a];
    i64 span;
    if (s <= -lim || s >= lim || c->shape[a] > lim) {
      c->bounded = 0;
      break;
    }
    span = (c->shape[a] - 1) * s;
    if (span < 0)
      c->lo += span;
    else
      c->hi += span;
    if (c->lo < -((i64)1 << 62) || c->hi > ((i64)1 << 62))
      c->bounded = 0;
  }
}

/* For one access of a loop nest of d axes (shape[a] iterations each), store
 * into target (n elements: int32 or int64 times for FIRST / LAST, bytes for
 * MARK) at each address in [0, n) of an iteration that runs: the smaller
 * (FIRST) or larger (LAST) of the time there and the iteration's time, or 1
 * (MARK).
 *
 * Iteration k (one index per axis) runs where mask[sum(k[a] * mstrides[a])]
 * is nonzero (mask NULL: all run; mask_len its length); its time is
 * t0 + sum(k[a] * tstep[a]); its address is offset + sum over the terms i of
 * data[start[i] + sum(k[a] * strides[i * d + a])] * coef[i] (modulo 2^64,
 * as a signed value), term i's values being data[start[i] .. start[i + 1]),
 * a C-ordered array whose extent along axis a is shape[a] where its stride
 * is nonzero.
 *
 * Returns 0, or 1 (writes nothing) if the arguments are inconsistent: too
 * many axes or terms, a negative stride or step, a term's or the mask's
 * index past its values, a time past the target's type. */
int rt_scatter(int d, const i64 *shape, i64 t0, const i64 *tstep,
               int n_terms, const i64 *data, const i64 *start,
               const i64 *strides, const i64 *coef, i64 offset,
               const unsigned char *mask, i64 mask_len, const i64 *mstrides,
               i64 n, int mode, int width, void *target) {
  Ctx c;
  i64 pos[MAX_TERMS];
  i64 tmax = t0;
  u64 addr = (u64)offset;
  int a, t;
  if (d < 0 || d > MAX_AXES || n_terms < 0 || n_terms > MAX_TERMS || n < 0 ||
      t0 < 0 || target == NULL)
    return 1;
  if (!((mode == MARK && width == 1) ||
        ((mode == FIRST || mode == LAST) && (width == 4 || width == 8))))
    return 1;
  for (a = 0; a < d; a++) {
    if (shape[a] < 0 || tstep[a] < 0)
      return 1;
    if (shape[a] == 0)
      return 0; /* no iteration */
    tmax = add_product(tmax, shape[a] - 1, tstep[a]);
    if (tmax < 0)
      return 1;
  }
  if (width == 4 && tmax > INT32_MAX)
    return 1;
  c.d = d;
  c.shape = shape;
  c.tstep = tstep;
  c.data = data;
  c.strides = strides;
  c.coef = coef;
  c.n_terms = n_terms;
  c.mask = mask;
  c.mstrides = mstrides;
  c.mlast = -1;
  c.n = (u64)n;
  c.target = target;
  for (a = 0; a <= d; a++)
    c.level_start[a] = 0;
  for (t = 0; t < n_terms; t++) {
    i64 end = start[t];
    int last = -1;
    if (start[t] < 0 || start[t + 1] < start[t])
      return 1;
    for (a = 0; a < d; a++) {
      const i64 s = strides[(size_t)t * (size_t)d + (size_t)a];
      end = add_product(end, shape[a] - 1, s);
      if (end < 0)
        return 1;
      if (s != 0 && shape[a] > 1)
        last = a;
    }
    if (end >= start[t + 1])
      return 1;
    pos[t] = start[t];
    if (last < 0) /* the same value at every iteration */
      addr += (u64)data[start[t]] * (u64)coef[t];
    else
      c.level_start[last + 1]++;
  }
  for (a = 0; a < d; a++)
    c.level_start[a + 1] += c.level_start[a];
  {
    int fill[MAX_AXES];
    for (a = 0; a < d; a++)
      fill[a] = c.level_start[a];
    for (t = 0; t < n_terms; t++) {
      int last = -1;
      for (a = 0; a < d; a++)
        if (strides[(size_t)t * (size_t)d + (size_t)a] != 0 && shape[a] > 1)
          last = a;
      if (last >= 0)
        c.level_terms[fill[last]++] = t;
    }
  }
  if (mask != NULL) {
    i64 end = 0;
    for (a = 0; a < d; a++) {
      end = add_product(end, shape[a] - 1, mstrides[a]);
      if (end < 0)
        return 1;
      if (mstrides[a] != 0 && shape[a] > 1)
        c.mlast = a;
    }
    if (end >= mask_len)
      return 1;
    if (c.mlast < 0) { /* one condition for every iteration */
      if (!mask[0])
        return 0;
      c.mask = NULL;
    }
  }
  if (d == 0) { /* one iteration */
    if (addr < c.n) {
      if (mode == MARK)
        ((unsigned char *)target)[addr] = 1;
      else if (width == 4) {
        int32_t *out = (int32_t *)target;
        if (mode == FIRST ? out[addr] > t0 : out[addr] < t0)
          out[addr] = (int32_t)t0;
      } else {
        i64 *out = (i64 *)target;
        if (mode == FIRST ? out[addr] > t0 : out[addr] < t0)
          out[addr] = t0;
      }
    }
    return 0;
  }
  find_block(&c, start);
  if (mode == MARK)
    walk_mark(&c, 0, addr, t0, pos, 0);
  else if (mode == FIRST)
    (width == 4 ? walk_first32 : walk_first64)(&c, 0, addr, t0, pos, 0);
  else
    (width == 4 ? walk_last32 : walk_last64)(&c, 0, addr, t0, pos, 0);
  return 0;
}
