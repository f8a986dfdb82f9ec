/* A stand-in for the CUDA driver (libcuda.so.1) that records calls instead of making them, for
 * lazy_start.sh on machines without a GPU: loading libozdgemm.so must make no driver call.
 *
 * It defines the entry points through which any use of the driver starts: cuInit, the version
 * query, and the lookups that cudart and cuBLAS use to fetch every other entry point
 * (cuGetProcAddress*, cuGetExportTable). Each appends its name to the file named by
 * OZDGEMM_FAKE_CUDA_CALLS and fails with CUDA_ERROR_UNKNOWN (999), so the CUDA runtime reports
 * "no usable GPU" and the program carries on. The real argument lists do not matter: nothing is
 * read or written through them.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int record(const char* name) {
  const char* path = getenv("OZDGEMM_FAKE_CUDA_CALLS");
  if (path != NULL) {
    const int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      if (write(fd, name, strlen(name)) < 0 || write(fd, "\n", 1) < 0) { /* best effort */
      }
      close(fd);
    }
  }
  return 999; /* CUDA_ERROR_UNKNOWN */
}

#define OZDGEMM_FAKE_ENTRY(name) \
  int name(void) { return record(#name); }

OZDGEMM_FAKE_ENTRY(cuInit)
OZDGEMM_FAKE_ENTRY(cuDriverGetVersion)
OZDGEMM_FAKE_ENTRY(cuGetProcAddress)
OZDGEMM_FAKE_ENTRY(cuGetProcAddress_v2)
OZDGEMM_FAKE_ENTRY(cuGetExportTable)
OZDGEMM_FAKE_ENTRY(cuDeviceGetCount)
OZDGEMM_FAKE_ENTRY(cuDeviceGet)
OZDGEMM_FAKE_ENTRY(cuDevicePrimaryCtxRetain)
OZDGEMM_FAKE_ENTRY(cuCtxGetDevice)
