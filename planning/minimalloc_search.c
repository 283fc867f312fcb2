/* MiniMalloc's search (minimalloc_solver.py's _Solver), node for node in C.
 *
 * The same search as the Python class: the same nodes in the same order, the
 * same budgets, the same offsets; only faster (about a hundred times). Built
 * on first use by minimalloc_native.py with the system's C compiler and
 * loaded with ctypes; without a compiler the Python class runs instead.
 * Keep the two in step: tests/test_planning_exact.py compares them.
 *
 * Entry point: mm_solve (see the end of the file). Plain C99, no globals
 * shared between calls (all state in one struct), no dependencies. */

#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int64_t i64;

enum { OK = 0, NOT_FOUND = 1, ABORTED = 2, TIMEOUT = 3 };
#define PLACED ((i64)1 << 62)

typedef struct {
  int *buffers;
  int count;
  int a, b; /* section range [a, b) */
} Part;

/* An undo log: (index, old value) pairs. */
typedef struct {
  int *idx;
  i64 *old;
  int len, cap;
} Log;

typedef struct {
  int n, n_sec, decompose;
  i64 capacity;
  const i64 *sizes, *aligns, *width, *area;
  const int *lo, *hi;
  const int *nbr_start, *nbr;
  const int *sec_start, *sec;
  i64 *off, *solution, *min_off, *low, *total;
  int *cuts;
  Log olog, slog; /* undo logs: minimum offsets, section floors */
  /* affected sections: a stamped mark per section, and their list */
  i64 *mark, stamp;
  int *affected;
  int hatless;
  i64 nodes_left, nodes, backtracks;
  i64 work; /* steps since the clock was last read (see search) */
  int check_deadline;
  double deadline;
  const char *heuristic; /* three letters of W, A, T */
} Solver;

static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void log_push(Log *log, int idx, i64 old) {
  if (log->len == log->cap) {
    log->cap = log->cap ? 2 * log->cap : 1024;
    log->idx = realloc(log->idx, sizeof(int) * (size_t)log->cap);
    log->old = realloc(log->old, sizeof(i64) * (size_t)log->cap);
  }
  log->idx[log->len] = idx;
  log->old[log->len++] = old;
}

/* A placement's undo record: where its logs started; rejected: no update. */
typedef struct {
  int olog_at, slog_at, rejected;
} Undo;

static i64 max_range(const i64 *v, int a, int b, i64 dflt) {
  i64 m;
  int k;
  if (a >= b) return dflt;
  m = v[a];
  for (k = a + 1; k < b; ++k)
    if (v[k] > m) m = v[k];
  return m;
}

static int place(Solver *s, int i, i64 offset, const Part *part, Undo *u) {
  i64 size = s->sizes[i], height = offset + size, cap = s->capacity;
  int lo_i = s->lo[i], hi_i = s->hi[i], a = part->a, b = part->b;
  int k, e, n_aff = 0, hatless = 1;
  s->off[i] = offset;
  u->olog_at = s->olog.len;
  u->slog_at = s->slog.len;
  u->rejected = 0;
  if (height > cap) goto reject;
  if (a < b) {
    i64 m1 = max_range(s->total, a, lo_i < b ? lo_i : b, 0);
    i64 m2 = max_range(s->total, hi_i > a ? hi_i : a, b, 0);
    i64 m3 = max_range(s->total, lo_i, hi_i, size) - size;
    i64 m = m1 > m2 ? m1 : m2;
    if (m3 > m) m = m3;
    if (offset + m > cap) goto reject;
  }
  log_push(&s->olog, i, s->min_off[i]);
  s->min_off[i] = PLACED;
  ++s->stamp;
  for (k = lo_i; k < hi_i; ++k) {
    s->mark[k] = s->stamp;
    s->affected[n_aff++] = k;
  }
  for (e = s->nbr_start[i]; e < s->nbr_start[i + 1]; ++e) {
    int j = s->nbr[e];
    i64 old;
    if (s->off[j] >= 0) continue;
    hatless = 0;
    old = s->min_off[j];
    if (old < height) {
      i64 al = s->aligns[j];
      log_push(&s->olog, j, old);
      s->min_off[j] = al > 1 ? (height + al - 1) / al * al : height;
      for (k = s->lo[j]; k < s->hi[j]; ++k) {
        if (s->low[k] == old && s->mark[k] != s->stamp) {
          s->mark[k] = s->stamp;
          s->affected[n_aff++] = k;
        }
      }
    }
  }
  for (k = lo_i; k < hi_i; ++k) s->total[k] -= size;
  s->work += (hi_i - lo_i) + (s->nbr_start[i + 1] - s->nbr_start[i]);
  s->hatless = hatless;
  for (k = 0; k < n_aff; ++k) {
    int sec = s->affected[k], m;
    i64 lowest = PLACED, before = s->low[sec];
    /* Minimum offsets only rise here, so none is below the section's
     * previous floor: a member still at it ends the scan. */
    for (m = s->sec_start[sec]; m < s->sec_start[sec + 1]; ++m) {
      i64 v = s->min_off[s->sec[m]];
      if (v < lowest) {
        lowest = v;
        if (v <= before) break;
      }
    }
    s->work += m - s->sec_start[sec] + 1;
    if (lowest != s->low[sec]) {
      log_push(&s->slog, sec, s->low[sec]);
      s->low[sec] = lowest;
    }
    if (s->total[sec] && lowest + s->total[sec] > cap) return 0;
  }
  return 1;
reject:
  u->rejected = 1;
  hatless = 1;
  for (e = s->nbr_start[i]; e < s->nbr_start[i + 1]; ++e)
    if (s->off[s->nbr[e]] < 0) hatless = 0;
  s->hatless = hatless;
  return 0;
}

