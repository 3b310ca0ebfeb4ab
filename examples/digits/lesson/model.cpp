#include "lesson/model.hpp"

#include "lesson/cnn.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::lesson {

std::shared_ptr<nn::Sequential> build_model(NormKind norm, const DeepNetOptions& options, Generator& gen) {
  switch (options.arch) {
    case Arch::CNN:
      return cnn_net(norm, options, gen);
    case Arch::MLP:
      break;
  }
  return deep_net(norm, options, gen);
}

void check_model_options(NormKind norm, const DeepNetOptions& options) {
  switch (options.arch) {
    case Arch::CNN:
      return check_cnn_options(norm, options);
    case Arch::MLP:
      break;
  }
  check_deep_net_options(norm, options);
}

std::string model_label(NormKind norm, const DeepNetOptions& options) {
  return cat(options.arch == Arch::CNN ? "cnn(" : "deep_net(", short_name(norm), ")");
}

}  // namespace minidl::lesson
