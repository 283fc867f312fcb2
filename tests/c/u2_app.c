/*
 * USMP RFC, U2 "user wants to share workspaces": two models compiled with
 * one workspace pool "sram" each run, one after the other, in the same
 * application buffer, sized to the larger of their planned sizes. Their
 * parameters stay in their libraries.
 *
 * While a model runs, AddressSanitizer poisons the part of the shared buffer
 * beyond that model's own planned size, so every model is held to exactly
 * its TVM_<MODEL>_SRAM_WORKSPACE_BUFFER_SIZE.
 *
 * Models: tests/c/models.py int8_convnet as "my_model_1", float_mlp as
 * "my_model_2". Usage: u2_app image.bin features.bin out1.bin out2.bin
 */
#include "app_io.h"
#include "my_model_1/tvmgen_my_model_1.h"
#include "my_model_2/tvmgen_my_model_2.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define TVM_MY_MODELS_COMMON_WORKSPACE_BUFFER_SIZE \
  MAX(TVM_MY_MODEL_1_SRAM_WORKSPACE_BUFFER_SIZE, TVM_MY_MODEL_2_SRAM_WORKSPACE_BUFFER_SIZE)
#define TVM_MY_MODELS_COMMON_WORKSPACE_BUFFER_ALIGNMENT \
  MAX(TVM_MY_MODEL_1_SRAM_WORKSPACE_BUFFER_ALIGNMENT, TVM_MY_MODEL_2_SRAM_WORKSPACE_BUFFER_ALIGNMENT)

__attribute__((aligned(TVM_MY_MODELS_COMMON_WORKSPACE_BUFFER_ALIGNMENT)))
static uint8_t workspace_buffer[TVM_MY_MODELS_COMMON_WORKSPACE_BUFFER_SIZE];

static int8_t image[1 * 6 * 6 * 3];
static int8_t output_1[1 * 5];
static float features[1 * 16];
static float output_2[1 * 4];

/* Only the first `size` bytes of the shared workspace may be touched. */
static void limit_workspace(size_t size) {
#if defined(__SANITIZE_ADDRESS__)
  ASAN_UNPOISON_MEMORY_REGION(workspace_buffer, sizeof workspace_buffer);
  ASAN_POISON_MEMORY_REGION(workspace_buffer + size, sizeof workspace_buffer - size);
#else
  (void)size;
#endif
}

int main(int argc, char** argv) {
  TVMInputs_my_model_1 inputs_1 = {image};
  TVMOutputs_my_model_1 outputs_1 = {output_1};
  TVMWorkspaces_my_model_1 workspaces_1 = {workspace_buffer};
  TVMInputs_my_model_2 inputs_2 = {features};
  TVMOutputs_my_model_2 outputs_2 = {output_2};
  TVMWorkspaces_my_model_2 workspaces_2 = {workspace_buffer};

  if (argc != 5 || read_bytes(argv[1], image, sizeof image) ||
      read_bytes(argv[2], features, sizeof features)) {
    return 2;
  }
  limit_workspace(TVM_MY_MODEL_1_SRAM_WORKSPACE_BUFFER_SIZE);
  if (tvmgen_my_model_1_run(&inputs_1, &outputs_1, &workspaces_1) != 0) return 3;
  limit_workspace(TVM_MY_MODEL_2_SRAM_WORKSPACE_BUFFER_SIZE);
  if (tvmgen_my_model_2_run(&inputs_2, &outputs_2, &workspaces_2) != 0) return 3;
  limit_workspace(sizeof workspace_buffer);
  if (write_bytes(argv[3], output_1, sizeof output_1)) return 4;
  return write_bytes(argv[4], output_2, sizeof output_2) ? 4 : 0;
}
