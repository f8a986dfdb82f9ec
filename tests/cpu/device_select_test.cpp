// The per-process GPU rule of the host path (src/dispatch/device_select), with the launchers'
// variables set by hand: what Open MPI, MPICH/Hydra, MVAPICH2 and Slurm export to each rank,
// against several GPU counts. The rule itself is documented in device_select.hpp and in the
// README's environment table.
#include "dispatch/device_select.hpp"

#include <gtest/gtest.h>

#include <string>

#include "cpu/fake_env.hpp"

namespace ozdgemm::detail {
namespace {

using test::fake_env;

TEST(DeviceSelect, OzdgemmDeviceWinsOverEveryLauncher) {
  const fake_env env{{"OMPI_COMM_WORLD_LOCAL_RANK", "3"}, {"SLURM_LOCALID", "2"}};
  const device_choice c = choose_device(1, env.reader(), 4);
  EXPECT_EQ(c.device, 1);
  EXPECT_EQ(c.reason, "OZDGEMM_DEVICE=1");
  EXPECT_TRUE(c.warning.empty());
  // Kept even when out of range or without GPUs: the host path then reports it and stays on
  // the CPU BLAS rather than silently using another GPU.
  EXPECT_EQ(choose_device(7, env.reader(), 4).device, 7);
  EXPECT_EQ(choose_device(0, env.reader(), 0).device, 0);
}

TEST(DeviceSelect, NoLauncherMeansTheFirstGpu) {
  const fake_env env{};
  const device_choice c = choose_device(-1, env.reader(), 8);
  EXPECT_EQ(c.device, 0);
  EXPECT_NE(c.reason.find("no launcher local rank"), std::string::npos) << c.reason;
  EXPECT_TRUE(c.warning.empty());
}

// Each launcher on its own: local ranks 0..7 on 1, 2, 3, 4 and 8 GPUs give rank mod count, and
// the reason names the rank, the variable and the count.
TEST(DeviceSelect, EachLauncherGivesLocalRankModuloGpus) {
  for (const char* var : kLocalRankVariables) {
    for (int gpus : {1, 2, 3, 4, 8}) {
      for (int rank = 0; rank < 8; ++rank) {
        const fake_env env{{var, std::to_string(rank)}};
        const device_choice c = choose_device(-1, env.reader(), gpus);
        EXPECT_EQ(c.device, rank % gpus) << var << "=" << rank << " on " << gpus << " GPUs";
        EXPECT_EQ(c.reason, "local rank " + std::to_string(rank) + " (" + var + ") mod " +
                                std::to_string(gpus) + (gpus == 1 ? " GPU" : " GPUs"));
        EXPECT_TRUE(c.warning.empty());
      }
    }
  }
}

// A 4-rank mpirun on a node with 2 GPUs: ranks 0 and 2 share GPU 0, 1 and 3 share GPU 1.
TEST(DeviceSelect, FourRanksOnTwoGpusShareThemEvenly) {
  int per_gpu[2] = {0, 0};
  for (int rank = 0; rank < 4; ++rank) {
    const fake_env env{{"OMPI_COMM_WORLD_LOCAL_RANK", std::to_string(rank)},
                       {"OMPI_COMM_WORLD_RANK", std::to_string(rank + 4)}};
    ++per_gpu[choose_device(-1, env.reader(), 2).device];
  }
  EXPECT_EQ(per_gpu[0], 2);
  EXPECT_EQ(per_gpu[1], 2);
}

// mpirun inside a Slurm allocation: every rank inherits the batch step's SLURM_LOCALID=0; the
// MPI launcher's variable must win, or all ranks would take GPU 0.
TEST(DeviceSelect, MpiLauncherVariablesComeBeforeSlurms) {
  const fake_env ompi{{"SLURM_LOCALID", "0"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "3"}};
  EXPECT_EQ(choose_device(-1, ompi.reader(), 4).device, 3);
  const fake_env hydra{{"SLURM_LOCALID", "0"}, {"MPI_LOCALRANKID", "2"}};
  EXPECT_EQ(choose_device(-1, hydra.reader(), 4).device, 2);
  const fake_env mvapich{{"SLURM_LOCALID", "0"}, {"MV2_COMM_WORLD_LOCAL_RANK", "1"}};
  EXPECT_EQ(choose_device(-1, mvapich.reader(), 4).device, 1);
  const fake_env srun{{"SLURM_LOCALID", "5"}, {"SLURM_PROCID", "13"}};
  EXPECT_EQ(choose_device(-1, srun.reader(), 4).device, 1);
}

// Slurm with --gpus-per-task / gpu binding gives each rank a CUDA_VISIBLE_DEVICES of its own:
// one visible GPU, which every rank takes.
TEST(DeviceSelect, LauncherBoundGpuIsKept) {
  for (int rank = 0; rank < 4; ++rank) {
    const fake_env env{{"SLURM_LOCALID", std::to_string(rank)}};
    EXPECT_EQ(choose_device(-1, env.reader(), 1).device, 0);
  }
}

// Invalid values are skipped with a warning naming the variable and the value; the next
// variable, or the default, then decides.
TEST(DeviceSelect, InvalidRanksAreSkippedWithAWarning) {
  for (const char* bad : {"-1", "x", "1x", " 2", "+1", "99999999999999999999999"}) {
    const fake_env env{{"OMPI_COMM_WORLD_LOCAL_RANK", bad}, {"SLURM_LOCALID", "3"}};
    const device_choice c = choose_device(-1, env.reader(), 2);
    EXPECT_EQ(c.device, 1) << bad;
    EXPECT_EQ(c.warning,
              std::string("OMPI_COMM_WORLD_LOCAL_RANK='") + bad + "' is not a local rank; ignored");
    EXPECT_NE(c.reason.find("SLURM_LOCALID"), std::string::npos) << c.reason;
  }
  const fake_env only_bad{{"MPI_LOCALRANKID", "abc"}, {"PMI_LOCAL_RANK", "-4"}};
  const device_choice c = choose_device(-1, only_bad.reader(), 4);
  EXPECT_EQ(c.device, 0);
  EXPECT_EQ(c.warning,
            "MPI_LOCALRANKID='abc' is not a local rank; ignored; "
            "PMI_LOCAL_RANK='-4' is not a local rank; ignored");
}

TEST(DeviceSelect, NoGpuGivesZero) {
  const fake_env env{{"OMPI_COMM_WORLD_LOCAL_RANK", "3"}};
  EXPECT_EQ(choose_device(-1, env.reader(), 0).device, 0);
  EXPECT_EQ(choose_device(-1, env.reader(), -1).device, 0);
}

// Large local ranks (big nodes, oversubscription) still map into range.
TEST(DeviceSelect, LargeRanksStayInRange) {
  const fake_env env{{"PMI_LOCAL_RANK", "2147483647"}};
  const device_choice c = choose_device(-1, env.reader(), 7);
  EXPECT_EQ(c.device, 2147483647 % 7);
}

}  // namespace
}  // namespace ozdgemm::detail
