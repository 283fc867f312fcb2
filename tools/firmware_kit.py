"""The firmware kit next to a model's C library: build glue and an example.

``kit_files(library)`` returns, for the library ``usmp.tools.c_library``
builds (sources in ``codegen/host/src``, headers in
``codegen/host/include``, as ``usmp-compile`` writes them)::

    CMakeLists.txt   static library target tvmgen_<m> (add_subdirectory-able),
                     and the example when the folder is the top-level project
    Makefile         the same static library (libtvmgen_<m>.a) and example;
                     CC, AR, CFLAGS and BUILD are the user's
                     (cross: make CC=arm-none-eabi-gcc AR=arm-none-eabi-ar
                     CFLAGS="-mcpu=cortex-m4 -mthumb -Os")
    example/main.c   a host application: reads each input from a raw binary
                     file, runs the model, prints every output and the time
                     per run, optionally writes the outputs to files; with
                     -f, quantised inputs are read as float32 values and
                     quantised by the header's helpers

The example handles every interface the library can have: pools defined by
the library (U1) or provided by the application (U2/U3: it defines them,
aligned, parameter pools initialised from ``tvmgen_<m>_parameters.h``), and
I/O inside the workspace (``map_inputs``/``map_outputs``). ``usmp.compile``'s
``Library.run`` builds and runs this same example.
"""

from __future__ import annotations

from usmp.lowering.c_printer import ALIGNED_MACRO
from usmp.lowering.metadata import (
    ModelInterface,
    Tensor,
    c_text,
    call_setup,
    init_arguments,
    io_macros,
    quantized_range,
)
from usmp.lowering.metadata_devices import hook_stubs
from usmp.tools.c_library import CLibrary
from usmp.tools.firmware_kit_profile import PROFILE_EXAMPLE, profile_example

INCLUDE_DIR = "codegen/host/include"
SRC_DIR = "codegen/host/src"
EXAMPLE = "example/main.c"


def output_files(library: CLibrary) -> dict[str, str]:
    """Every file of a compiled model's output that comes from its library,
    by path in ``usmp-compile``'s output folder: the headers in
    ``codegen/host/include``, the sources in ``codegen/host/src``, and the
    kit (``usmp-opt -t c-library`` prints the same)."""
    files = {
        f"{INCLUDE_DIR if name.endswith('.h') else SRC_DIR}/{name}": text
        for name, text in sorted(library.files.items())
    }
    files.update(kit_files(library))
    return files


def split_file(files: dict[str, str]) -> str:
    """``files`` as one text in LLVM's ``split-file`` format: each file, in
    path order, after a line ``//--- <path>`` (every file ends with a
    newline)."""
    return "".join(
        f"//--- {path}\n{text}" + ("" if text.endswith("\n") else "\n")
        for path, text in sorted(files.items())
    )


def read_split_file(text: str) -> dict[str, str]:
    """``split_file``'s inverse: path -> content."""
    files: dict[str, str] = {}
    path: str | None = None
    for line in text.splitlines(keepends=True):
        if line.startswith("//--- "):
            path = line[len("//--- ") :].rstrip("\n")
            files[path] = ""
        elif path is not None:
            files[path] += line
    return files


def kit_files(library: CLibrary) -> dict[str, str]:
    """Relative path -> content of the kit's files (see the module note)."""
    files = {
        "CMakeLists.txt": cmake_lists(library),
        "Makefile": makefile(library),
        EXAMPLE: example_main(library),
    }
    if library.interface.profile is not None:
        files[PROFILE_EXAMPLE] = profile_example(
            library.interface, library.file("header")
        )
    return files


def _example_sources(library: CLibrary) -> str:
    """The example's C files: main.c, and profile.c when profiled."""
    if library.interface.profile is None:
        return EXAMPLE
    return f"{EXAMPLE} {PROFILE_EXAMPLE}"


def _sources(library: CLibrary) -> list[str]:
    return sorted(f"{SRC_DIR}/{n}" for n in library.files if n.endswith(".c"))


def target_name(library: CLibrary) -> str:
    """The static library's target (``tvmgen_<m>``, ``libtvmgen_<m>.a``)."""
    return f"tvmgen_{library.interface.names.model}"


