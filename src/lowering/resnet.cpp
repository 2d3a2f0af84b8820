// Lowering of a ResNet (workload::ResNet) into the kernels PyTorch runs for it, channels-last.
//
// Convolutions run as implicit GEMMs [chetlur-2014]: forward M = N·Ho·Wo, N = Cout, K = Cin·R·S;
// the data gradient M = N·Hi·Wi, N = Cin, K = Cout·R·S / stride² (the same 2·MACs FLOPs); the
// weight gradient M = Cout, N = Cin·R·S, K = N·Ho·Wo. An implicit GEMM never materializes the
// R·S-fold im2col matrix: its DRAM traffic is the input, the filter and the output once each.
// Batch norm in training runs PyTorch's two channels-last kernels [pytorch-batchnorm]: statistics
// (read x) and the transform (read x, write y), 3 passes; its backward reduces dy and dy·x̂ (read
// x, dy) and then writes dx (read x, dy, write dx), 5 passes; in inference it is one affine pass
// (read, write). ReLU is in place (read, write; backward reads y and dy, writes dx); the residual
// add reads both branches and writes the sum; where the two branches' gradients meet at a block's
// input, autograd sums them (3 passes). The max pool saves int64 indices for its backward
// (PyTorch max_pool2d_with_indices). The stem convolution has no data gradient (the image needs
// none). Under autocast each convolution casts its fp32 weight to 16 bits per forward, and the
// 16-bit weight gradient back into the fp32 .grad.
// In PyTorch's default NCHW layout a tensor-core convolution still runs on NHWC data: cuDNN
// transposes its NCHW operands to NHWC and its result back ("the cuDNN library may use padding,
// folding, and NCHW-to-NHWC transformations to call the Tensor Core operations"
// [cudnn-legacy-api]; "the NCHW tensor must be transposed to NHWC before the convolution and
// transposed back to NCHW after" [composer-channels-last]). Each of the three cuDNN calls of a
// convolution does so for its own operands, one read and one write each: the forward x, w in and
// y out; the data gradient dy, w in and dx out; the weight gradient x, dy in and dw out. fp32
// convolutions without tensor cores take NCHW as it is.
#include "gpusim/lowering.hpp"

namespace gpusim::lowering {
namespace {

using workload::ConvLayer;

struct Net {
  std::vector<Op>* ops = nullptr;
  DType dtype = DType::kFp16;
  double e = 2;       // bytes per activation and per weight as the convolutions read them
  double images = 1;  // per micro-batch
  bool training = true;
  bool transposes = false;  // NCHW activations on tensor cores: cuDNN's layout transposes

  void mem(const std::string& name, Phase ph, double bytes, double count = 1) const {
    Op op;
    op.name = name;
    op.kind = OpKind::kMemoryBound;
    op.phase = ph;
    op.bytes = Bytes(bytes);
    op.count = count;
    ops->push_back(std::move(op));
  }
  // An implicit GEMM with its stated traffic (ea = 0: the kernel model keeps `bytes`).
  void conv_gemm(const std::string& name, Phase ph, double m, double n, double k, double bytes) const {
    Op op = gemm_op(name, ph, dtype, m, n, k, 0, 0, 0);
    op.bytes = Bytes(bytes);
    ops->push_back(std::move(op));
  }
  [[nodiscard]] double in(const ConvLayer& c) const { return images * c.in_elements() * e; }
  [[nodiscard]] double out(const ConvLayer& c) const { return images * c.out_elements() * e; }

