// Where an internal error is reported (common/error.hpp): the file as the project names it, from
// its src/, kernels/ or include/ folder on, whatever path the library was built at.
#include <gtest/gtest.h>

#include <string>

#include "common/error.hpp"

namespace ozdgemm::test {
namespace {

TEST(ErrorLocation, NamesTheFileFromTheProjectsFolder) {
  EXPECT_EQ(detail::error_location("/any/checkout/src/engine/handle_context.cpp", 165, "e",
                                   "out of memory"),
            "src/engine/handle_context.cpp:165: e failed: out of memory");
  EXPECT_STREQ(detail::project_path("/build/here/kernels/certify.cu"), "kernels/certify.cu");
  EXPECT_STREQ(detail::project_path("C:/x/include/ozdgemm.h"), "include/ozdgemm.h");
  // A checkout below a folder named src: the project's own src/ is the last one.
  EXPECT_STREQ(detail::project_path("/home/me/src/ozdgemm/src/common/error.cpp"),
               "src/common/error.cpp");
  EXPECT_STREQ(detail::project_path("/home/me/src/ozdgemm/kernels/crt.cu"), "kernels/crt.cu");
  // Already relative, or with none of the folders: as given. Any include/ counts as the
  // project's (a system header's path is cut there too).
  EXPECT_STREQ(detail::project_path("src/api/status.cpp"), "src/api/status.cpp");
  EXPECT_STREQ(detail::project_path("main.cpp"), "main.cpp");
  EXPECT_STREQ(detail::project_path("/usr/include/x.h"), "include/x.h");
}

}  // namespace
}  // namespace ozdgemm::test
