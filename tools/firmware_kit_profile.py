"""``example/profile.c``: the kit's default profile hooks (``--profile``).

The library calls ``tvmgen_<m>_profile_begin(k)`` / ``_end(k)`` around its
k-th operator call and defines both weak, doing nothing
(``usmp.lowering.profile``). This file, linked into the kit's example,
defines them (strong) to time each operator, and
``tvmgen_<m>_profile_report(runs)`` prints a per-layer table:

* hosted (a Unix): ``clock_gettime(CLOCK_PROCESS_CPUTIME_ID)`` (CPU time,
  as the example's own time line; ``CLOCK_MONOTONIC`` without it), microseconds;
  elsewhere C's ``clock()``;
* Cortex-M (``__ARM_ARCH_PROFILE == 'M'``): the DWT cycle counter where the
  core has one (Armv7-M, Armv8-M Mainline, and it counts), else SysTick
  (the processor clock: cycles, one operator at most one SysTick period,
  2^24 cycles when this file starts it). The registers are the
  architecture's fixed addresses, so no CMSIS header is needed.

The table (``usmp.tools.profile_table`` reads it back, e.g. for
``usmp-compile --report-html --profile-data``)::

    profile: model kws, 12 operators, 1 run, us per run (CPU time)
        #  function                              TFLite op        index  us  share
        0  tvmgen_kws_fused_nn_conv2d_...        CONV_2D              0  ...  20.1%
    ...
           total                                                         ...  100.0%
"""

from __future__ import annotations

from usmp.lowering.metadata import ModelInterface

PROFILE_EXAMPLE = "example/profile.c"


