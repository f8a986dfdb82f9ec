// Which GPU serves this process's host-memory calls (cblas_dgemm, dgemm_). In an MPI job every
// rank preloads the library; without a rule, all ranks of a node would pile onto GPU 0. The
// rule, first match wins:
//   1. OZDGEMM_DEVICE, when set (out of range: host calls stay on the CPU BLAS);
//   2. the launcher's local rank (the rank's index among the ranks of its node), modulo the
//      number of visible GPUs, from the first of kLocalRankVariables that holds a valid rank;
//   3. GPU 0.
// A launcher that gives each rank its own CUDA_VISIBLE_DEVICES leaves one visible GPU, so rule
// 2 then picks it (rank mod 1 = 0) and the launcher's binding stands.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace ozdgemm::detail {

// Consulted in this order. The MPI launchers' own variables come before Slurm's: mpirun inside
// an allocation still carries the batch step's SLURM_LOCALID (0 on every rank).
inline constexpr const char* kLocalRankVariables[] = {
    "OMPI_COMM_WORLD_LOCAL_RANK",  // Open MPI (mpirun, and srun with PMIx)
    "MV2_COMM_WORLD_LOCAL_RANK",   // MVAPICH2
    "MPI_LOCALRANKID",             // MPICH / Intel MPI (Hydra)
    "PMI_LOCAL_RANK",              // PMI-based launchers (Cray PALS, MPICH's PMI)
    "SLURM_LOCALID",               // srun
};

struct device_choice {
  int device = 0;       // GPU ordinal for host calls
  std::string reason;   // why, for the log
  std::string warning;  // non-empty when a variable held an invalid value and was skipped
};

// The rule above, as a pure function of its inputs (unit-tested in tests/cpu).
//   configured  OZDGEMM_DEVICE from settings(), or -1 when it is unset (or invalid)
//   env         the value of an environment variable, or nullptr when unset
//   gpu_count   visible GPUs; <= 0 when none (the result is then 0, and unused)
device_choice choose_device(int configured, const std::function<const char*(const char*)>& env,
                            int gpu_count);

// The GPU of this process's host calls. Decided on the first call, which queries the GPU count
// and so initialises CUDA: call it only when a host call wants the GPU, never at load time.
// Logs the choice once (info). Thread-safe; never throws.
int host_device() noexcept;

// The GPUs that share host calls (the multi-GPU host path, interpose/host_offload.cpp): one
// entry per share of the work, so a GPU may appear more than once.
struct device_list {
  std::vector<int> devices;  // empty: host calls stay on the CPU BLAS (reason says why)
  std::string reason;        // for the log
  std::string warning;       // non-empty when listed GPUs do not exist and were dropped
};

// OZDGEMM_DEVICES resolved against the GPU count, as a pure function of its inputs:
//   all         OZDGEMM_DEVICES=all: every visible GPU, 0 .. gpu_count - 1
//   listed      OZDGEMM_DEVICES's ordinals, in order, repeats kept; those >= gpu_count are
//               dropped with a warning (none left: the CPU BLAS)
//   neither     the single GPU `single` (host_device()'s rule); out of range: the CPU BLAS
// gpu_count <= 0: no GPU, empty.
device_list choose_devices(bool all, const std::vector<int>& listed, int single, int gpu_count);

// This process's list, decided and logged (info; warnings at warn) on the first call, which
// initialises CUDA: call it only when a host call wants the GPU. Thread-safe; never throws.
const device_list& host_devices() noexcept;

}  // namespace ozdgemm::detail
