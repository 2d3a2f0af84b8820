// Private: the bottleneck sentence and the advice list of an estimate (see advice.cpp).
#pragma once

#include <string>
#include <vector>

#include "gpusim/model/comm.hpp"
#include "gpusim/model/estimate.hpp"

namespace gpusim {

std::string explain_bottleneck(const Scenario& sc, const Estimate& e);
std::vector<std::string> make_advice(const Scenario& sc, const Estimate& e);

}  // namespace gpusim
