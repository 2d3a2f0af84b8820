// The init command (include/gpusim/app.hpp): a commented scenario to start from.
#include "gpusim/app.hpp"

namespace gpusim::app {

std::string init(const std::string& kind) {
  const auto job = base::value_in(workload::kJobKindNames, kind);
  if (!job) {
    throw RequestError("kind", "must be training or serving, got \"" + kind + "\"");
  }
  return report::scenario_template(*job);
}

}  // namespace gpusim::app