def cmake_lists(library: CLibrary) -> str:
    target = target_name(library)
    sources = "\n".join(f"  {s}" for s in _sources(library))
    cmsis = ""
    if uses_cmsis_nn(library):
        cmsis = f"""
# CMSIS-NN (--target cmsis-nn,c): -DCMSIS_PATH=/path/to/CMSIS-NN (Include/, Source/)
set(CMSIS_PATH "{_cmsis_path()}" CACHE PATH "CMSIS-NN's folder (Include/, Source/)")
if(NOT CMSIS_PATH)
  message(FATAL_ERROR "CMSIS_PATH is not set: -DCMSIS_PATH=/path/to/CMSIS-NN")
endif()
file(GLOB {target.upper()}_CMSIS_NN_SRCS ${{CMSIS_PATH}}/Source/*/*_s8.c
  ${{CMSIS_PATH}}/Source/*/*_s8_*.c
  ${{CMSIS_PATH}}/Source/NNSupportFunctions/arm_nntables.c
  ${{CMSIS_PATH}}/Source/NNSupportFunctions/arm_q7_to_q15_with_offset.c)
target_sources({target} PRIVATE ${{{target.upper()}_CMSIS_NN_SRCS}})
target_include_directories({target} PUBLIC ${{CMSIS_PATH}}/Include)
"""
    return f"""\
# Static library of model "{library.interface.model}", generated by usmp-opt.
#
#   cmake -S . -B build && cmake --build build    # lib{target}.a and the example
#   ./build/{target}_example input0.bin ...
#
# In a firmware project: add_subdirectory(<this folder>) and
# target_link_libraries(app PRIVATE {target}); the example is built only when
# this folder is the top-level project (or with -D{target.upper()}_EXAMPLE=ON).
# Cross-compiling: pass a toolchain file (CMAKE_TOOLCHAIN_FILE); the C is
# plain C99 with no allocation and no I/O.
# Built as its own project, the default build type is Release at -O2 (what
# the Makefile builds); -DCMAKE_BUILD_TYPE=MinSizeRel gives -Os, Debug -O0.
cmake_minimum_required(VERSION 3.13)
if(CMAKE_SOURCE_DIR STREQUAL CMAKE_CURRENT_SOURCE_DIR)
  set(CMAKE_C_FLAGS_RELEASE "-O2 -DNDEBUG" CACHE STRING
    "C flags of the Release build (default -O2, as the Makefile)")
endif()
project({target} LANGUAGES C)
if(CMAKE_SOURCE_DIR STREQUAL CMAKE_CURRENT_SOURCE_DIR
   AND NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE Release CACHE STRING
    "Build type (Release, MinSizeRel, RelWithDebInfo, Debug)" FORCE)
endif()

if(CMAKE_SOURCE_DIR STREQUAL CMAKE_CURRENT_SOURCE_DIR)
  set(_{target}_top ON)
else()
  set(_{target}_top OFF)
endif()
option({target.upper()}_EXAMPLE "Build the host example application" ${{_{target}_top}})

add_library({target} STATIC
{sources}
)
target_include_directories({target} PUBLIC
  ${{CMAKE_CURRENT_SOURCE_DIR}}/{INCLUDE_DIR})
set_target_properties({target} PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON
  C_EXTENSIONS OFF)
{cmsis}find_library({target.upper()}_LIBM m)
if({target.upper()}_LIBM)
  target_link_libraries({target} PUBLIC ${{{target.upper()}_LIBM}})
endif()

if({target.upper()}_EXAMPLE)
  add_executable({target}_example {_example_sources(library)})
  target_link_libraries({target}_example PRIVATE {target})
  set_target_properties({target}_example PROPERTIES C_STANDARD 99
    C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
endif()
"""


def uses_cmsis_nn(library: CLibrary) -> bool:
    """Whether the library calls CMSIS-NN (``--target cmsis-nn,c``)."""
    return any(n.endswith("_cmsis_nn.c") for n in library.files)


def _cmsis_path() -> str:
    """The CMSIS-NN folder the kit builds by default: ``$CMSIS_PATH`` when
    the compile ran (empty: the build must be given one)."""
    import os

    return os.environ.get("CMSIS_PATH", "")