  // A read and a write of each operand a convolution call transposes.
  void transpose(const std::string& name, Phase ph, double bytes) const {
    if (transposes) {
      mem(name + ".nchw", ph, 2.0 * bytes);
    }
  }
  void forward(const ConvLayer& c) const {
    const double hw = static_cast<double>(c.out_hw * c.out_hw);
    transpose(c.name, Phase::kForward, in(c) + c.weights() * e + out(c));
    conv_gemm(c.name, Phase::kForward, images * hw, static_cast<double>(c.out_c),
              c.weights() / static_cast<double>(c.out_c), in(c) + c.weights() * e + out(c));
    mem(c.name + ".bn", Phase::kForward, (training ? 3.0 : 2.0) * out(c));
    if (!c.block_end && !c.shortcut) {
      mem(c.name + ".relu", Phase::kForward, 2.0 * out(c));
    }
    if (c.block_end) {
      mem("residual.add", Phase::kForward, 3.0 * out(c));
      mem("residual.relu", Phase::kForward, 2.0 * out(c));
    }
  }
  void backward(const ConvLayer& c, bool first) const {
    const Phase ph = Phase::kBackward;
    if (c.block_end) {
      mem("residual.relu.bwd", ph, 3.0 * out(c));
    } else if (!c.shortcut) {
      mem(c.name + ".relu.bwd", ph, 3.0 * out(c));
    }
    mem(c.name + ".bn.bwd", ph, 5.0 * out(c));
    const double stride2 = static_cast<double>(c.stride * c.stride);
    if (!first) {
      transpose(c.name + ".dgrad", ph, out(c) + c.weights() * e + in(c));
      conv_gemm(c.name + ".dgrad", ph, images * c.in_elements() / static_cast<double>(c.in_c),
                static_cast<double>(c.in_c), static_cast<double>(c.out_c * c.kernel * c.kernel) / stride2,
                out(c) + c.weights() * e + in(c));
    }
    transpose(c.name + ".wgrad", ph, in(c) + out(c) + c.weights() * e);
    conv_gemm(c.name + ".wgrad", ph, static_cast<double>(c.out_c), c.weights() / static_cast<double>(c.out_c),
              images * static_cast<double>(c.out_hw * c.out_hw), in(c) + out(c) + c.weights() * e);
  }
};

}  // namespace

std::vector<Op> lower_resnet(const workload::ModelShape& m, DType precision, double images, bool training,
                             bool autocast, workload::MemoryFormat format) {
  const workload::ResNet& r = m.resnet;
  std::vector<Op> ops;
  Net net;
  net.ops = &ops;
  net.dtype = precision;
  net.e = units::is_wide(precision) ? 4.0 : 2.0;
  net.images = images;
  net.training = training;
  net.transposes = format == workload::MemoryFormat::kNchw && precision != DType::kFp32 && precision != DType::kFp64;
  const double e = net.e;
  const auto convs = workload::resnet_convs(r);
  if (convs.empty()) {
    return ops;
  }
  const double n_convs = static_cast<double>(convs.size());
  double conv_weights = 0;
  for (const ConvLayer& c : convs) {
    conv_weights += c.weights();
  }
  const bool cast = training && autocast && !units::is_wide(precision);
  if (cast) {
    net.mem("weight.cast", Phase::kForward, conv_weights * (4.0 + e) / n_convs, n_convs);
  }
  const ConvLayer& stem = convs.front();
  const double pool_hw = static_cast<double>(workload::conv_out(stem.out_hw, 3, 2));
  const double pooled = images * pool_hw * pool_hw * static_cast<double>(r.stem_width);
  const double features = static_cast<double>(workload::resnet_features(r));
  const double final_hw = static_cast<double>(convs.back().out_hw * convs.back().out_hw);
  const double classes = static_cast<double>(r.classes);
  // Forward: stem, max pool, blocks, average pool, classifier, loss.
  for (std::size_t i = 0; i < convs.size(); ++i) {
    net.forward(convs[i]);
    if (i == 0) {
      net.mem("maxpool", Phase::kForward, net.out(stem) + pooled * (e + 8.0));
    }
  }
  net.mem("avgpool", Phase::kForward, images * features * (final_hw + 1.0) * e);
  ops.push_back(gemm_op("fc", Phase::kForward, precision, images, classes, features, e, e, e));
  if (!training) {
    return ops;
  }
  net.mem("cross_entropy", Phase::kForward, images * classes * (e + 4.0));
  // Backward in reverse: loss, classifier, average pool, blocks, max pool, stem.
  net.mem("cross_entropy.bwd", Phase::kBackward, images * classes * (4.0 + e));
  ops.push_back(gemm_op("fc.dgrad", Phase::kBackward, precision, images, features, classes, e, e, e));
  ops.push_back(gemm_op("fc.wgrad", Phase::kBackward, precision, classes, features, images, e, e, e));
  net.mem("avgpool.bwd", Phase::kBackward, images * features * (final_hw + 1.0) * e);
  for (std::size_t i = convs.size(); i-- > 0;) {
    const ConvLayer& c = convs[i];
    net.backward(c, i == 0);
    // The branches' gradients meet at a block's input: after its first convolution's backward
    // (the reduce 1x1, which follows the shortcut in execution order).
    if (i > 0 && c.name.find("reduce") != std::string::npos) {
      net.mem("residual.grad_sum", Phase::kBackward, 3.0 * net.in(c));
    }
    if (i == 1) {
      net.mem("maxpool.bwd", Phase::kBackward, pooled * (e + 8.0) + net.out(stem));
    }
  }
  if (cast) {
    net.mem("weight.cast.bwd", Phase::kBackward, conv_weights * (e + 8.0) / n_convs, n_convs);
  }
  return ops;
}

}  // namespace gpusim::lowering
