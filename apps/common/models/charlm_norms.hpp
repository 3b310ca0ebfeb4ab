#pragma once
// The norms a transformer block of charlm can use (--norm), each a module over (B, T, C)
// activations whose state_dict names are PyTorch's for that norm:
//   layer         LayerNorm(C), eps 1e-5
//   rms           RMSNorm(C), eps = float32's machine epsilon (PyTorch 2.x's None)
//   batch         BatchNorm1d(C) over (B, C, T): statistics over every position, padding too
//   batch-masked  BatchNorm1d(C) over the (M, C) rows of the M real positions only; the
//                 padding positions' outputs are zero
//   none          the identity, no state
// In eval mode both BatchNorms normalize each position with the running statistics.
#include <memory>
#include <string>
#include <vector>

#include "minidl/minidl.hpp"
#include "models/norm_kind.hpp"

namespace minidl::charlm {

using apps::NormKind;
using apps::short_name;
constexpr NormKind kNorms[] = {NormKind::Layer,       NormKind::RMS,  NormKind::Batch,
                               NormKind::BatchMasked, NormKind::None, NormKind::DyT};
enum class Position { Pre, Post };  // x + f(norm(x)), or norm(x + f(x))

std::string short_name(Position position);  // "pre", "post"
/// The norm of kNorms named `name`; UsageError listing them otherwise.
inline NormKind parse_norm(const std::string& name) { return apps::parse_norm(name, kNorms, "--norm: "); }
Position parse_position(const std::string& name);

/// Which of a batch's B x T positions hold a token (the rest are padding): a forward argument
/// of the model, its blocks and their norms.
struct TokenMask {
  Tensor real_rows;    // (M) flat positions b * T + t of the real tokens, in order
  Tensor output_rows;  // (B * T) for each position its row among the M real ones, M for padding
};

/// A fresh norm of `kind` over C channels. sync (--sync-bn): batch and batch-masked as
/// SyncBatchNorm, their statistics over every rank's positions (or real positions): BatchNorm
/// over the global batch.
std::shared_ptr<nn::Module> make_norm(NormKind kind, int64_t channels, bool sync = false);
/// norm(x) for x (B, T, C), through the norm's hooks. A batch-masked norm takes the mask
/// (null: every position real) and normalizes the real positions only; the others need none.
Tensor normalize(nn::Module& norm, const Tensor& x, const TokenMask* mask);

}  // namespace minidl::charlm
