#pragma once
// The norm layers the programs train with, by the names their --norm options take. Each
// program accepts its own list of them (parse_norm's `allowed`).
#include <span>
#include <string>

namespace minidl::apps {

/// Batch: BatchNorm; BatchMasked: BatchNorm over a sequence's real positions only (charlm);
/// Instance: GroupNorm with one channel a group (the digits CNN); DyT: no statistics, the
/// elementwise tanh that replaces a norm (nn::DyT).
enum class NormKind { None, Batch, Layer, RMS, Group, Instance, BatchMasked, DyT };

/// "none", "batch", "layer", "rms", "group", "instance", "batch-masked", "dyt".
std::string short_name(NormKind norm);
/// The norm of `allowed` named `name`; UsageError listing `allowed` otherwise, after `option`
/// ("--norm: ") when given.
NormKind parse_norm(const std::string& name, std::span<const NormKind> allowed, const std::string& option = "");

}  // namespace minidl::apps