static void unplace(Solver *s, int i, const Undo *u) {
  int k;
  s->off[i] = -1;
  if (u->rejected) return;
  while (s->slog.len > u->slog_at) {
    --s->slog.len;
    s->low[s->slog.idx[s->slog.len]] = s->slog.old[s->slog.len];
  }
  for (k = s->lo[i]; k < s->hi[i]; ++k) s->total[k] += s->sizes[i];
  while (s->olog.len > u->olog_at) {
    --s->olog.len;
    s->min_off[s->olog.idx[s->olog.len]] = s->olog.old[s->olog.len];
  }
}

/* ---- static preorder ---------------------------------------------------- */

typedef struct {
  i64 key[3];
  int idx;
} PreKey;

static int cmp_prekey(const void *pa, const void *pb) {
  const PreKey *x = pa, *y = pb;
  int c;
  for (c = 0; c < 3; ++c)
    if (x->key[c] != y->key[c]) return x->key[c] > y->key[c] ? -1 : 1;
  return x->idx < y->idx ? -1 : (x->idx > y->idx);
}

typedef struct {
  i64 offset;
  int rank;
} Cand;

static int cmp_cand(const void *pa, const void *pb) {
  const Cand *x = pa, *y = pb;
  if (x->offset != y->offset) return x->offset < y->offset ? -1 : 1;
  return x->rank < y->rank ? -1 : (x->rank > y->rank);
}

static int sub_solve(Solver *s, const Part *part);

static int search(Solver *s, const Part *part, const int *order,
                  const int *cands, int n_cands, i64 min_offset, int min_rank);

static int decomposed(Solver *s, const Part *part, const int *order,
                      const int *cands, int n_cands, i64 min_offset,
                      int min_rank, int i) {
  int *cut_points = malloc(sizeof(int) * (size_t)(s->hi[i] - s->lo[i] + 2));
  int n_cut = 0, k, status = OK;
  s->solution[i] = s->off[i];
  cut_points[n_cut++] = part->a;
  for (k = s->lo[i]; k < s->hi[i] - 1; ++k)
    if (--s->cuts[k] == 0) cut_points[n_cut++] = k + 1;
  if (n_cut == 1) {
    status = search(s, part, order, cands, n_cands, min_offset, min_rank);
  } else {
    int *unplaced = malloc(sizeof(int) * (size_t)(part->count + 1));
    int n_un = 0, c;
    cut_points[n_cut++] = part->b;
    for (k = 0; k < part->count; ++k)
      if (s->off[part->buffers[k]] < 0) unplaced[n_un++] = part->buffers[k];
    for (c = 0; c + 1 < n_cut; ++c) {
      Part sub;
      int m = 0;
      sub.a = cut_points[c];
      sub.b = cut_points[c + 1];
      sub.buffers = malloc(sizeof(int) * (size_t)(n_un + 1));
      for (k = 0; k < n_un; ++k) {
        int j = unplaced[k];
        if (s->lo[j] < sub.b && sub.a < s->hi[j]) sub.buffers[m++] = j;
      }
      sub.count = m;
      if (m) status = sub_solve(s, &sub);
      free(sub.buffers);
      if (m && status != OK) break;
    }
    free(unplaced);
  }
  for (k = s->lo[i]; k < s->hi[i] - 1; ++k) ++s->cuts[k];
  free(cut_points);
  return status;
}

