#pragma once
// How a tensor's values are stored in a file. Tensors are float32 in memory; integer
// buffers (BatchNorm's num_batches_tracked) are written as I64, as PyTorch does.

namespace minidl {

enum class DType { F32, I64 };

}  // namespace minidl
