// `out << module`: the text PyTorch's print(model) shows, the same as repr(). Every expected
// string was printed by PyTorch 1.13 (python3 -c 'print(model)') and pasted here.
#include <catch2/catch.hpp>
#include <memory>
#include <sstream>

#include "minidl/minidl.hpp"

namespace test_nn_print {

using namespace minidl;

namespace {

template <typename M>
std::string printed(const M& module) {
  std::ostringstream out;
  out << module;
  return out.str();
}

// A one-line extra_repr beside a child: PyTorch puts it on a line of its own.
class Scaled : public nn::Module {
 public:
  Scaled() { register_module("inner", std::make_shared<nn::Linear>(2, 2)); }
  Tensor forward(const Tensor& x) override { return x; }
  std::string type_name() const override { return "Scaled"; }
  std::string extra_repr() const override { return "scale=2.0"; }
};

// A two-line extra_repr, without a child ("TwoLines") and with one ("Both"): a line each.
class TwoLines : public nn::Module {
 public:
  explicit TwoLines(bool with_child) : type_(with_child ? "Both" : "TwoLines") {
    if (with_child) register_module("inner", std::make_shared<nn::Tanh>());
  }
  Tensor forward(const Tensor& x) override { return x; }
  std::string type_name() const override { return type_; }
  std::string extra_repr() const override { return "x=1\ny=2"; }

 private:
  std::string type_;
};

}  // namespace

TEST_CASE("A nested model prints as PyTorch's print(model), by reference or by pointer", "[nn][print]") {
  // torch 1.13: print(nn.Sequential(nn.Linear(64, 64), nn.LayerNorm(64), nn.Tanh(),
  //   nn.Sequential(nn.Linear(64, 10, bias=False), nn.BatchNorm1d(10), nn.GELU(approximate="tanh"),
  //                 nn.Dropout(0.1))))
  auto model =
      std::make_shared<nn::Sequential>(nn::Linear(64, 64), nn::LayerNorm(64), nn::Tanh(),
                                       nn::Sequential(nn::Linear(nn::LinearOptions(64, 10).bias(false)),
                                                      nn::BatchNorm1d(10), nn::GELU("tanh"), nn::Dropout(0.1)));
  const std::string expected =
      "Sequential(\n"
      "  (0): Linear(in_features=64, out_features=64, bias=True)\n"
      "  (1): LayerNorm((64,), eps=1e-05, elementwise_affine=True)\n"
      "  (2): Tanh()\n"
      "  (3): Sequential(\n"
      "    (0): Linear(in_features=64, out_features=10, bias=False)\n"
      "    (1): BatchNorm1d(10, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)\n"
      "    (2): GELU(approximate='tanh')\n"
      "    (3): Dropout(p=0.1, inplace=False)\n"
      "  )\n"
      ")";
  CHECK(printed(*model) == expected);
  CHECK(printed(model) == expected);  // the tree, not the address shared_ptr's << prints
  CHECK(model->repr() == expected);
  CHECK(printed(std::shared_ptr<nn::Sequential>()) == "nullptr");
  // A layer prints through its base class too, as the library's containers hold it.
  const nn::Module& layer = *(*model)[1];
  CHECK(printed(layer) == "LayerNorm((64,), eps=1e-05, elementwise_affine=True)");
}

TEST_CASE("extra_repr beside children, and over several lines, prints as PyTorch's", "[nn][print]") {
  // torch 1.13: print(nn.Sequential(Scaled(), TwoLines(), Both())), Python modules with the
  // same children and extra_repr.
  nn::Sequential model(std::make_shared<Scaled>(), std::make_shared<TwoLines>(false), std::make_shared<TwoLines>(true));
  CHECK(printed(model) ==
        "Sequential(\n"
        "  (0): Scaled(\n"
        "    scale=2.0\n"
        "    (inner): Linear(in_features=2, out_features=2, bias=True)\n"
        "  )\n"
        "  (1): TwoLines(\n"
        "    x=1\n"
        "    y=2\n"
        "  )\n"
        "  (2): Both(\n"
        "    x=1\n"
        "    y=2\n"
        "    (inner): Tanh()\n"
        "  )\n"
        ")");
}

TEST_CASE("TransformerEncoder prints its repeated layers once, as PyTorch 2.x's ModuleList",
          "[nn][print][transformer]") {
  // torch 1.13: print(nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, dim_feedforward=16), 2,
  // norm=nn.LayerNorm(8))), with ModuleList.__repr__ replaced by 2.x's:
  // 1.13 itself prints "(0): TransformerEncoderLayer(" and "(1): ..." in full
  // (docs/pytorch-differences.md).
  nn::TransformerEncoder encoder(nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16), 2,
                                 std::make_shared<nn::LayerNorm>(8));
  CHECK(printed(encoder) ==
        "TransformerEncoder(\n"
        "  (layers): ModuleList(\n"
        "    (0-1): 2 x TransformerEncoderLayer(\n"
        "      (self_attn): MultiheadAttention(\n"
        "        (out_proj): NonDynamicallyQuantizableLinear(in_features=8, out_features=8, bias=True)\n"
        "      )\n"
        "      (linear1): Linear(in_features=8, out_features=16, bias=True)\n"
        "      (dropout): Dropout(p=0.1, inplace=False)\n"
        "      (linear2): Linear(in_features=16, out_features=8, bias=True)\n"
        "      (norm1): LayerNorm((8,), eps=1e-05, elementwise_affine=True)\n"
        "      (norm2): LayerNorm((8,), eps=1e-05, elementwise_affine=True)\n"
        "      (dropout1): Dropout(p=0.1, inplace=False)\n"
        "      (dropout2): Dropout(p=0.1, inplace=False)\n"
        "    )\n"
        "  )\n"
        "  (norm): LayerNorm((8,), eps=1e-05, elementwise_affine=True)\n"
        ")");
  // One layer is no run: "(0): TransformerEncoderLayer(" as in 1.13.
  nn::TransformerEncoder single(nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16), 1);
  CHECK(
      printed(single).starts_with("TransformerEncoder(\n  (layers): ModuleList(\n    (0): TransformerEncoderLayer(\n"));
}

}  // namespace test_nn_print