static int search(Solver *s, const Part *part, const int *order,
                  const int *cands, int n_cands, i64 min_offset, int min_rank) {
  Cand *ordering;
  int *remaining;
  int n_ord = 0, n_rem = 0, k;
  i64 min_height = PLACED;
  if (s->nodes_left <= 0) return ABORTED;
  --s->nodes_left;
  ++s->nodes;
  /* The clock every 256 nodes, or sooner when nodes are costly (a dense
   * pool: thousands of sections and conflicts a placement). */
  s->work += n_cands;
  if (s->check_deadline && (!(s->nodes & 255) || s->work > ((i64)1 << 22))) {
    s->work = 0;
    if (cpu_now() > s->deadline) return TIMEOUT;
  }
  /* The unplaced candidates go to the children as they are (each child
   * sorts its own); only those under the lowest height can be placed here
   * (dominance), so only those are sorted. */
  remaining = malloc(sizeof(int) * (size_t)(n_cands + 1));
  for (k = 0; k < n_cands; ++k) {
    int i = order[cands[k]];
    if (s->off[i] < 0) {
      i64 h = s->min_off[i] + s->sizes[i];
      remaining[n_rem++] = cands[k];
      if (h < min_height) min_height = h;
    }
  }
  if (!n_rem) {
    for (k = 0; k < part->count; ++k)
      s->solution[part->buffers[k]] = s->off[part->buffers[k]];
    free(remaining);
    return OK;
  }
  ordering = malloc(sizeof(Cand) * (size_t)n_rem);
  for (k = 0; k < n_rem; ++k) {
    i64 o = s->min_off[order[remaining[k]]];
    if (o < min_height) {
      ordering[n_ord].offset = o;
      ordering[n_ord++].rank = remaining[k];
    }
  }
  qsort(ordering, (size_t)n_ord, sizeof(Cand), cmp_cand);
  for (k = 0; k < n_ord; ++k) {
    i64 o = ordering[k].offset;
    int r = ordering[k].rank, i = order[r], status = NOT_FOUND, consistent,
        hatless;
    Undo u;
    if (o < min_offset || (o == min_offset && r < min_rank)) continue;
    consistent = place(s, i, o, part, &u);
    hatless = s->hatless;
    if (consistent) {
      if (s->decompose)
        status = decomposed(s, part, order, remaining, n_rem, o, r, i);
      else
        status = search(s, part, order, remaining, n_rem, o, r);
    }
    unplace(s, i, &u);
    if (status != NOT_FOUND) {
      free(ordering);
      free(remaining);
      return status;
    }
    if (hatless) break;
  }
  free(ordering);
  free(remaining);
  ++s->backtracks;
  return NOT_FOUND;
}

static int sub_solve(Solver *s, const Part *part) {
  PreKey *keys = malloc(sizeof(PreKey) * (size_t)(part->count + 1));
  int *order = malloc(sizeof(int) * (size_t)(part->count + 1));
  int *cands = malloc(sizeof(int) * (size_t)(part->count + 1));
  int k, c, status;
  for (k = 0; k < part->count; ++k) {
    int i = part->buffers[k];
    i64 tot = max_range(s->total, s->lo[i], s->hi[i], 0);
    for (c = 0; c < 3; ++c) {
      char h = s->heuristic[c];
      keys[k].key[c] = h == 'T' ? tot : h == 'W' ? s->width[i] : s->area[i];
    }
    keys[k].idx = i;
  }
  qsort(keys, (size_t)part->count, sizeof(PreKey), cmp_prekey);
  for (k = 0; k < part->count; ++k) {
    order[k] = keys[k].idx;
    cands[k] = k;
  }
  free(keys);
  status = search(s, part, order, cands, part->count, 0, 0);
  free(order);
  free(cands);
  return status;
}

/* Status: 0 found (offsets in ``solution``), 1 infeasible, 3 out of time or
 * of ``max_nodes`` (< 0: none). ``deadline`` < 0: none. Sections and
 * neighbours in CSR form; ``lo``/``hi``: each buffer's section range. */
