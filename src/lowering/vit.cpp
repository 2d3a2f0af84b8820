// A Vision Transformer's two ends on the transformer lowering (workload::Vit): the blocks are the
// transformer's, non-causal over (image / patch)² + 1 tokens; the token embedding becomes the
// patch projection and the logits over every token become a classifier on the class token.
//
// Patch projection [dosovitskiy-2021]: a convolution of kernel = stride = patch is a GEMM of
// M = N·patches, N = hidden, K = 3·patch², reading each pixel once (no overlap, no im2col copy);
// the class token is concatenated in front (a copy of the sequence) and the learned positions
// added (read, write): 4·t·h·e bytes. Backward: the projection's weight gradient only (the image
// needs none) and the positions' gradient, a sum of dy over the batch (read t·h). The classifier
// reads the class token's output after the final norm: M = N rows [torchvision-vit]; backward its
// dgrad and wgrad, and dy for the class token scattered into the sequence's gradient (write t·h).
// The loss is softmax cross-entropy over N x classes (read the logits and write the fp32
// probabilities; backward the reverse).
#include <algorithm>

#include "lowering/builder.hpp"

namespace gpusim::lowering {

void adapt_vit(std::vector<Op>& ops, const workload::ModelShape& m, DType dtype, double e, double images,
               bool training) {
  const double h = static_cast<double>(m.hidden);
  const double patches = static_cast<double>(m.vit.patches());
  const double k = 3.0 * static_cast<double>(m.vit.patch * m.vit.patch);
  const double classes = static_cast<double>(m.vocab);
  const double t = images * (patches + 1.0);
  auto replaced = [](const Op& op) {
    return op.scope == Scope::kEmbedding || op.role == OpRole::kKvWrite || op.role == OpRole::kLogits ||
           op.role == OpRole::kLoss;
  };
  ops.erase(std::remove_if(ops.begin(), ops.end(), replaced), ops.end());
  Builder b(ops);
  b.scope(Scope::kEmbedding);
  b.add(gemm_op("patch_embed", Phase::kForward, dtype, images * patches, h, k, e, e, e), 1);
  b.mem("patch_embed.position", Phase::kForward, 4.0 * t * h * e, 1);
  b.scope(Scope::kHead);
  b.add(gemm_op("classifier", Phase::kForward, dtype, images, classes, h, e, e, e), 1);
  if (!training) {
    return;
  }
  b.role(OpRole::kLoss);
  b.role(OpRole::kLoss);
  b.mem("cross_entropy", Phase::kForward, images * classes * (e + 4.0), 1);
  b.mem("cross_entropy.bwd", Phase::kBackward, images * classes * (4.0 + e), 1);
  b.role(OpRole::kOther);
  b.role(OpRole::kOther);
  b.gemm("classifier.dgrad", Phase::kBackward, dtype, images, h, classes, 1, e, e, e);
  b.gemm("classifier.wgrad", Phase::kBackward, dtype, h, classes, images, 1, e, e, e);
  b.mem("class_token.bwd", Phase::kBackward, t * h * e, 1);
  b.scope(Scope::kEmbedding);
  b.mem("position.bwd", Phase::kBackward, t * h * e, 1);
  b.gemm("patch_embed.wgrad", Phase::kBackward, dtype, k, h, images * patches, 1, e, e, e);
}

}  // namespace gpusim::lowering
