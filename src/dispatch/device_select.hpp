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
  long local_rank = -1;  // the launcher's local rank the device came from (rule 2), else -1
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

// The GPUs that share host calls (the multi-GPU host path, host_path/offload.cpp): one
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

// How many processes share this process's GPU, for the free-memory rule of the workspaces
// (engine/handle_context.hpp): each process may take its share of the free memory, not all of
// it. Eight ranks that each took 90% of the same free memory left the GPU without room for the
// ranks' own allocations. The rule, first match wins:
//   1. OZDGEMM_PROCS_PER_GPU, when set;
//   2. the launcher's number of ranks on this node (the first of kLocalSizeVariables that holds
//      a valid count), spread over the GPUs:
//        - the device came from the local rank (rank mod G): the local ranks r < size with
//          r mod G == device, i.e. the ranks the same rule sends to this GPU;
//        - OZDGEMM_DEVICES lists GPUs (host calls of every rank on every listed GPU): size;
//        - otherwise (OZDGEMM_DEVICE set, no local rank): ceil(size / G);
//   3. 1 (no launcher: the whole free memory, as in a single process).
// A launcher that gives each rank its own CUDA_VISIBLE_DEVICES leaves G = 1 visible GPU, so the
// count is then the whole node's: too cautious (workspaces smaller, more calls native), never
// wrong; OZDGEMM_PROCS_PER_GPU=1 says otherwise.

// Consulted in this order, the launchers of kLocalRankVariables in the same order. Slurm's
// per-node task lists ("4(x2),3") give this node's entry by SLURM_NODEID; the step's list comes
// before the job's (srun sets both for a step; only the step's matches its node ids).
inline constexpr const char* kLocalSizeVariables[] = {
    "OMPI_COMM_WORLD_LOCAL_SIZE",  // Open MPI
    "MV2_COMM_WORLD_LOCAL_SIZE",   // MVAPICH2
    "MPI_LOCALNRANKS",             // MPICH / Intel MPI (Hydra)
    "PMI_LOCAL_SIZE",              // Cray PMI (set with PMI_LOCAL_RANK)
    "SLURM_STEP_TASKS_PER_NODE",   // srun: tasks of this step per node
    "SLURM_TASKS_PER_NODE",        // sbatch/salloc: tasks of the job per node
};

// Slurm's tasks-per-node list: comma-separated entries "count" or "count(xrepeat)", counts and
// repeats positive integers, for consecutive nodes. *tasks = the entry of node `node` (0-based,
// SLURM_NODEID), or the largest entry when node < 0 or past the list's end (*exact false then).
// False, leaving the outputs alone, for anything else. Pure; unit-tested in tests/cpu.
bool slurm_tasks_on_node(const char* list, long node, long* tasks, bool* exact);

struct gpu_sharing {
  int sharers = 1;      // processes counted on this process's GPU(s), >= 1
  std::string reason;   // where the count came from, for the log
  std::string warning;  // non-empty when a variable held an invalid value and was skipped
};

// The rule above, as a pure function of its inputs (unit-tested in tests/cpu).
//   procs_per_gpu  OZDGEMM_PROCS_PER_GPU from settings(), or 0 when it is unset (or invalid)
//   device         choose_device()'s result for this process
//   listed         OZDGEMM_DEVICES is set (all, or a list): host calls spread over GPUs
//   env            as for choose_device
//   gpu_count      visible GPUs; <= 0 when none (the result is then 1)
gpu_sharing count_sharers(int procs_per_gpu, const device_choice& device, bool listed,
                          const std::function<const char*(const char*)>& env, int gpu_count);

// This process's count, decided and logged (info; warnings at warn) on the first call after the
// interposer has read its settings (before that, and so in a process that only calls the C API:
// 0, not known), which queries the GPU count and so initialises CUDA: the engine asks for it
// when a workspace is sized (libozdgemm.so registers it with set_memory_sharers_source at load,
// which touches no CUDA). Thread-safe; never throws; 1 when anything fails.
unsigned gpu_sharers() noexcept;

}  // namespace ozdgemm::detail
