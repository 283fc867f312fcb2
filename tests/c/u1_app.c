/*
 * USMP RFC, U1 "most simple use case": the application gives no pools; the
 * library defines them (metadata.c) and the application only passes its
 * inputs and outputs.
 *
 * Model: tests/c/models.py int8_convnet compiled as "my_model" with the
 * default pools. Usage: u1_app image.bin output.bin
 */
#include "app_io.h"
#include "my_model/tvmgen_my_model.h"

static int8_t image[1 * 6 * 6 * 3];
static int8_t output[1 * 5];

int main(int argc, char** argv) {
  TVMInputs_my_model inputs = {image};
  TVMOutputs_my_model outputs = {output};
  if (argc != 3 || read_bytes(argv[1], image, sizeof image)) return 2;
  if (tvmgen_my_model_run(&inputs, &outputs) != 0) return 3;
  return write_bytes(argv[2], output, sizeof output) ? 4 : 0;
}
