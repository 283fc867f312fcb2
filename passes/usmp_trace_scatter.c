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

#define MAX_AXES 32
#define MAX_TERMS 32
#define MAX_EVENTS 16
#define I64_MAX INT64_MAX

enum { FIRST = 0, LAST = 1, MARK = 2 };

typedef struct {
  int d;
  int nev;            /* accesses walked together (the same loop nest) */
  const i64 *shape;   /* d: iterations per axis (each >= 1) */
  const i64 *tstep;   /* d: time between iterations of each axis */
  const i64 *data;    /* per access, the terms' values, concatenated */
  i64 total;          /* values per access */
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
  /* the affine block: axes b .. d - 1 (b == d: none), along which access
   * e's address moves by step[e][a] (mod 2^64) per iteration; lo[e] and
   * hi[e] bound the block's addresses relative to its first (exact where
   * bounded[e]) */
  int b;
  u64 step[MAX_EVENTS][MAX_AXES];
  i64 lo[MAX_EVENTS], hi[MAX_EVENTS];
  int bounded[MAX_EVENTS];
  u64 n;
  void *target;
} Ctx;

/* The affine block at addresses base[e] (its first iteration) and times
 * time[e]: row by row, each access's row in turn (the accesses of one loop
 * nest are often neighbours: their rows share cache lines); a row where the
 * mask (at mpos there) does not hold is skipped. */
#define DEFINE_BLOCK(NAME, TYPE, STORE)                                       \
  static void NAME##_block(const Ctx *c, const u64 *base, const i64 *time,   \
                           i64 mpos) {                                        \
    TYPE *out = (TYPE *)c->target;                                            \
    const int b = c->b, d = c->d, nev = c->nev;                               \
    const i64 m = c->shape[d - 1], ts = c->tstep[d - 1];                      \
    i64 idx[MAX_AXES];                                                        \
    u64 row[MAX_EVENTS];                                                      \
    i64 t[MAX_EVENTS];                                                        \
    int checked[MAX_EVENTS];                                                  \
    const int masked = c->mask != NULL && c->mlast >= b;                      \
    int ax, e;                                                                \
    for (e = 0; e < nev; e++) {                                               \
      row[e] = base[e];                                                       \
      t[e] = time[e];                                                         \
      checked[e] = 1;                                                         \
      if (c->bounded[e] && base[e] < c->n) {                                  \
        const i64 first = (i64)base[e]; /* < 2^63 */                          \
        checked[e] = !(first + c->lo[e] >= 0 &&                               \
                       first <= I64_MAX - c->hi[e] &&                         \
                       (u64)(first + c->hi[e]) < c->n);                       \
      }                                                                       \
    }                                                                         \
    for (ax = b; ax < d - 1; ax++)                                            \
      idx[ax] = 0;                                                            \
    for (;;) {                                                                \
      for (e = 0; e < nev && (!masked || c->mask[mpos]); e++) {              \
        const u64 r = row[e], s = c->step[e][d - 1];                          \
        const i64 te = t[e];                                                  \
        i64 k;                                                                \
        if (checked[e]) {                                                     \
          for (k = 0; k < m; k++) {                                           \
            const u64 a = r + (u64)k * s;                                     \
            if (a < c->n) {                                                   \
              const i64 tm = te + k * ts;                                     \
              (void)tm;                                                       \
              STORE;                                                          \
            }                                                                 \
          }                                                                   \
        } else if (s == 1) { /* contiguous */                                 \
          for (k = 0; k < m; k++) {                                           \
            const u64 a = r + (u64)k;                                         \
            const i64 tm = te + k * ts;                                       \
            (void)tm;                                                         \
            STORE;                                                            \
          }                                                                   \
        } else {                                                              \
          for (k = 0; k < m; k++) {                                           \
            const u64 a = r + (u64)k * s;                                     \
            const i64 tm = te + k * ts;                                       \
            (void)tm;                                                         \
            STORE;                                                            \
          }                                                                   \
        }                                                                     \
      }                                                                       \
      for (ax = d - 2; ax >= b; ax--) { /* the next row */                    \
        if (idx[ax] + 1 < c->shape[ax]) {                                     \
          idx[ax]++;                                                          \
          mpos += c->mstrides[ax];                                            \
          for (e = 0; e < nev; e++) {                                         \
            row[e] += c->step[e][ax];                                         \
            t[e] += c->tstep[ax];                                             \
          }                                                                   \
          break;                                                              \
        }                                                                     \
        mpos -= c->mstrides[ax] * idx[ax];                                    \
        for (e = 0; e < nev; e++) {                                           \
          row[e] -= c->step[e][ax] * (u64)idx[ax];                            \
          t[e] -= c->tstep[ax] * idx[ax];                                     \
        }                                                                     \
        idx[ax] = 0;                                                          \
      }                                                                       \
      if (ax < b)                                                             \
        return;                                                               \
    }                                                                         \
  }

