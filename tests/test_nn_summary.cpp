// nn::summary: the table's rows, counts and totals.
#include <catch2/catch.hpp>

#include "minidl/minidl.hpp"

namespace test_nn_summary {

using namespace minidl;

TEST_CASE("summary lists every module with the parameters it holds, and the totals", "[nn][summary]") {
  nn::Sequential model(nn::Linear(64, 32), nn::PreNormBlock({.width = 32, .expansion = 2}), nn::LayerNorm(32),
                       nn::Linear(32, 10));
  // 64*32+32 = 2080; block: LayerNorm 64, 32*64+64 = 2112, 64*32+32 = 2080; 64; 330.
  const std::string expected =
      "============================================================\n"
      "Layer (type)                                         Param #\n"
      "============================================================\n"
      "Sequential                                                --\n"
      "├─0 (Linear)                                           2,080\n"
      "├─1 (PreNormBlock)                                        --\n"
      "│    └─norm (LayerNorm)                                   64\n"
      "│    └─mlp (Sequential)                                   --\n"
      "│    │    └─0 (Linear)                                 2,112\n"
      "│    │    └─1 (GELU)                                      --\n"
      "│    │    └─2 (Linear)                                 2,080\n"
      "├─2 (LayerNorm)                                           64\n"
      "├─3 (Linear)                                             330\n"
      "============================================================\n"
      "Total params: 6,730\n"
      "Trainable params: 6,730\n"
      "Non-trainable params: 0\n"
      "============================================================\n";
  CHECK(nn::summary(model) == expected);
  CHECK(nn::own_parameter_count(model) == 0);
  CHECK(nn::own_parameter_count(*model[0]) == 2080);
}

TEST_CASE("summary counts a frozen parameter as non-trainable and a shared one once", "[nn][summary]") {
  auto shared = std::make_shared<nn::Linear>(3, 3);
  nn::Sequential model(shared, nn::Tanh(), shared);
  model.at<nn::Linear>(0).bias.requires_grad_(false);
  const std::string table = nn::summary(model);
  CHECK(table.find("Total params: 12\n") != std::string::npos);
  CHECK(table.find("Trainable params: 9\n") != std::string::npos);
  CHECK(table.find("Non-trainable params: 3\n") != std::string::npos);
}

}  // namespace test_nn_summary