CMSIS_NN_MAKE = """
# CMSIS-NN (--target cmsis-nn,c): CMSIS_PATH is its folder (Include/, Source/),
# e.g. make CMSIS_PATH=/path/to/CMSIS-NN. Its sources are built into the library.
CMSIS_PATH ?= {path}
ifeq ($(CMSIS_PATH),)
$(error CMSIS_PATH is not set: make CMSIS_PATH=/path/to/CMSIS-NN)
endif
INCLUDES += -I$(CMSIS_PATH)/Include
CMSIS_NN_SRCS = $(wildcard $(CMSIS_PATH)/Source/*/*_s8.c \\
  $(CMSIS_PATH)/Source/*/*_s8_*.c \\
  $(CMSIS_PATH)/Source/NNSupportFunctions/arm_nntables.c \\
  $(CMSIS_PATH)/Source/NNSupportFunctions/arm_q7_to_q15_with_offset.c)
OBJS += $(CMSIS_NN_SRCS:$(CMSIS_PATH)/%.c=$(BUILD)/cmsis-nn/%.o)

$(BUILD)/cmsis-nn/%.o: $(CMSIS_PATH)/%.c
\t@mkdir -p $(dir $@)
\t$(CC) $(C_STD) $(CFLAGS) $(CPPFLAGS) $(INCLUDES) -c $< -o $@
"""


def makefile(library: CLibrary) -> str:
    target = target_name(library)
    sources = " \\\n  ".join(_sources(library))
    example = _example_sources(library)
    cmsis = CMSIS_NN_MAKE.format(path=_cmsis_path()) if uses_cmsis_nn(library) else ""
    return f"""\
# Static library of model "{library.interface.model}", generated by usmp-opt.
#
#   make                 # $(BUILD)/lib{target}.a
#   make example         # $(BUILD)/{target}_example (host)
#   make CC=arm-none-eabi-gcc AR=arm-none-eabi-ar \\
#        CFLAGS="-mcpu=cortex-m4 -mthumb -Os" BUILD=build-m4   # Cortex-M4
#
# CC, AR, CFLAGS, CPPFLAGS, LDFLAGS and BUILD can be set on the command line.
CFLAGS ?= -O2
BUILD ?= build
C_STD = -std=c99
INCLUDES = -I{INCLUDE_DIR}

LIB = $(BUILD)/lib{target}.a
EXAMPLE = $(BUILD)/{target}_example
SRCS = \\
  {sources}
OBJS = $(SRCS:%.c=$(BUILD)/%.o)
{cmsis}
all: $(LIB)

example: $(EXAMPLE)

$(BUILD)/%.o: %.c
\t@mkdir -p $(dir $@)
\t$(CC) $(C_STD) $(CFLAGS) $(CPPFLAGS) $(INCLUDES) -c $< -o $@

$(LIB): $(OBJS)
\t@mkdir -p $(dir $@)
\trm -f $@
\t$(AR) rcs $@ $(OBJS)

$(EXAMPLE): {example} $(LIB)
\t$(CC) $(C_STD) $(CFLAGS) $(CPPFLAGS) $(INCLUDES) {example} $(LIB) $(LDFLAGS) -lm -o $@

clean:
\trm -rf $(BUILD)

.PHONY: all example clean
"""


def _count(t: Tensor, macro: str) -> str:
    return f"{macro} / sizeof({t.c_element})"


def _print_format(t: Tensor) -> tuple[str, str]:
    """printf format and cast of one element of ``t``."""
    if t.c_element in ("float", "double"):
        return "%.9g", "(double)"
    return "%ld", "(long)"