/* An outer axis j (below b): each iteration adds the values of the terms
 * whose last varying axis is j (pos: their positions among an access's
 * values); the block (or, without one, each iteration of the innermost
 * axis) at the end. */
#define DEFINE_WALK(NAME, TYPE, STORE)                                        \
  DEFINE_BLOCK(NAME, TYPE, STORE)                                             \
  static void NAME(const Ctx *c, int j, const u64 *addr, const i64 *time,     \
                   const i64 *pos, i64 mpos) {                                \
    const int d = c->d, nev = c->nev;                                         \
    int e;                                                                    \
    i64 k;                                                                    \
    if (j == c->b) { /* the block: the values of its terms at its start */    \
      u64 base[MAX_EVENTS];                                                   \
      for (e = 0; e < nev; e++) {                                             \
        const i64 *v = c->data + e * c->total;                                \
        int q;                                                                \
        base[e] = addr[e];                                                    \
        for (q = c->level_start[j]; q < c->level_start[d]; q++) {             \
          const int t = c->level_terms[q];                                    \
          base[e] += (u64)v[pos[t]] * (u64)c->coef[t];                        \
        }                                                                     \
      }                                                                       \
      NAME##_block(c, base, time, mpos);                                      \
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
        u64 aa[MAX_EVENTS];                                                   \
        i64 tt[MAX_EVENTS];                                                   \
        int t, q;                                                             \
        if (check && !c->mask[mpos + k * ms])                                 \
          continue;                                                           \
        for (t = 0; t < c->n_terms; t++)                                      \
          next[t] =                                                           \
              pos[t] + k * c->strides[(size_t)t * (size_t)d + (size_t)j];     \
        for (e = 0; e < nev; e++) {                                           \
          const i64 *v = c->data + e * c->total;                              \
          aa[e] = addr[e];                                                    \
          for (q = 0; q < nl; q++)                                            \
            aa[e] += (u64)v[next[lt[q]]] * (u64)c->coef[lt[q]];               \
          tt[e] = time[e] + k * ts;                                           \
        }                                                                     \
        if (j == d - 1) {                                                     \
          TYPE *out = (TYPE *)c->target;                                      \
          for (e = 0; e < nev; e++) {                                         \
            const u64 a = aa[e];                                              \
            const i64 tm = tt[e];                                             \
            (void)tm;                                                         \
            if (a < c->n) {                                                   \
              STORE;                                                          \
            }                                                                 \
          }                                                                   \
        } else                                                                \
          NAME(c, j + 1, aa, tt, next, mpos + k * ms);                        \
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

/* The affine block of c (c->b, c->step, c->lo, c->hi, c->bounded): the
 * innermost axes along which every term of every access is affine and the
 * mask does not vary. */
static void find_block(Ctx *c, const i64 *start) {
  const int d = c->d;
  const i64 lim = (i64)1 << 31;
  int a, e;
  c->b = d;
  for (a = d - 1; a >= 0; a--) {
    /* (the block checks the mask once per row: not along its innermost
     * axis) */
    int ok = c->mask == NULL || a < d - 1 || c->mlast < a;
    for (e = 0; e < c->nev && ok; e++) {
      const i64 *v = c->data + e * c->total;
      u64 step = 0;
      int t;
      for (t = 0; t < c->n_terms && ok; t++) {
        u64 delta = 0;
        ok = affine(v + start[t], start[t + 1] - start[t],
                    c->strides[(size_t)t * (size_t)d + (size_t)a],
                    c->shape[a], &delta);
        step += delta * (u64)c->coef[t];
      }
      c->step[e][a] = step;
    }
    if (!ok)
      break;
    c->b = a;
  }
  /* the extremes, where every |step| and extent is below 2^31 (each
   * product below 2^62 in magnitude; the sums checked against 2^62) */
  for (e = 0; e < c->nev; e++) {
    c->lo[e] = c->hi[e] = 0;
    c->bounded[e] = 1;
    for (a = c->b; a < d; a++) {
      const i64 s = (i64)c->step[e][a];
      i64 span;
      if (s <= -lim || s >= lim || c->shape[a] > lim) {
        c->bounded[e] = 0;
        break;
      }
      span = (c->shape[a] - 1) * s;
      if (span < 0)
        c->lo[e] += span;
      else
        c->hi[e] += span;
      if (c->lo[e] < -((i64)1 << 62) || c->hi[e] > ((i64)1 << 62)) {
        c->bounded[e] = 0;
        break;
      }
    }
  }
}

static void store_one(int mode, int width, void *target, u64 a, i64 tm) {
  if (mode == MARK)
    ((unsigned char *)target)[a] = 1;
  else if (width == 4) {
    int32_t *out = (int32_t *)target;
    if (mode == FIRST ? out[a] > tm : out[a] < tm)
      out[a] = (int32_t)tm;
  } else {
    i64 *out = (i64 *)target;
    if (mode == FIRST ? out[a] > tm : out[a] < tm)
      out[a] = tm;
  }
}

/* For nev accesses of one loop nest of d axes (shape[a] iterations each),
 * store into target (n elements: int32 or int64 times for FIRST / LAST,
 * bytes for MARK) at each address in [0, n) of an iteration that runs: the
 * smaller (FIRST) or larger (LAST) of the time there and the iteration's
 * time, or 1 (MARK).
 *
 * Iteration k (one index per axis) runs where mask[sum(k[a] * mstrides[a])]
 * is nonzero (mask NULL: all run; mask_len its length); its time for access
 * e is t0[e] + sum(k[a] * tstep[a]); its address is offset[e] + sum over the
 * terms i of v[start[i] + sum(k[a] * strides[i * d + a])] * coef[i] (modulo
 * 2^64, as a signed value), v = data + e * start[n_terms] the access's
 * values: term i's are v[start[i] .. start[i + 1]), a C-ordered array whose
 * extent along axis a is shape[a] where its stride is nonzero.
 *
 * Returns 0, or 1 (writes nothing) if the arguments are inconsistent: too
 * many axes, terms or accesses, a negative stride or step, a term's or the
 * mask's index past its values, a time past the target's type. */
int rt_scatter(int nev, int d, const i64 *shape, const i64 *t0,
               const i64 *tstep, int n_terms, const i64 *data,
               const i64 *start, const i64 *strides, const i64 *coef,
               const i64 *offset, const unsigned char *mask, i64 mask_len,
               const i64 *mstrides, i64 n, int mode, int width,
               void *target) {
  Ctx c;
  i64 pos[MAX_TERMS];
  i64 time[MAX_EVENTS];
  u64 addr[MAX_EVENTS];
  i64 tspan = 0;
  int a, t, e;
  if (nev < 1 || nev > MAX_EVENTS || d < 0 || d > MAX_AXES || n_terms < 0 ||
      n_terms > MAX_TERMS || n < 0 || target == NULL)
    return 1;
  if (!((mode == MARK && width == 1) ||
        ((mode == FIRST || mode == LAST) && (width == 4 || width == 8))))
    return 1;
  for (a = 0; a < d; a++) {
    if (shape[a] < 0 || tstep[a] < 0)
      return 1;
    if (shape[a] == 0)
      return 0; /* no iteration */
    tspan = add_product(tspan, shape[a] - 1, tstep[a]);
    if (tspan < 0)
      return 1;
  }
  for (e = 0; e < nev; e++) {
    const i64 tmax = t0[e] < 0 || t0[e] > I64_MAX - tspan ? -1 : t0[e] + tspan;
    if (tmax < 0 || (width == 4 && tmax > INT32_MAX))
      return 1;
    time[e] = t0[e];
    addr[e] = (u64)offset[e];
  }
  c.d = d;
  c.nev = nev;
  c.shape = shape;
  c.tstep = tstep;
  c.data = data;
  c.total = n_terms > 0 ? start[n_terms] : 0;
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
  if (start[0] != 0)
    return 1;
  for (t = 0; t < n_terms; t++) {
    i64 end = start[t];
    int last = -1;
    if (start[t + 1] <= start[t])
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
      for (e = 0; e < nev; e++)
        addr[e] += (u64)data[e * c.total + start[t]] * (u64)coef[t];
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
    for (e = 0; e < nev; e++)
      if (addr[e] < c.n)
        store_one(mode, width, target, addr[e], time[e]);
    return 0;
  }
  find_block(&c, start);
  if (mode == MARK)
    walk_mark(&c, 0, addr, time, pos, 0);
  else if (mode == FIRST)
    (width == 4 ? walk_first32 : walk_first64)(&c, 0, addr, time, pos, 0);
  else
    (width == 4 ? walk_last32 : walk_last64)(&c, 0, addr, time, pos, 0);
  return 0;
}
