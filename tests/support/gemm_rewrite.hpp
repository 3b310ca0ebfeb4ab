#pragma once
// Forces kernels::gemm's form (src/kernels/gemm_form.cpp) for the guard's lifetime and
// restores the rule after, failed test or not.
#include "kernels/gemm.hpp"

namespace minidl::testing {

struct ForcedGemmRewrite {
  explicit ForcedGemmRewrite(kernels::GemmRewrite mode) { kernels::set_gemm_rewrite(mode); }
  ~ForcedGemmRewrite() { kernels::set_gemm_rewrite(kernels::GemmRewrite::Rule); }
  ForcedGemmRewrite(const ForcedGemmRewrite&) = delete;
  ForcedGemmRewrite& operator=(const ForcedGemmRewrite&) = delete;
};

}  // namespace minidl::testing
