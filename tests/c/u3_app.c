/*
 * USMP RFC, U3 "user wants to pin buffers to different memories": the
 * model's two workspace pools (dtcm, sram) and two parameter pools (itcm,
 * flash) are the application's arrays, each placed in its own section and
 * sized exactly to the planned size; the parameter data comes from the
 * library's tvmgen_my_model_parameters.h.
 *
 * WORKSPACE_SLACK (default 0) shrinks the sram buffer: the tests build this
 * file with a negative slack to check that an undersized pool is caught.
 *
 * Model: tests/c/models.py int8_convnet compiled as "my_model" with pools
 * dtcm (size-limited), sram, itcm (size-limited), flash.
 * Usage: u3_app image.bin output.bin
 */
#include "app_io.h"
#include "my_model/tvmgen_my_model.h"
#include "my_model/tvmgen_my_model_parameters.h"

#ifndef WORKSPACE_SLACK
#define WORKSPACE_SLACK 0
#endif

/* Pin an array to a memory (a linker section). AddressSanitizer does not
 * guard globals placed in named sections, so under ASan the arrays stay in
 * ordinary sections, where any access beyond a pool's planned size is
 * reported. */
#if defined(__SANITIZE_ADDRESS__)
#define PIN(section)
#else
#define PIN(section) __attribute__((section(section)))
#endif

PIN(".dtcm") __attribute__((aligned(TVM_MY_MODEL_DTCM_WORKSPACE_BUFFER_ALIGNMENT)))
static uint8_t workspace_buffer_1[TVM_MY_MODEL_DTCM_WORKSPACE_BUFFER_SIZE];
PIN(".sram") __attribute__((aligned(TVM_MY_MODEL_SRAM_WORKSPACE_BUFFER_ALIGNMENT)))
static uint8_t workspace_buffer_2[TVM_MY_MODEL_SRAM_WORKSPACE_BUFFER_SIZE + WORKSPACE_SLACK];
PIN(".itcm") __attribute__((aligned(TVM_MY_MODEL_ITCM_PARAMETER_BUFFER_ALIGNMENT)))
static const uint8_t my_model_params_1[TVM_MY_MODEL_ITCM_PARAMETER_BUFFER_SIZE] =
    TVM_MY_MODEL_ITCM_PARAMETER_DATA;
PIN(".flash") __attribute__((aligned(TVM_MY_MODEL_FLASH_PARAMETER_BUFFER_ALIGNMENT)))
static const uint8_t my_model_params_2[TVM_MY_MODEL_FLASH_PARAMETER_BUFFER_SIZE] =
    TVM_MY_MODEL_FLASH_PARAMETER_DATA;

static int8_t image[1 * 6 * 6 * 3];
static int8_t output[1 * 5];

int main(int argc, char** argv) {
  TVMInputs_my_model inputs = {image};
  TVMOutputs_my_model outputs = {output};
  TVMWorkspaces_my_model workspaces = {
      .dtcm = workspace_buffer_1,
      .sram = workspace_buffer_2,
  };
  TVMParameters_my_model parameters = {
      .itcm = my_model_params_1,
      .flash = my_model_params_2,
  };
  if (argc != 3 || read_bytes(argv[1], image, sizeof image)) return 2;
  if (tvmgen_my_model_run(&inputs, &outputs, &workspaces, &parameters) != 0) return 3;
  return write_bytes(argv[2], output, sizeof output) ? 4 : 0;
}