def example_main(library: CLibrary) -> str:
    """``example/main.c`` (see the module note)."""
    m = library.interface
    header = library.file("header")
    n_in = len(m.inputs)
    tensors = io_macros(m)
    # inputs with quantise helpers in the header: -f reads them as floats
    float_inputs = [t for t in m.inputs if _helped(t)]
    options = "[-r RUNS] [-o PREFIX]" + (" [-f]" if float_inputs else "")
    usage = " ".join(f"{t.c_name}.bin" for t in m.inputs)
    lines = [
        f'/* Host example of model "{m.model}", generated by usmp-opt.',
        " *",
        f" *   {target_name(library)}_example {options} {usage}".rstrip(),
        " *",
        " * Reads each input from a raw binary file (its bytes in C order):",
        *(f" *   {c_text(t.name)}: {t.shape_comment}" for t in m.inputs),
        " * runs the model RUNS times (default 1), prints every output and the CPU",
        " * time per run; -o writes output k's bytes to PREFIX<k>.bin; -h or --help",
        " * prints the usage (an other argument starting with '-' is a usage",
        " * error, not a file). Exit status: 0, 1 on a file error, 2 on a usage",
        " * error.",
        *(
            [
                " * -f: the files of quantised inputs hold real values instead,",
                " * float32 in C order (the host's byte order, 4 bytes each),",
                " * quantised with the header's helpers",
                " * (tvmgen_<m>_quantize_<tensor>); quantised outputs are then also",
                " * printed as real values (tvmgen_<m>_dequantize_<tensor>).",
            ]
            if float_inputs
            else []
        ),
        " */",
        "#include <stdio.h>",
        "#include <stdlib.h>",
        "#include <string.h>",
        "#include <time.h>",
        "",
        f'#include "{header}"',
    ]
    if any(p.user and not p.writable for p in m.pools):
        lines.append(f'#include "{library.file("parameters")}"')
    lines += ["", ALIGNED_MACRO]
    for p in m.pools:
        if p.user:
            const = "" if p.writable else "const "
            init = "" if p.writable else f" = {m.data_macro(p)}"
            size = f"{m.define(p, 'SIZE')} > 0 ? {m.define(p, 'SIZE')} : 1"
            lines.append(
                f"USMP_ALIGNED({m.define(p, 'ALIGNMENT')}) static {const}uint8_t "
                f"pool_{p.c_name}[{size}]{init};"
            )
    if not m.io_in_workspace:
        for t, macro in tensors:
            lines.append(f"static {t.c_element} {t.c_name}[{_count(t, macro)}];")
    for t, macro in tensors[:n_in]:
        if _helped(t):
            lines.append(f"static float real_{t.c_name}[{_count(t, macro)}];")
    lines += [
        "",
        "static int read_input(const char* path, const char* name, void* data, "
        "size_t n) {",
        '  FILE* f = fopen(path, "rb");',
        "  size_t done;",
        "  int extra;",
        "  if (f == NULL) {",
        "    fprintf(stderr, \"%s: cannot open input '%s'\\n\", path, name);",
        "    return 1;",
        "  }",
        "  done = fread(data, 1, n, f);",
        "  extra = fgetc(f);",
        "  fclose(f);",
        "  if (done != n || extra != EOF) {",
        "    fprintf(stderr, \"%s: input '%s' must be exactly %lu bytes\\n\", path, "
        "name,",
        "            (unsigned long)n);",
        "    return 1;",
        "  }",
        "  return 0;",
        "}",
        "",
        "static int write_output(const char* prefix, int k, const void* data, "
        "size_t n) {",
        "  char path[4096];",
        "  FILE* f;",
        "  size_t done;",
        '  if (snprintf(path, sizeof path, "%s%d.bin", prefix, k) >= (int)sizeof '
        "path) return 1;",
        '  f = fopen(path, "wb");',
        "  if (f == NULL) {",
        '    fprintf(stderr, "%s: cannot write output %d\\n", path, k);',
        "    return 1;",
        "  }",
        "  done = fwrite(data, 1, n, f);",
        "  fclose(f);",
        "  return done != n;",
        "}",
        "",
        *_example_hooks(m),
        *(
            [
                "/* example/profile.c: the profile hooks and their table. */",
                f"void {m.symbol('profile_report')}(long runs);",
                "",
            ]
            if m.profile is not None
            else []
        ),
        "static int usage(const char* program, FILE* stream) {",
        f'  fprintf(stream, "usage: %s {options} {usage}\\n", program);'
        if usage
        else f'  fprintf(stream, "usage: %s {options}\\n", program);',
        "  return 2;",
        "}",
        "",
        "int main(int argc, char** argv) {",
        f"  const char* paths[{max(n_in, 1)}] = {{ NULL }};",
        "  const char* prefix = NULL;",
        "  int n_paths = 0, i;",
        *(["  int real = 0;"] if float_inputs else []),
        "  long runs = 1, r;",
        "  int32_t status = 0;",
        "  clock_t start, stop;",
        "  double us;",
    ]
    # application-provided pools, then the input and output structs
    pool_lines, io_lines, run_args = call_setup(m, lambda p: f"pool_{p.c_name}")
    lines += [f"  {line}" for line in (*pool_lines, *io_lines)]
    lines += [
        "  for (i = 1; i < argc; ++i) {",
        '    if (strcmp(argv[i], "-r") == 0 && i + 1 < argc) {',
        "      runs = atol(argv[++i]);",
        '    } else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {',
        "      prefix = argv[++i];",
        *(
            ['    } else if (strcmp(argv[i], "-f") == 0) {', "      real = 1;"]
            if float_inputs
            else []
        ),
        '    } else if (strcmp(argv[i], "-h") == 0',
        '               || strcmp(argv[i], "--help") == 0) {',
        "      usage(argv[0], stdout);",
        "      return 0;",
        "    } else if (argv[i][0] == '-' && argv[i][1] != '\\0') {",
        '      fprintf(stderr, "%s: unknown option %s\\n", argv[0], argv[i]);',
        "      return usage(argv[0], stderr);",
        f"    }} else if (n_paths < {n_in}) {{",
        "      paths[n_paths++] = argv[i];",
        "    } else {",
        "      return usage(argv[0], stderr);",
        "    }",
        "  }",
        f"  if (n_paths != {n_in} || runs < 1) return usage(argv[0], stderr);",
        "  (void)paths;",
        "  (void)in;",
        "  (void)out;",
    ]
    for k, (t, macro) in enumerate(tensors[:n_in]):
        read = f'read_input(paths[{k}], "{c_text(t.name)}", in.{t.c_name}, {macro})'
        if not _helped(t):
            lines.append(f"  if ({read}) return 1;")
            continue
        assert t.quant is not None
        real = f"real_{t.c_name}"
        lines += [
            "  if (real) {",
            f'    if (read_input(paths[{k}], "{c_text(t.name)}", {real}, '
            f"sizeof {real})) return 1;",
            f"    for (i = 0; i < (int)({_count(t, macro)}); ++i) {{",
            f"      in.{t.c_name}[i] = {t.quant.quantize}({real}[i]);",
            "    }",
            f"  }} else if ({read}) {{",
            "    return 1;",
            "  }",
        ]
    if m.states:  # the state starts from its initial value
        lines.append(f"  {m.symbol('init')}({init_arguments(m)});")
    lines += [
        "  start = clock();",
        "  for (r = 0; r < runs; ++r) {",
        f"    status = {m.symbol('run')}({', '.join(run_args)});",
        "    if (status != 0) break;",
        "  }",
        "  stop = clock();",
        "  if (status != 0) {",
        '    fprintf(stderr, "run returned %ld\\n", (long)status);',
        "    return 1;",
        "  }",
    ]
    for k, (t, macro) in enumerate(tensors[n_in:]):
        fmt, cast = _print_format(t)
        dims = "".join(f"[{d}]" for d in t.type.get_shape())
        lines += [
            f'  printf("output {k} {c_text(t.name)} {t.c_element}{dims}:");',
            f"  for (i = 0; i < (int)({_count(t, macro)}); ++i) {{",
            f'    printf(" {fmt}", {cast}out.{t.c_name}[i]);',
            "  }",
            '  printf("\\n");',
        ]
        if float_inputs and _helped(t):
            assert t.quant is not None
            lines += [
                "  if (real) {",
                f'    printf("output {k} {c_text(t.name)} real:");',
                f"    for (i = 0; i < (int)({_count(t, macro)}); ++i) {{",
                f'      printf(" %.9g", (double){t.quant.dequantize}('
                f"out.{t.c_name}[i]));",
                "    }",
                '    printf("\\n");',
                "  }",
            ]
        lines.append(
            f"  if (prefix != NULL && write_output(prefix, {k}, out.{t.c_name}, "
            f"{macro})) return 1;"
        )
    lines += [
        "  us = 1e6 * (double)(stop - start) / CLOCKS_PER_SEC / (double)runs;",
        '  printf("time: %.1f us per run (%ld run%s, CPU time)\\n", us, runs,',
        '         runs == 1 ? "" : "s");',
        *([f"  {m.symbol('profile_report')}(runs);"] if m.profile is not None else []),
        "  return 0;",
        "}",
        "",
    ]
    return "\n".join(lines)


def _helped(t: Tensor) -> bool:
    """Whether the header has quantise/dequantise helpers for ``t``."""
    return t.quant is not None and quantized_range(t) is not None


def _example_hooks(m: ModelInterface) -> list[str]:
    """The device hooks the library calls (none without devices): this host
    example has no accelerator, so each only returns 0; on a board they
    power, configure and release the device its context names."""
    if not m.devices:
        return []
    return [
        "/* Device hooks (TVM's device API): the library calls them around the",
        " * operators it runs on each device. This host example has no such",
        " * device; a firmware switches it on/off and passes its context. */",
        *hook_stubs(m),
        "",
    ]
