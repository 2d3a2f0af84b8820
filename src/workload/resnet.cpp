// ResNet shapes, parameters and multiply-accumulates (equations and sources in
// include/gpusim/workload.hpp: ResNet).
#include "gpusim/workload.hpp"

namespace gpusim::workload {

std::vector<ConvLayer> resnet_convs(const ResNet& r) {
  std::vector<ConvLayer> out;
  auto conv = [&out](std::string name, std::int64_t in_c, std::int64_t out_c, std::int64_t k, std::int64_t stride,
                     std::int64_t in_hw) {
    ConvLayer c;
    c.name = std::move(name);
    c.in_c = in_c;
    c.out_c = out_c;
    c.kernel = k;
    c.stride = stride;
    c.in_hw = in_hw;
    c.out_hw = conv_out(in_hw, k, stride);
    out.push_back(c);
    return c.out_hw;
  };
  std::int64_t hw = conv("stem", 3, r.stem_width, 7, 2, r.image);
  hw = conv_out(hw, 3, 2);  // 3x3/2 max pool
  std::int64_t channels = r.stem_width;
  std::int64_t width = r.width;
  for (std::size_t s = 0; s < r.blocks.size(); ++s) {
    const std::int64_t expanded = width * r.expansion;
    for (std::int64_t b = 0; b < r.blocks[s]; ++b) {
      const std::int64_t stride = (b == 0 && s > 0) ? 2 : 1;
      const std::string at = "stage" + std::to_string(s + 1) + ".";
      if (b == 0) {
        conv(at + "shortcut", channels, expanded, 1, stride, hw);
        out.back().shortcut = true;
      }
      const std::int64_t mid = conv(at + "conv1x1.reduce", channels, width, 1, r.stride_in_3x3 ? 1 : stride, hw);
      const std::int64_t next = conv(at + "conv3x3", width, width, 3, r.stride_in_3x3 ? stride : 1, mid);
      conv(at + "conv1x1.expand", width, expanded, 1, 1, next);
      out.back().block_end = true;
      hw = next;
      channels = expanded;
    }
    width *= 2;
  }
  return out;
}

std::int64_t resnet_features(const ResNet& r) {
  return r.width * r.expansion * (std::int64_t{1} << (r.blocks.empty() ? 0 : r.blocks.size() - 1));
}

std::int64_t resnet_final_hw(const ResNet& r) {
  const auto convs = resnet_convs(r);
  return convs.empty() ? 0 : convs.back().out_hw;
}

double resnet_macs(const ResNet& r) {
  double macs = static_cast<double>(resnet_features(r) * r.classes);
  for (const ConvLayer& c : resnet_convs(r)) {
    macs += c.macs();
  }
  return macs;
}

double resnet_params(const ResNet& r) {
  double n = static_cast<double>(resnet_features(r) * r.classes + r.classes);
  for (const ConvLayer& c : resnet_convs(r)) {
    n += c.weights() + 2.0 * static_cast<double>(c.out_c);
  }
  return n;
}

double resnet_param_tensors(const ResNet& r) { return 3.0 * static_cast<double>(resnet_convs(r).size()) + 2.0; }

double resnet_saved_elements(const ResNet& r) {
  const auto convs = resnet_convs(r);
  double n = convs.empty() ? 0.0 : convs.front().in_elements();
  for (const ConvLayer& c : convs) {
    n += 2.0 * c.out_elements();
  }
  const double pooled = static_cast<double>(conv_out(convs.empty() ? 0 : convs.front().out_hw, 3, 2));
  return n + pooled * pooled * static_cast<double>(r.stem_width);
}

}  // namespace gpusim::workload
