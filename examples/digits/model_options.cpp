#include "model_options.hpp"

#include <algorithm>
#include <limits>

#include "lesson/arch.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::digits {

void add_model_options(cxxopts::Options& options) {
  auto text = [] { return cxxopts::value<std::string>(); };
  options.add_options("Model")(
      "arch",
      "mlp (the lesson's deep tanh net), resmlp-pre or resmlp-post (residual MLP blocks), cnn (3 "
      "convolutions, global average pooling, Linear; docs/cnn.md)",
      text()->default_value("mlp"), "ARCH")("blocks", "residual blocks of a resmlp arch (default 4)", text(), "N")(
      "expansion", "a resmlp block's hidden width over --width (default 4)", text(), "N")(
      "dropout", "Dropout(P) at the end of each resmlp block's MLP, in [0, 1) (default 0)", text(), "P")(
      "init",
      "pytorch (nn.Linear's default), xavier (xavier_uniform_ with the activation's gain) or kaiming "
      "(kaiming_normal_ fan_in), biases 0",
      text()->default_value("pytorch"),
      "SCHEME")("summary-model", "print each model's layers and parameter counts, train nothing");
}

void read_model_options(const cxxopts::ParseResult& args, Settings& s) {
  lesson::ModelOptions& m = s.train.model;
  m.arch = lesson::parse_arch(args["arch"].as<std::string>());
  m.init = lesson::parse_init(args["init"].as<std::string>());
  s.summary_model = args.count("summary-model") > 0;
  const bool residual = m.arch == lesson::Arch::ResMLPPre || m.arch == lesson::Arch::ResMLPPost;
  const int64_t most = std::numeric_limits<int64_t>::max();
  for (const char* name : {"blocks", "expansion", "dropout"})
    if (args.count(name) && !residual)
      throw UsageError(
          cat("--", name, " needs --arch resmlp-pre or resmlp-post (--arch ", lesson::arch_name(m.arch), " has none)"));
  for (const char* name : {"depth", "groups"})
    if (args.count(name) && residual)
      throw UsageError(cat("--", name, " is for --arch mlp; --arch ", lesson::arch_name(m.arch),
                           " takes --blocks, --expansion and --width"));
  for (const char* name : {"depth", "width"})
    if (args.count(name) && m.arch == lesson::Arch::CNN)
      throw UsageError(cat("--", name, " is for --arch mlp and the resmlp archs; --arch cnn has fixed sizes (",
                           "16 and 32 channels, docs/cnn.md)"));
  if (args.count("blocks")) m.blocks = parse_whole("--blocks", args["blocks"].as<std::string>(), 1, most);
  if (args.count("expansion")) m.expansion = parse_whole("--expansion", args["expansion"].as<std::string>(), 1, most);
  if (args.count("dropout")) {
    m.dropout = parse_real("--dropout", args["dropout"].as<std::string>());
    if (!(m.dropout >= 0.0 && m.dropout < 1.0))
      throw UsageError(cat("--dropout must be in [0, 1), got ", args["dropout"].as<std::string>()));
  }
  if (m.init != lesson::InitScheme::PyTorch && !s.init_from_dir.empty())
    throw UsageError(
        cat("--init ", lesson::init_name(m.init), " and --init-from both set the initial weights: give one"));
  if (!residual) return;
  if (!args.count("norm")) s.norms = {lesson::NormKind::Layer};
  for (lesson::NormKind norm : s.norms)
    if (norm != lesson::NormKind::Layer && norm != lesson::NormKind::RMS)
      throw UsageError(
          cat("--arch ", lesson::arch_name(m.arch), " takes --norm layer or rms, got ", lesson::short_name(norm)));
}

}  // namespace minidl::digits
