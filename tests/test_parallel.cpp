// base::parallel_for (include/gpusim/base.hpp): every index once, results by slot whatever the
// thread count, and a failure reported to the caller.
#include <catch2/catch.hpp>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "gpusim/base.hpp"

using gpusim::base::parallel_for;

TEST_CASE("parallel_for runs every index exactly once, on any number of threads", "[base][parallel]") {
  for (const unsigned threads : {0U, 1U, 2U, 7U, 64U}) {
    for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{1000}}) {
      std::vector<int> runs(n, 0);
      std::vector<double> slot(n, 0.0);
      parallel_for(n, threads, [&](std::size_t i) {
        runs[i] += 1;  // each index is one thread's alone
        slot[i] = 3.0 * static_cast<double>(i) + 1.0;
      });
      INFO("threads " << threads << ", n " << n);
      CHECK(std::all_of(runs.begin(), runs.end(), [](int r) { return r == 1; }));
      for (std::size_t i = 0; i < n; ++i) {
        CHECK(slot[i] == 3.0 * static_cast<double>(i) + 1.0);
      }
    }
  }
}

TEST_CASE("parallel_for rethrows a failure of the work once every thread has stopped", "[base][parallel][errors]") {
  for (const unsigned threads : {1U, 4U}) {
    std::vector<int> runs(200, 0);
    CHECK_THROWS_WITH(parallel_for(runs.size(), threads,
                                   [&](std::size_t i) {
                                     runs[i] += 1;
                                     if (i == 17) {
                                       throw std::runtime_error("row 17 failed");
                                     }
                                   }),
                      "row 17 failed");
    // Index 17 ran; nothing ran twice.
    CHECK(runs[17] == 1);
    CHECK(std::all_of(runs.begin(), runs.end(), [](int r) { return r <= 1; }));
  }
}
