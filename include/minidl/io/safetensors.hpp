#pragma once
// Checkpoints in the safetensors format (https://github.com/huggingface/safetensors):
// an 8-byte little-endian header length N, N bytes of JSON mapping each tensor's name to
// {"dtype", "shape", "data_offsets": [begin, end)} (offsets into the data that follows),
// then the raw little-endian data. Names are PyTorch's state_dict names, so a checkpoint
// moves between minidl and PyTorch (torch.load_state_dict(strict=True) takes it).
#include <map>
#include <string>
#include <string_view>

#include "minidl/nn/module.hpp"

namespace minidl::io {

/// Writes every entry (F32; I64 entries such as num_batches_tracked converted from their
/// float values) atomically: a temporary file in the same directory, fsync, rename.
/// Throws minidl::Error on a duplicate name, a non-integral I64 value or a failed write.
void save_safetensors(const std::string& path, const nn::StateDict& state);

/// The header's "__metadata__": string keys to string values, as the format defines it.
using Metadata = std::map<std::string, std::string>;
/// save_safetensors with a "__metadata__" entry (omitted when empty).
void save_safetensors(const std::string& path, const nn::StateDict& state, const Metadata& metadata);

/// Reads a checkpoint written here or by PyTorch's safetensors. A missing, truncated,
/// corrupt, oversized or inconsistent file (header length past the end of the file, bad
/// JSON, an unknown dtype, offsets out of range, overlapping or leaving holes, a shape that
/// does not match its bytes) throws UsageError naming the file and what is wrong; nothing
/// is allocated beyond the file's size. Entries come in the order of their data.
/// F32 and I64 entries load as they are; F64 (what PyTorch's model.double() saves), F16
/// and BF16 entries are converted to float32 (rounded to nearest; F64 values beyond
/// float's range become inf) and come back as F32 entries. Empty tensors may share their
/// offset with the next entry, as the safetensors library writes them.
nn::StateDict load_safetensors(const std::string& path);
/// load_safetensors that also gives the "__metadata__" entry (empty when absent); throws
/// UsageError when it is not an object of strings.
nn::StateDict load_safetensors(const std::string& path, Metadata& metadata);
/// load_safetensors on a file's bytes in memory; `name` stands for the file in messages.
nn::StateDict parse_safetensors(std::string_view bytes, const std::string& name);

}  // namespace minidl::io
