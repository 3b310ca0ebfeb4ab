// nn::ModuleList and nn::ModuleDict as torch.nn's: names in the state_dict, indexing, size,
// iteration, typed access, printing (ModuleList's runs grouped as 2.x) and their errors.
#include <catch2/catch.hpp>
#include <memory>
#include <sstream>

#include "minidl/minidl.hpp"

namespace test_nn_containers {

using namespace minidl;
using Catch::Contains;

namespace {

std::vector<std::string> state_names(const nn::Module& module) {
  std::vector<std::string> names;
  for (const nn::StateEntry& e : module.state_dict()) names.push_back(e.name);
  return names;
}

}  // namespace

TEST_CASE("ModuleList: names 0, 1, ..., indexing from either end, iteration and typed access", "[nn][containers]") {
  nn::ModuleList list;
  const auto first = list.append(std::make_shared<nn::Linear>(2, 3));
  list.append(std::make_shared<nn::Tanh>());
  CHECK(list.size() == 2);
  CHECK(state_names(list) == std::vector<std::string>{"0.weight", "0.bias"});
  CHECK(list[0] == first);
  CHECK(list[-1]->type_name() == "Tanh");
  CHECK(&list.at<nn::Linear>(0) == first.get());
  std::vector<std::string> types;
  for (const auto& module : list) types.push_back(module->type_name());
  CHECK(types == std::vector<std::string>{"Linear", "Tanh"});
  REQUIRE_THROWS_WITH(list[2], Contains("ModuleList: index 2 is out of range for a ModuleList of size 2"));
  REQUIRE_THROWS_WITH(list[-3], Contains("ModuleList: index -3 is out of range for a ModuleList of size 2"));
  REQUIRE_THROWS_WITH(list.at<nn::Linear>(1), Contains("ModuleList::at: module 1 is a Tanh, not the type asked for"));
  REQUIRE_THROWS_WITH(list.forward(Tensor::zeros({1, 2})),
                      Contains("ModuleList: it has no forward; call its modules one by one"));
}

TEST_CASE("ModuleDict: children under their keys, in insertion order", "[nn][containers]") {
  nn::ModuleDict dict;
  dict.insert("wte", std::make_shared<nn::Embedding>(3, 2));
  const auto head = dict.insert("lm_head", std::make_shared<nn::Linear>(nn::LinearOptions(2, 3).bias(false)));
  CHECK(dict.size() == 2);
  CHECK(dict.keys() == std::vector<std::string>{"wte", "lm_head"});
  CHECK(state_names(dict) == std::vector<std::string>{"wte.weight", "lm_head.weight"});
  CHECK(dict.contains("wte"));
  CHECK(!dict.contains("wpe"));
  CHECK(dict["lm_head"] == head);
  CHECK(&dict.at<nn::Linear>("lm_head") == head.get());
  REQUIRE_THROWS_WITH(dict["wpe"], Contains("ModuleDict: no module under the key \"wpe\"; its keys: wte, lm_head"));
  REQUIRE_THROWS_WITH(dict.at<nn::Linear>("wte"),
                      Contains("ModuleDict::at: module \"wte\" is a Embedding, not the type asked for"));
  REQUIRE_THROWS_WITH(dict.insert("wte", std::make_shared<nn::Tanh>()),
                      Contains("ModuleDict::insert: the key \"wte\" is taken"));
  REQUIRE_THROWS_WITH(dict.forward(Tensor::zeros({1})),
                      Contains("ModuleDict: it has no forward; call its modules one by one"));
}

TEST_CASE("ModuleDict and ModuleList print as PyTorch 2.x's", "[nn][containers][print]") {
  // torch: print(nn.ModuleDict({"wte": nn.Embedding(3, 2), "h": nn.ModuleList([nn.Linear(2, 2),
  // nn.Linear(2, 2), nn.Tanh()])})); 2.x groups the ModuleList's run (1.13 prints (0) and (1)).
  nn::ModuleDict dict;
  dict.insert("wte", std::make_shared<nn::Embedding>(3, 2));
  auto h = dict.insert("h", std::make_shared<nn::ModuleList>());
  h->append(std::make_shared<nn::Linear>(2, 2));
  h->append(std::make_shared<nn::Linear>(2, 2));
  h->append(std::make_shared<nn::Tanh>());
  std::ostringstream out;
  out << dict;
  CHECK(out.str() ==
        "ModuleDict(\n"
        "  (wte): Embedding(3, 2)\n"
        "  (h): ModuleList(\n"
        "    (0-1): 2 x Linear(in_features=2, out_features=2, bias=True)\n"
        "    (2): Tanh()\n"
        "  )\n"
        ")");
}

}  // namespace test_nn_containers
