#pragma once
// Pooling layers, PyTorch's nn.MaxPool2d, nn.AvgPool2d and nn.AdaptiveAvgPool2d: no
// parameters; (N, C, H, W) or (C, H, W) input.
#include "minidl/nn/module.hpp"
#include "minidl/ops/size2.hpp"

namespace minidl::nn {

/// MaxPool2dOptions(2).stride(1).padding(1); stride defaults to kernel_size.
struct MaxPool2dOptions {
  MaxPool2dOptions(Size2 kernel_size) : kernel_size(kernel_size), stride_(kernel_size) {}  // NOLINT: implicit
  MaxPool2dOptions& stride(Size2 v) { return stride_ = v, *this; }
  MaxPool2dOptions& padding(Size2 v) { return padding_ = v, *this; }
  MaxPool2dOptions& dilation(Size2 v) { return dilation_ = v, *this; }
  Size2 stride() const { return stride_; }
  Size2 padding() const { return padding_; }
  Size2 dilation() const { return dilation_; }

  Size2 kernel_size;

 private:
  Size2 stride_;        // stride=None: kernel_size
  Size2 padding_ = 0;   // padding=0 (-inf), at most half the kernel
  Size2 dilation_ = 1;  // dilation=1
};

class MaxPool2d : public Module {
 public:
  explicit MaxPool2d(MaxPool2dOptions options) : options_(options) {}
  /// MaxPool2d(2), MaxPool2d({2, 3}): stride = kernel_size, no padding.
  explicit MaxPool2d(Size2 kernel_size) : MaxPool2d(MaxPool2dOptions(kernel_size)) {}
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "MaxPool2d"; }
  std::string extra_repr() const override;
  const MaxPool2dOptions& options() const { return options_; }

 private:
  MaxPool2dOptions options_;
};

/// AvgPool2dOptions(3).stride(2).padding(1).count_include_pad(false).
struct AvgPool2dOptions {
  AvgPool2dOptions(Size2 kernel_size) : kernel_size(kernel_size), stride_(kernel_size) {}  // NOLINT: implicit
  AvgPool2dOptions& stride(Size2 v) { return stride_ = v, *this; }
  AvgPool2dOptions& padding(Size2 v) { return padding_ = v, *this; }
  AvgPool2dOptions& count_include_pad(bool v) { return count_include_pad_ = v, *this; }
  Size2 stride() const { return stride_; }
  Size2 padding() const { return padding_; }
  bool count_include_pad() const { return count_include_pad_; }

  Size2 kernel_size;

 private:
  Size2 stride_;                   // stride=None: kernel_size
  Size2 padding_ = 0;              // padding=0 (zeros), at most half the kernel
  bool count_include_pad_ = true;  // count_include_pad=True: padding counts in the divisor
};

class AvgPool2d : public Module {
 public:
  explicit AvgPool2d(AvgPool2dOptions options) : options_(options) {}
  /// AvgPool2d(2): stride = kernel_size, no padding.
  explicit AvgPool2d(Size2 kernel_size) : AvgPool2d(AvgPool2dOptions(kernel_size)) {}
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "AvgPool2d"; }
  std::string extra_repr() const override;
  const AvgPool2dOptions& options() const { return options_; }

 private:
  AvgPool2dOptions options_;
};

/// Output (..., output_size.h, output_size.w) whatever the input's H and W; (1, 1) is
/// global average pooling.
class AdaptiveAvgPool2d : public Module {
 public:
  explicit AdaptiveAvgPool2d(Size2 output_size) : output_size_(output_size) {}
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "AdaptiveAvgPool2d"; }
  std::string extra_repr() const override;
  Size2 output_size() const { return output_size_; }

 private:
  Size2 output_size_;
};

}  // namespace minidl::nn
