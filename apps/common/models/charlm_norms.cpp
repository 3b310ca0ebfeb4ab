#include "models/charlm_norms.hpp"

#if MINIDL_WITH_MPI
#include "minidl/distributed/sync_batch_norm.hpp"
#endif

namespace minidl::charlm {

namespace {

// No normalization: (B, T, C) in, the same tensor out.
class Identity : public nn::Module {
 public:
  Tensor forward(const Tensor& x) override { return x; }
  std::string type_name() const override { return "Identity"; }
};

// BatchNorm1d(C) on (B, T, C) as PyTorch applies it to (B, C, T): x.transpose(1, 2), norm,
// back. Its statistics mix every position of every sequence, padding included. Batch is
// nn::BatchNorm1d, or SyncBatchNorm (--sync-bn): the statistics of every rank's positions.
template <typename Batch>
class ChannelsLastBatchNorm : public Batch {
 public:
  explicit ChannelsLastBatchNorm(int64_t channels) : Batch(channels) {}
  Tensor forward(const Tensor& x) override { return permute(Batch::forward(permute(x, {0, 2, 1})), {0, 2, 1}); }
};

// The norms whose forward takes the batch's mask.
class TakesMask {
 public:
  virtual ~TakesMask() = default;
  virtual Tensor forward(const Tensor& x, const TokenMask& mask) = 0;
};

// BatchNorm1d(C) on the real positions' rows only: gathered (M, C), normalized, and put back
// in place, padding rows zero (a zero row appended, then gathered again), so the gradient
// reaches exactly the real positions. Without a mask, on every position's row. As
// SyncBatchNorm: the real rows of every rank.
template <typename Batch>
class MaskedBatchNorm : public Batch, public TakesMask {
 public:
  explicit MaskedBatchNorm(int64_t channels) : Batch(channels) {}
  Tensor forward(const Tensor& x) override { return Batch::forward(x.reshape({-1, x.size(-1)})).reshape(x.shape()); }
  Tensor forward(const Tensor& x, const TokenMask& mask) override {
    const int64_t channels = x.size(-1);
    const Tensor real = embedding(mask.real_rows, x.reshape({-1, channels}));  // (M, C)
    const Tensor normed = Batch::forward(real);                                // (M, C)
    const Tensor with_zero = cat({normed, Tensor::zeros({1, channels})}, 0);   // (M+1, C)
    return embedding(mask.output_rows, with_zero).reshape(x.shape());
  }
};

template <typename Batch>
std::shared_ptr<nn::Module> make_batch_norm(NormKind kind, int64_t channels) {
  if (kind == NormKind::Batch) return std::make_shared<ChannelsLastBatchNorm<Batch>>(channels);
  return std::make_shared<MaskedBatchNorm<Batch>>(channels);
}

}  // namespace

std::string short_name(Position position) { return position == Position::Pre ? "pre" : "post"; }

Position parse_position(const std::string& name) {
  if (name == "pre") return Position::Pre;
  if (name == "post") return Position::Post;
  throw UsageError(cat("--norm-position: unknown position \"", name, "\": choose from pre, post"));
}

std::shared_ptr<nn::Module> make_norm(NormKind kind, int64_t channels, bool sync) {
  if (sync && (kind == NormKind::Batch || kind == NormKind::BatchMasked)) {
#if MINIDL_WITH_MPI
    return make_batch_norm<distributed::SyncBatchNorm>(kind, channels);
#else
    throw Error("charlm: SyncBatchNorm needs minidl built with MPI");
#endif
  }
  switch (kind) {
    case NormKind::Layer:
      return std::make_shared<nn::LayerNorm>(channels);
    case NormKind::RMS:
      return std::make_shared<nn::RMSNorm>(channels);
    case NormKind::DyT:
      return std::make_shared<nn::DyT>(channels);
    case NormKind::Batch:
    case NormKind::BatchMasked:
      return make_batch_norm<nn::BatchNorm1d>(kind, channels);
    default:  // None; the digits' Group and Instance are not charlm's
      return std::make_shared<Identity>();
  }
}

Tensor normalize(nn::Module& norm, const Tensor& x, const TokenMask* mask) {
  auto* masked = mask ? dynamic_cast<TakesMask*>(&norm) : nullptr;
  if (!masked) return norm(x);
  return norm.call(x, [&](const Tensor& in) { return masked->forward(in, *mask); });
}

}  // namespace minidl::charlm
