// base::parallel_for: a pool of std::threads taking indices from one atomic counter (see
// include/gpusim/base.hpp).
#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

#include "gpusim/base.hpp"

namespace gpusim::base {

void parallel_for(std::size_t n, unsigned threads, const std::function<void(std::size_t)>& work) {
  if (threads == 0) {
    threads = std::max(1U, std::thread::hardware_concurrency());
  }
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
  threads = 1;  // WebAssembly without threads: std::thread cannot start one
#endif
  const auto count = static_cast<unsigned>(std::min<std::size_t>(n, threads));
  if (count <= 1) {
    for (std::size_t i = 0; i < n; ++i) {
      work(i);
    }
    return;
  }
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr first;
  std::mutex m;
  auto loop = [&] {
    for (std::size_t i = next++; i < n && !failed; i = next++) {
      try {
        work(i);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(m);
        if (!first) {
          first = std::current_exception();
        }
        failed = true;
      }
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(count - 1);
  for (unsigned t = 1; t < count; ++t) {
    pool.emplace_back(loop);
  }
  loop();
  for (std::thread& t : pool) {
    t.join();
  }
  if (first) {
    std::rethrow_exception(first);
  }
}

}  // namespace gpusim::base
