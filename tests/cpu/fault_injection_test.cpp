// The test-only switch OZDGEMM_INJECT_FAULT (common/fault_injection.hpp): only the named
// fault fires, exactly `count` times, and an invalid value arms nothing. The switch is read
// once per process, so each case runs in a child process with its own environment.
#include "common/fault_injection.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace ozdgemm::test {
namespace {

using detail::fault;
using detail::inject_fault;

// Runs `body` in a forked child with OZDGEMM_INJECT_FAULT=value; its return is the exit status.
template <class Body>
int in_child(const char* value, Body body) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (value != nullptr)
      setenv("OZDGEMM_INJECT_FAULT", value, 1);
    else
      unsetenv("OZDGEMM_INJECT_FAULT");
    setenv("OZDGEMM_LOG_LEVEL", "off", 1);
    _exit(body());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
}

// How many times `f` fires in 10 queries, each interleaved with queries of the other kinds.
int fired(fault f) {
  int n = 0;
  for (int i = 0; i < 10; ++i) {
    for (fault g : {fault::alloc, fault::cublas, fault::kernel})
      if (g != f && inject_fault(g)) return 50;  // another kind fired: wrong
    n += inject_fault(f) ? 1 : 0;
  }
  return n;
}

TEST(FaultInjection, FiresOnlyTheNamedFaultCountTimes) {
  EXPECT_EQ(in_child(nullptr, [] { return fired(fault::alloc); }), 0);
  EXPECT_EQ(in_child("alloc", [] { return fired(fault::alloc); }), 1);
  EXPECT_EQ(in_child("cublas:3", [] { return fired(fault::cublas); }), 3);
  EXPECT_EQ(in_child("kernel:2", [] { return fired(fault::kernel); }), 2);
  EXPECT_EQ(in_child("kernel:2", [] { return fired(fault::alloc); }), 50);  // kernel fires
}

TEST(FaultInjection, InvalidValuesArmNothing) {
  for (const char* v : {"allocx", "alloc:", "alloc:0", "alloc:-1", "alloc:2x", "memory", ":3",
                        "cublas:99999999999999999999"})
    for (fault f : {fault::alloc, fault::cublas, fault::kernel})
      EXPECT_EQ(in_child(v, [f] { return fired(f); }), 0) << v;
}

}  // namespace
}  // namespace ozdgemm::test
