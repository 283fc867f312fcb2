/* File I/O for the test applications: raw bytes in, raw bytes out. */
#ifndef USMP_TEST_APP_IO_H_
#define USMP_TEST_APP_IO_H_

#include <stddef.h>
#include <stdio.h>

static int read_bytes(const char* path, void* data, size_t size) {
  FILE* f = fopen(path, "rb");
  size_t done;
  if (f == NULL) return 1;
  done = fread(data, 1, size, f);
  fclose(f);
  return done != size;
}

static int write_bytes(const char* path, const void* data, size_t size) {
  FILE* f = fopen(path, "wb");
  size_t done;
  if (f == NULL) return 1;
  done = fwrite(data, 1, size, f);
  fclose(f);
  return done != size;
}

#endif /* USMP_TEST_APP_IO_H_ */