def profile_example(m: ModelInterface, header: str) -> str:
    """The text of ``example/profile.c`` (module note)."""
    s = m.symbol
    count = f"TVMGEN_{m.upper}_PROFILE_OPERATORS"
    width = max([8, *(len(m.names.symbol(o.function)) for o in m.profile or ())])
    return f"""\
/* Default profile hooks of model "{m.model}" for the kit's example, generated
 * by usmp-opt (usmp-compile --profile). The library calls
 * {s("profile_begin")}(k) / {s("profile_end")}(k) around its k-th operator
 * and defines them weak, doing nothing; these (strong) definitions replace
 * them and time every operator: clock_gettime (CPU time) on a hosted
 * Unix, the DWT cycle counter or SysTick on a Cortex-M, clock() elsewhere.
 * {s("profile_report")}(runs) prints one row per operator: its index, our
 * function, its TFLite operator and index, the time (or cycles) per run and
 * its share of the total. Copy this file into a firmware and change it as
 * needed; a file of your own that defines the two hooks replaces the
 * library's weak ones the same way (link it as an object file, not from a
 * static library: a linker does not take archive members to replace weak
 * symbols).
 */
#if !defined(_POSIX_C_SOURCE) && (defined(__unix__) || defined(__APPLE__))
#define _POSIX_C_SOURCE 199309L
#endif
#include <stdint.h>
#include <stdio.h>

#include "{header}"

#define N_OPS ({count} + 1) /* C has no empty array */

#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
/* Cortex-M: SysTick and the DWT at the architecture's addresses. */
#define SYST_CSR (*(volatile uint32_t*)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t*)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t*)0xE000E018u)
#define DEMCR (*(volatile uint32_t*)0xE000EDFCu)
#define DWT_CTRL (*(volatile uint32_t*)0xE0001000u)
#define DWT_CYCCNT (*(volatile uint32_t*)0xE0001004u)
typedef uint32_t stamp_t;
static int clock_kind; /* 0: not started, 1: DWT, 2: SysTick */
static const char* clock_name(void) {{
  return clock_kind == 1 ? "cycles per run (DWT CYCCNT)"
                         : "cycles per run (SysTick)";
}}
static void start_clock(void) {{
#if defined(__ARM_ARCH_7M__) || defined(__ARM_ARCH_7EM__) || \\
    defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8_1M_MAIN__)
  DEMCR |= 1u << 24; /* TRCENA */
  if ((DWT_CTRL & (1u << 25)) == 0) {{ /* NOCYCCNT clear: a cycle counter */
    uint32_t a;
    DWT_CYCCNT = 0;
    DWT_CTRL |= 1u; /* CYCCNTENA */
    a = DWT_CYCCNT;
    __asm volatile("nop\\n nop\\n nop\\n nop");
    if (DWT_CYCCNT != a) {{ /* it counts (emulators may not model it) */
      clock_kind = 1;
      return;
    }}
  }}
#endif
  if ((SYST_CSR & 1u) == 0) {{ /* not running: processor clock, no interrupt */
    SYST_RVR = 0xFFFFFFu;
    SYST_CVR = 0;
    SYST_CSR = 5u;
  }}
  clock_kind = 2;
}}
static stamp_t now(void) {{
  if (clock_kind == 0) start_clock();
  return clock_kind == 1 ? DWT_CYCCNT : SYST_CVR;
}}
static uint64_t elapsed(stamp_t begin, stamp_t end) {{
  if (clock_kind == 1) return (uint32_t)(end - begin);
  /* SysTick counts down from RVR to 0 and reloads */
  return begin >= end ? begin - end : begin + (SYST_RVR & 0xFFFFFFu) + 1u - end;
}}
#define INTEGER_UNITS 1
#elif defined(_POSIX_C_SOURCE) && _POSIX_C_SOURCE >= 199309L
#include <time.h>
typedef struct timespec stamp_t;
/* the process's CPU time where there is one (as the example's own "time"
 * line: a loaded host does not inflate it), else the monotonic clock */
#ifdef CLOCK_PROCESS_CPUTIME_ID
#define PROFILE_CLOCK CLOCK_PROCESS_CPUTIME_ID
static const char* clock_name(void) {{ return "us per run (CPU time)"; }}
#else
#define PROFILE_CLOCK CLOCK_MONOTONIC
static const char* clock_name(void) {{ return "us per run (clock_gettime)"; }}
#endif
static stamp_t now(void) {{
  struct timespec t;
  clock_gettime(PROFILE_CLOCK, &t);
  return t;
}}
static uint64_t elapsed(stamp_t begin, stamp_t end) {{ /* nanoseconds */
  return (uint64_t)((int64_t)(end.tv_sec - begin.tv_sec) * 1000000000 +
                    (end.tv_nsec - begin.tv_nsec));
}}
#define UNIT_SCALE 1e-3 /* ns -> us */
#else
#include <time.h>
typedef clock_t stamp_t;
static const char* clock_name(void) {{ return "us per run (clock)"; }}
static stamp_t now(void) {{ return clock(); }}
static uint64_t elapsed(stamp_t begin, stamp_t end) {{
  return (uint64_t)(end - begin);
}}
#define UNIT_SCALE (1e6 / CLOCKS_PER_SEC)
#endif

static stamp_t began[N_OPS];
static uint64_t spent[N_OPS];

void {s("profile_begin")}(int32_t op_index) {{
  if (op_index >= 0 && op_index < {count}) began[op_index] = now();
}}

void {s("profile_end")}(int32_t op_index) {{
  stamp_t end = now();
  if (op_index >= 0 && op_index < {count})
    spent[op_index] += elapsed(began[op_index], end);
}}

/* Prints the table of the time spent per operator since the start, per run
 * of `runs`, and clears it. */
void {s("profile_report")}(long runs) {{
  uint64_t total = 0;
  int k;
  if (runs < 1) runs = 1;
  for (k = 0; k < {count}; ++k) total += spent[k];
  printf("profile: model {m.model}, %d operators, %ld run%s, %s\\n", {count}, runs,
         runs == 1 ? "" : "s", clock_name());
  printf("%5s  %-{width}s %-20s %5s %12s %7s\\n", "#", "function", "TFLite op", "index",
         "per run", "share");
  for (k = 0; k < {count}; ++k) {{
    const {s("profile_operator")}_t* op = &{s("profile_operators")}[k];
    /* the share in tenths of a percent, rounded */
    unsigned long share =
        total ? (unsigned long)((spent[k] * 2000u / total + 1u) / 2u) : 0u;
    printf("%5d  %-{width}s %-20s %5ld ", k, op->function,
           op->tflite_operator[0] ? op->tflite_operator : "-",
           (long)op->tflite_index);
#ifdef INTEGER_UNITS
    printf("%12lu", (unsigned long)(spent[k] / (uint64_t)runs));
#else
    printf("%12.3f", (double)spent[k] * UNIT_SCALE / (double)runs);
#endif
    printf(" %5lu.%lu%%\\n", share / 10u, share % 10u);
    spent[k] = 0;
  }}
  printf("%5s  %-{width}s %-20s %5s ", "", "total", "", "");
#ifdef INTEGER_UNITS
  printf("%12lu", (unsigned long)(total / (uint64_t)runs));
#else
  printf("%12.3f", (double)total * UNIT_SCALE / (double)runs);
#endif
  printf(" %7s\\n", total ? "100.0%" : "0.0%");
}}
"""