int mm_solve(int n, int n_sec, const i64 *sizes, const i64 *aligns,
             const i64 *width, const i64 *area, const int *lo, const int *hi,
             const int *nbr_start, const int *nbr, const int *sec_start,
             const int *sec, int decompose, i64 capacity, double deadline,
             i64 max_nodes, i64 *solution, i64 *stats) {
  Solver s;
  static const char *heuristics[3] = {"WAT", "TAW", "TWA"};
  Part *parts;
  int n_parts = 0, k, status = OK;
  int *searched, n_searched = 0, *cut_points, n_cut = 0;
  i64 node_limit = n > 1 ? n : 1;
  memset(&s, 0, sizeof s);
  s.n = n;
  s.n_sec = n_sec;
  s.decompose = decompose;
  s.capacity = capacity;
  s.sizes = sizes;
  s.aligns = aligns;
  s.width = width;
  s.area = area;
  s.lo = lo;
  s.hi = hi;
  s.nbr_start = nbr_start;
  s.nbr = nbr;
  s.sec_start = sec_start;
  s.sec = sec;
  s.check_deadline = deadline >= 0;
  s.deadline = deadline;
  s.off = malloc(sizeof(i64) * (size_t)(n + 1));
  s.solution = solution;
  s.min_off = calloc((size_t)(n + 1), sizeof(i64));
  s.low = calloc((size_t)(n_sec + 1), sizeof(i64));
  s.total = calloc((size_t)(n_sec + 1), sizeof(i64));
  s.cuts = calloc((size_t)(n_sec + 1), sizeof(int));
  s.mark = calloc((size_t)(n_sec + 1), sizeof(i64));
  s.affected = malloc(sizeof(int) * (size_t)(n_sec + 1));
  for (k = 0; k < n; ++k) {
    s.off[k] = -1;
    solution[k] = -1;
  }
  for (k = 0; k < n_sec; ++k) {
    int m;
    for (m = sec_start[k]; m < sec_start[k + 1]; ++m) s.total[k] += sizes[sec[m]];
  }
  for (k = 0; k < n; ++k) {
    int m;
    for (m = lo[k]; m < hi[k] - 1; ++m) ++s.cuts[m];
  }
  /* top partitions */
  searched = malloc(sizeof(int) * (size_t)(n + 1));
  for (k = 0; k < n; ++k) {
    if (sizes[k] == 0 || (decompose && lo[k] == hi[k]))
      solution[k] = 0;
    else
      searched[n_searched++] = k;
  }
  cut_points = malloc(sizeof(int) * (size_t)(n_sec + 2));
  cut_points[n_cut++] = 0;
  if (decompose)
    for (k = 0; k + 1 < n_sec; ++k)
      if (s.cuts[k] == 0) cut_points[n_cut++] = k + 1;
  cut_points[n_cut++] = n_sec;
  parts = malloc(sizeof(Part) * (size_t)(n_cut + 1));
  if (!decompose) {
    parts[0].buffers = searched;
    parts[0].count = n_searched;
    parts[0].a = 0;
    parts[0].b = n_sec;
    n_parts = 1;
    searched = NULL;
  } else {
    int c;
    for (c = 0; c + 1 < n_cut; ++c) {
      Part p;
      int m = 0;
      p.a = cut_points[c];
      p.b = cut_points[c + 1];
      p.buffers = malloc(sizeof(int) * (size_t)(n_searched + 1));
      for (k = 0; k < n_searched; ++k) {
        int j = searched[k];
        if (lo[j] < p.b && p.a < hi[j]) p.buffers[m++] = j;
      }
      p.count = m;
      if (m)
        parts[n_parts++] = p;
      else
        free(p.buffers);
    }
  }
  for (; n_parts;) { /* no part: nothing to place, found */
    int h, done = 0;
    node_limit *= 2;
    status = ABORTED;
    for (h = 0; h < 3; ++h) {
      s.heuristic = heuristics[h];
      s.nodes_left = node_limit;
      if (max_nodes >= 0) {
        if (s.nodes >= max_nodes) {
          status = TIMEOUT;
          done = 1;
          break;
        }
        if (max_nodes - s.nodes < node_limit) s.nodes_left = max_nodes - s.nodes;
      }
      for (k = 0; k < n_parts; ++k) {
        status = sub_solve(&s, &parts[k]);
        if (status != OK) break;
      }
      if (status != ABORTED) break;
    }
    if (done || status != ABORTED) break;
  }
  stats[0] = s.nodes;
  stats[1] = s.backtracks;
  for (k = 0; k < n_parts; ++k) free(parts[k].buffers);
  free(parts);
  free(searched);
  free(cut_points);
  free(s.off);
  free(s.min_off);
  free(s.low);
  free(s.total);
  free(s.cuts);
  free(s.mark);
  free(s.affected);
  free(s.olog.idx);
  free(s.olog.old);
  free(s.slog.idx);
  free(s.slog.old);
  return status;
}
