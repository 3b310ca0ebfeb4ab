#include "kernels/conv/conv2d_path.hpp"

#include "kernels/conv/winograd.hpp"

namespace minidl::kernels {

bool winograd_pays(const Conv2dGeometry& g) {
  return winograd_applies(g) && g.in_channels >= kWinogradMinChannels && g.out_channels >= kWinogradMinChannels &&
         g.out_h() >= kWinogradMinSide && g.out_w() >= kWinogradMinSide;
}

Conv2dPath conv2d_path(const Conv2dGeometry& g) { return winograd_pays(g) ? Conv2dPath::Winograd : Conv2dPath::Im2col; }

}  // namespace minidl::kernels
