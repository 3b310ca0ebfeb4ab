#include "kernels/conv/conv2d_path.hpp"

#include <atomic>

#include "kernels/conv/winograd.hpp"

namespace minidl::kernels {

namespace {
constexpr int kRule = -1;
std::atomic<int> forced_path{kRule};  // a Conv2dPath, or kRule
}  // namespace

bool winograd_pays(const Conv2dGeometry& g) {
  return winograd_applies(g) && g.in_channels >= kWinogradMinChannels && g.out_channels >= kWinogradMinChannels &&
         g.out_h() >= kWinogradMinSide && g.out_w() >= kWinogradMinSide;
}

Conv2dPath conv2d_path(const Conv2dGeometry& g) {
  const int forced = forced_path.load();
  if (forced == kRule) return winograd_pays(g) ? Conv2dPath::Winograd : Conv2dPath::Im2col;
  return Conv2dPath(forced) == Conv2dPath::Winograd && winograd_applies(g) ? Conv2dPath::Winograd : Conv2dPath::Im2col;
}

void force_conv2d_path(std::optional<Conv2dPath> path) { forced_path.store(path ? int(*path) : kRule); }

}  // namespace minidl::kernels
