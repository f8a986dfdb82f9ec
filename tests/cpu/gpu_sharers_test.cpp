// The coordinated memory share of processes on one GPU (src/dispatch/device_select's
// count_sharers, engine/handle_context's within_free_memory): how many processes the launchers'
// variables put on this process's GPU, and the free-memory rule divided by that count. The
// launchers' variables are set by hand, as Open MPI, MVAPICH2, MPICH/Hydra, Cray PMI and Slurm
// export them to each rank. The expected counts come from counting ranks one by one, not from
// the formula under test.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <iterator>
#include <utility>
#include <vector>

#include "cpu/fake_env.hpp"
#include "engine/handle_context.hpp"
#include "dispatch/settings.hpp"
#include "dispatch/device_select.hpp"

namespace ozdgemm::detail {
namespace {

using test::fake_env;

// The launchers' (local rank, local size) pairs, in kLocalRankVariables' order.
const std::pair<const char*, const char*> kLaunchers[] = {
    {"OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
    {"MV2_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_SIZE"},
    {"MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
    {"PMI_LOCAL_RANK", "PMI_LOCAL_SIZE"},
    {"SLURM_LOCALID", "SLURM_STEP_TASKS_PER_NODE"},
};

// count_sharers as the library calls it: OZDGEMM_DEVICE `configured` (-1 unset), no override,
// no OZDGEMM_DEVICES.
gpu_sharing share(const fake_env& env, int gpus, int configured = -1) {
  return count_sharers(0, choose_device(configured, env.reader(), gpus), false, env.reader(),
                       gpus);
}

// The ranks r in [0, size) that the local-rank rule puts on `device`, counted one by one.
int ranks_on(int device, int size, int gpus) {
  int n = 0;
  for (int r = 0; r < size; ++r) n += r % gpus == device;
  return n;
}

TEST(GpuSharers, NoLauncherMeansOneProcess) {
  const fake_env env{};
  for (int gpus : {1, 2, 8}) {
    const gpu_sharing s = share(env, gpus);
    EXPECT_EQ(s.sharers, 1);
    EXPECT_EQ(s.reason, "no launcher local size");
    EXPECT_TRUE(s.warning.empty());
  }
  // A local rank without a local size says nothing about the others: still 1.
  const fake_env rank_only{{"OMPI_COMM_WORLD_LOCAL_RANK", "3"}};
  EXPECT_EQ(share(rank_only, 2).sharers, 1);
}

// Every launcher, local sizes 1..9 on 1, 2, 3, 4 and 8 GPUs, every local rank: the ranks that
// the same rule sends to this rank's GPU. Summed over the GPUs, every rank is counted once.
TEST(GpuSharers, EachLauncherCountsTheRanksOnThisGpu) {
  for (const auto& [rank_var, size_var] : kLaunchers) {
    for (int gpus : {1, 2, 3, 4, 8}) {
      for (int size = 1; size <= 9; ++size) {
        int per_gpu_total = 0;
        for (int d = 0; d < gpus; ++d) per_gpu_total += ranks_on(d, size, gpus);
        ASSERT_EQ(per_gpu_total, size);
        for (int rank = 0; rank < size; ++rank) {
          const fake_env env{{rank_var, std::to_string(rank)}, {size_var, std::to_string(size)}};
          const gpu_sharing s = share(env, gpus);
          EXPECT_EQ(s.sharers, ranks_on(rank % gpus, size, gpus))
              << rank_var << "=" << rank << " " << size_var << "=" << size << " on " << gpus;
          EXPECT_EQ(s.reason.rfind(std::string(size_var) + "=" + std::to_string(size), 0), 0u)
              << s.reason;
          EXPECT_TRUE(s.warning.empty()) << s.warning;
        }
      }
    }
  }
}

// The case: 8 processes on one GPU; and the log line's example, 8 ranks on 2 GPUs.
TEST(GpuSharers, EightRanksOnOneAndOnTwoGpus) {
  for (int rank = 0; rank < 8; ++rank) {
    const fake_env env{{"OMPI_COMM_WORLD_LOCAL_RANK", std::to_string(rank)},
                       {"OMPI_COMM_WORLD_LOCAL_SIZE", "8"}};
    EXPECT_EQ(share(env, 1).sharers, 8);
    const gpu_sharing two = share(env, 2);
    EXPECT_EQ(two.sharers, 4);
    EXPECT_EQ(two.reason, "OMPI_COMM_WORLD_LOCAL_SIZE=8, 2 GPUs");
  }
  // 5 ranks on 2 GPUs: GPU 0 has ranks 0, 2, 4; GPU 1 has 1, 3.
  const fake_env r3{{"MPI_LOCALRANKID", "3"}, {"MPI_LOCALNRANKS", "5"}};
  EXPECT_EQ(share(r3, 2).sharers, 2);
  const fake_env r4{{"MPI_LOCALRANKID", "4"}, {"MPI_LOCALNRANKS", "5"}};
  EXPECT_EQ(share(r4, 2).sharers, 3);
  // Fewer ranks than GPUs: each rank alone on its GPU.
  const fake_env alone{{"MPI_LOCALRANKID", "1"}, {"MPI_LOCALNRANKS", "2"}};
  EXPECT_EQ(share(alone, 8).sharers, 1);
}

// The local size is taken in kLocalRankVariables' launcher order: the MPI launchers' own
// before Slurm's (mpirun inside an allocation carries the batch step's Slurm variables), the
// step's Slurm list before the job's.
TEST(GpuSharers, LocalSizePrecedenceFollowsTheLaunchers) {
  const char* const sizes[] = {"OMPI_COMM_WORLD_LOCAL_SIZE", "MV2_COMM_WORLD_LOCAL_SIZE",
                               "MPI_LOCALNRANKS", "PMI_LOCAL_SIZE", "SLURM_STEP_TASKS_PER_NODE",
                               "SLURM_TASKS_PER_NODE"};
  ASSERT_EQ(std::size(sizes), std::size(kLocalSizeVariables));
  for (size_t i = 0; i < std::size(sizes); ++i) EXPECT_STREQ(sizes[i], kLocalSizeVariables[i]);
  // With all of them set (to different counts), the first wins; dropping it, the next; ...
  for (size_t first = 0; first < std::size(sizes); ++first) {
    fake_env env{{"OZDGEMM_UNRELATED", "1"}};
    for (size_t i = first; i < std::size(sizes); ++i)
      env.set(sizes[i], std::to_string(2 + i));  // on one GPU, explicitly chosen: the count
    const gpu_sharing s = share(env, 1, 0);
    EXPECT_EQ(s.sharers, static_cast<int>(2 + first)) << sizes[first];
    EXPECT_EQ(s.reason.rfind(std::string(sizes[first]) + "=", 0), 0u) << s.reason;
  }
}

TEST(GpuSharers, SlurmTasksPerNodeSyntax) {
  long tasks = -7;
  bool exact = true;
  struct pick {
    long node, tasks;
    bool exact;
  };
  const std::pair<const char*, std::vector<pick>> lists[] = {
      {"4", {{0, 4, true}, {1, 4, false}, {-1, 4, false}}},
      {"4(x2),3", {{0, 4, true}, {1, 4, true}, {2, 3, true}, {3, 4, false}, {-1, 4, false}}},
      {"3,4(x2)", {{0, 3, true}, {2, 4, true}, {-1, 4, false}}},
      {"1(x4)", {{3, 1, true}, {4, 1, false}}},
      {"2,16,1(x3),5", {{0, 2, true}, {1, 16, true}, {4, 1, true}, {5, 5, true}, {-1, 16, false}}},
      {"128(x1000000)", {{999999, 128, true}, {1000000, 128, false}}},
  };
  for (const auto& [list, picks] : lists) {
    for (const pick& p : picks) {
      ASSERT_TRUE(slurm_tasks_on_node(list, p.node, &tasks, &exact)) << list;
      EXPECT_EQ(tasks, p.tasks) << list << " node " << p.node;
      EXPECT_EQ(exact, p.exact) << list << " node " << p.node;
    }
  }
  for (const char* bad : {"", "x", "0", "-1", "+4", " 4", "4 ", "4,", ",4", "4,,3", "4(x)",
                          "4(2)", "4(x2", "4(x0)", "4(x2)3", "4(x-1)", "4x2", "2097152",
                          "4(x99999999999)"}) {
    tasks = -7;
    exact = true;
    EXPECT_FALSE(slurm_tasks_on_node(bad, 0, &tasks, &exact)) << "'" << bad << "'";
    EXPECT_EQ(tasks, -7) << bad;  // outputs left alone
    EXPECT_TRUE(exact) << bad;
  }
  EXPECT_FALSE(slurm_tasks_on_node(nullptr, 0, &tasks, &exact));
}

// srun across nodes: this node's entry by SLURM_NODEID; without it (or past the list) the
// largest entry, the most sharers any node has.
TEST(GpuSharers, SlurmPicksThisNodesEntry) {
  fake_env env{{"SLURM_LOCALID", "1"}, {"SLURM_STEP_TASKS_PER_NODE", "4(x2),3"}};
  gpu_sharing s = share(env, 1);
  EXPECT_EQ(s.sharers, 4);
  EXPECT_NE(s.reason.find("largest entry: no SLURM_NODEID"), std::string::npos) << s.reason;
  for (const auto& [node, want] : {std::pair{"0", 4}, {"1", 4}, {"2", 3}}) {
    env.set("SLURM_NODEID", node);
    s = share(env, 1);
    EXPECT_EQ(s.sharers, want) << "node " << node;
    EXPECT_NE(s.reason.find(std::string("node ") + node + " (SLURM_NODEID)"), std::string::npos)
        << s.reason;
  }
  env.set("SLURM_NODEID", "7");
  s = share(env, 1);
  EXPECT_EQ(s.sharers, 4);
  EXPECT_NE(s.reason.find("SLURM_NODEID past the list"), std::string::npos) << s.reason;
  // Node 2's 3 ranks on 2 GPUs: local rank 1 shares GPU 1 with nobody, rank 0 GPU 0 with rank 2.
  env.set("SLURM_NODEID", "2");
  EXPECT_EQ(share(env, 2).sharers, 1);
  env.set("SLURM_LOCALID", "0");
  EXPECT_EQ(share(env, 2).sharers, 2);
  // The step's list wins over the job's (a step on part of the allocation).
  const fake_env step{{"SLURM_LOCALID", "0"},
                      {"SLURM_TASKS_PER_NODE", "8(x2)"},
                      {"SLURM_STEP_TASKS_PER_NODE", "2(x2)"},
                      {"SLURM_NODEID", "1"}};
  EXPECT_EQ(share(step, 1).sharers, 2);
  // The job's list alone (a batch script's own processes, node 0).
  const fake_env job{{"SLURM_TASKS_PER_NODE", "6,2"}, {"SLURM_NODEID", "0"}};
  EXPECT_EQ(share(job, 1).sharers, 6);
}

// Invalid values are skipped with one warning naming each variable and value; the next
// variable, or the default (1), then decides.
TEST(GpuSharers, InvalidValuesAreSkippedWithOneWarning) {
  const fake_env env{{"OMPI_COMM_WORLD_LOCAL_SIZE", "abc"},
                     {"MV2_COMM_WORLD_LOCAL_SIZE", "0"},
                     {"MPI_LOCALNRANKS", "6"},
                     {"MPI_LOCALRANKID", "2"}};
  gpu_sharing s = share(env, 2);
  EXPECT_EQ(s.sharers, 3);  // ranks 0, 2, 4 of 6 on GPU 0
  EXPECT_EQ(s.warning,
            "OMPI_COMM_WORLD_LOCAL_SIZE='abc' is not a number of local ranks; ignored; "
            "MV2_COMM_WORLD_LOCAL_SIZE='0' is not a number of local ranks; ignored");
  for (const char* bad : {"-4", "4x", " 4", "+4", "", "99999999999999999999999", "1048577"}) {
    const fake_env only_bad{{"PMI_LOCAL_SIZE", bad}, {"PMI_LOCAL_RANK", "0"}};
    s = share(only_bad, 1);
    EXPECT_EQ(s.sharers, 1) << bad;
    EXPECT_EQ(s.warning, std::string("PMI_LOCAL_SIZE='") + bad +
                             "' is not a number of local ranks; ignored");
  }
  // A bad Slurm list falls through to the job's; a bad SLURM_NODEID is reported once and the
  // largest entry used.
  const fake_env slurm{{"SLURM_STEP_TASKS_PER_NODE", "4(x2"},
                       {"SLURM_TASKS_PER_NODE", "5,3"},
                       {"SLURM_NODEID", "one"}};
  s = share(slurm, 1);
  EXPECT_EQ(s.sharers, 5);
  EXPECT_EQ(s.warning,
            "SLURM_NODEID='one' is not a node index; ignored; "
            "SLURM_STEP_TASKS_PER_NODE='4(x2' is not a Slurm tasks-per-node list; ignored");
}

// OZDGEMM_DEVICE chosen explicitly (or no local rank for the device): the node's ranks spread
// evenly, rounded up. A local rank outside the local size (launchers that disagree) likewise.
TEST(GpuSharers, ExplicitDeviceUsesTheEvenSpreadRoundedUp) {
  const fake_env env{{"OMPI_COMM_WORLD_LOCAL_RANK", "3"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "7"}};
  for (int gpus : {1, 2, 3, 4, 7, 8}) {
    const gpu_sharing s = share(env, gpus, 0);
    EXPECT_EQ(s.sharers, (7 + gpus - 1) / gpus) << gpus;
    EXPECT_NE(s.reason.find("ceil(7 / " + std::to_string(gpus) + ")"), std::string::npos)
        << s.reason;
  }
  const fake_env size_only{{"MV2_COMM_WORLD_LOCAL_SIZE", "8"}};
  EXPECT_EQ(share(size_only, 3).sharers, 3);
  const fake_env outside{{"OMPI_COMM_WORLD_LOCAL_RANK", "9"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "8"}};
  const gpu_sharing s = share(outside, 2);
  EXPECT_EQ(s.sharers, 4);
  EXPECT_NE(s.reason.find("outside the local size"), std::string::npos) << s.reason;
}

// OZDGEMM_PROCS_PER_GPU wins over every launcher, and holds even without a GPU.
TEST(GpuSharers, OverrideWins) {
  const fake_env env{{"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "8"}};
  for (int n : {1, 3, 16}) {
    for (int gpus : {0, 1, 4}) {
      const gpu_sharing s =
          count_sharers(n, choose_device(-1, env.reader(), gpus), false, env.reader(), gpus);
      EXPECT_EQ(s.sharers, n);
      EXPECT_EQ(s.reason, "OZDGEMM_PROCS_PER_GPU=" + std::to_string(n));
    }
  }
}

// OZDGEMM_DEVICES: host calls of every rank may use every listed GPU, so each GPU may carry all
// the node's ranks. No GPU: nothing is shared, 1.
TEST(GpuSharers, ListedGpusAndNoGpu) {
  const fake_env env{{"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "6"}};
  const gpu_sharing listed =
      count_sharers(0, choose_device(-1, env.reader(), 2), true, env.reader(), 2);
  EXPECT_EQ(listed.sharers, 6);
  EXPECT_NE(listed.reason.find("OZDGEMM_DEVICES"), std::string::npos) << listed.reason;
  for (int gpus : {0, -1}) {
    const gpu_sharing none = share(env, gpus);
    EXPECT_EQ(none.sharers, 1);
    EXPECT_EQ(none.reason, "no GPU visible");
  }
}

// The rule: need <= (free + held) * 0.9 / sharers, in integers.
TEST(GpuSharers, FreeMemoryRuleDividesByTheSharers) {
  constexpr size_t kGiB = size_t{1} << 30;
  // 80 GiB available (free + held): 72 GiB is 90%, 9 GiB an eighth of that.
  EXPECT_TRUE(within_free_memory(9 * kGiB, 0, 80 * kGiB, 8));
  EXPECT_FALSE(within_free_memory(9 * kGiB + 1, 0, 80 * kGiB, 8));
  EXPECT_TRUE(within_free_memory(9 * kGiB, 16 * kGiB, 64 * kGiB, 8));
  EXPECT_FALSE(within_free_memory(9 * kGiB + 1, 16 * kGiB, 64 * kGiB, 8));
  EXPECT_TRUE(within_free_memory(24 * kGiB, 0, 80 * kGiB, 3));
  EXPECT_FALSE(within_free_memory(24 * kGiB + 1, 0, 80 * kGiB, 3));
  // The case: 8 GiB free, 8 processes: at most 0.9 GiB each (rounded down).
  EXPECT_TRUE(within_free_memory(8 * kGiB / 10 * 9 / 8, 0, 8 * kGiB, 8));
  EXPECT_FALSE(within_free_memory(8 * kGiB / 10 * 9 / 8 + 1, 0, 8 * kGiB, 8));
  // 1 (and 0, taken as 1) is the single-process rule, decision for decision.
  for (size_t free_bytes : {size_t{0}, size_t{9}, size_t{10}, 10 * kGiB + 7, 141 * kGiB}) {
    for (size_t held : {size_t{0}, size_t{1}, 2 * kGiB}) {
      const size_t budget = (free_bytes + held) / 10 * 9;
      for (size_t need : {size_t{0}, budget, budget + 1}) {
        EXPECT_EQ(within_free_memory(need, held, free_bytes, 1), need <= budget);
        EXPECT_EQ(within_free_memory(need, held, free_bytes, 0), need <= budget);
      }
    }
  }
  // free + held past SIZE_MAX saturates instead of wrapping to a tiny budget.
  EXPECT_TRUE(within_free_memory(kGiB, 10, SIZE_MAX, 8));
  EXPECT_TRUE(within_free_memory(SIZE_MAX / 10 * 9, SIZE_MAX, SIZE_MAX, 1));
  EXPECT_FALSE(within_free_memory(SIZE_MAX / 10 * 9 + 1, SIZE_MAX, SIZE_MAX, 1));
}

// The process's own count through the library's path: settings() reads OZDGEMM_PROCS_PER_GPU,
// device_select registered gpu_sharers() with the engine at load, and the engine's
// memory_sharers() asks it once and logs where the count came from. Each case runs in a fresh
// process (threadsafe death-test style re-executes the binary), so the settings, the count and
// the logger start from the environment set here.
class GpuSharersProcess : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
  void TearDown() override {
    for (const char* v : {"OZDGEMM_PROCS_PER_GPU", "OZDGEMM_LOG_LEVEL", "OZDGEMM_LOG_FILE"})
      ::unsetenv(v);
  }
};

TEST_F(GpuSharersProcess, OverrideIsReadLoggedAndUsed) {
  ASSERT_EQ(::setenv("OZDGEMM_PROCS_PER_GPU", "4", 1), 0);
  ASSERT_EQ(::setenv("OZDGEMM_LOG_LEVEL", "info", 1), 0);
  ::unsetenv("OZDGEMM_LOG_FILE");  // stderr
  // settings() first, as the interposer's first intercepted call does.
  EXPECT_EXIT(
      {
        (void)settings();
        std::exit(static_cast<int>(memory_sharers()));
      },
      ::testing::ExitedWithCode(4),
      "4 processes share GPU 0 \\(OZDGEMM_PROCS_PER_GPU=4\\): a workspace may take "
      "90% / 4 of the free device memory");
}

// A process that only calls the C API never reads the OZDGEMM_* settings: the single-process
// rule, and nothing logged.
TEST_F(GpuSharersProcess, CApiAloneKeepsTheSingleProcessRule) {
  ASSERT_EQ(::setenv("OZDGEMM_PROCS_PER_GPU", "4", 1), 0);
  ASSERT_EQ(::setenv("OZDGEMM_LOG_LEVEL", "info", 1), 0);
  ::unsetenv("OZDGEMM_LOG_FILE");
  EXPECT_EXIT(std::exit(static_cast<int>(memory_sharers())), ::testing::ExitedWithCode(1), "^$");
}

TEST_F(GpuSharersProcess, InvalidOverrideWarnsOnceAndIsIgnored) {
  for (const char* bad : {"0", "-2", "abc", "65537"}) {
    ASSERT_EQ(::setenv("OZDGEMM_PROCS_PER_GPU", bad, 1), 0);
    ::unsetenv("OZDGEMM_LOG_FILE");
    EXPECT_EXIT(std::exit(settings().procs_per_gpu), ::testing::ExitedWithCode(0),
                std::string("OZDGEMM_PROCS_PER_GPU='") + bad + "' is invalid")
        << bad;
  }
}

}  // namespace
}  // namespace ozdgemm::detail
