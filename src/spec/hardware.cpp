#include "gpusim/spec/hardware.hpp"

namespace gpusim {

const char* to_string(Arch a) {
  switch (a) {
    case Arch::kVolta:
      return "volta";
    case Arch::kAmpere:
      return "ampere";
    case Arch::kAda:
      return "ada";
    case Arch::kHopper:
      return "hopper";
    case Arch::kBlackwell:
      return "blackwell";
  }
  return "?";
}

const char* to_string(DType d) {
  switch (d) {
    case DType::kFp64:
      return "fp64";
    case DType::kFp32:
      return "fp32";
    case DType::kTf32:
      return "tf32";
    case DType::kFp16:
      return "fp16";
    case DType::kBf16:
      return "bf16";
    case DType::kFp8:
      return "fp8";
    case DType::kInt8:
      return "int8";
    case DType::kInt4:
      return "int4";
  }
  return "?";
}

double bytes_per_element(DType d) {
  switch (d) {
    case DType::kFp64:
      return 8;
    case DType::kFp32:
    case DType::kTf32:
      return 4;
    case DType::kFp16:
    case DType::kBf16:
      return 2;
    case DType::kFp8:
    case DType::kInt8:
      return 1;
    case DType::kInt4:
      return 0.5;
  }
  return 2;
}

}  // namespace gpusim
