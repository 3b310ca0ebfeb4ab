// Inputs the fuzzers (tests/fuzz) found to break a reader, kept as files under
// tests/regressions/, and the fuzzers' seed corpora run through the readers on every build.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "data/batch_order.hpp"
#include "data/digits.hpp"
#include "minidl/io/safetensors.hpp"
#include "support/check.hpp"

namespace test_regressions {

using namespace minidl;

namespace {

const std::filesystem::path kSource(MINIDL_SOURCE_DIR);

std::string regression(const std::string& name) { return (kSource / "tests/regressions" / name).string(); }

std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// Runs parse on every file of a seed corpus: each gives a value or a UsageError naming it.
template <typename Parse>
void each_seed(const std::string& target, Parse parse) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kSource / "tests/fuzz/corpus" / target)) {
    const std::string name = entry.path().filename().string();
    INFO("seed " << target << "/" << name);
    try {
      parse(read_bytes(entry.path()), name);
    } catch (const UsageError& e) {
      CHECK_THAT(e.what(), Catch::StartsWith(name + ":") || Catch::StartsWith(name + ", line"));
    }
    ++files;
  }
  CHECK(files >= 5);
}

}  // namespace

TEST_CASE("regression: an empty F32 tensor loads without memcpy from a null pointer", "[regression][io]") {
  // fuzz_safetensors, UBSan: memcpy(null, null, 0) for shape [0, 4] (data_offsets [0, 0]).
  nn::StateDict state = io::load_safetensors(regression("safetensors_empty_tensor.safetensors"));
  REQUIRE(state.size() == 1);
  CHECK(state[0].name == "e");
  CHECK(state[0].value.shape() == Shape{0, 4});
  CHECK(state[0].value.numel() == 0);
}

TEST_CASE("regression: an empty tensor whose other sizes overflow int64 is refused", "[regression][io]") {
  // fuzz_safetensors, UBSan: shape [4294967295, 4294967296, 0] passed the reader's uint64
  // size check but overflowed int64 in numel() and the strides.
  const std::string path = regression("safetensors_shape_overflows_int64.safetensors");
  REQUIRE_THROWS_AS(io::load_safetensors(path), UsageError);
  REQUIRE_THROWS_WITH(io::load_safetensors(path),
                      Catch::Contains(path + ": entry \"a\": the shape [4294967295,4294967296,0] is absurdly large"));
}

TEST_CASE("the fuzzers' seed corpora give a value or a UsageError naming the file", "[regression][data][io]") {
  each_seed("digits_csv", [](std::string text, const std::string& name) { data::parse_digits_csv(text, name); });
  each_seed("split_indices",
            [](std::string text, const std::string& name) { data::parse_split_indices(text, name, 1797); });
  each_seed("batch_order",
            [](std::string text, const std::string& name) { data::parse_batch_order(text, name, 10, 2); });
  each_seed("safetensors", [](std::string bytes, const std::string& name) { io::parse_safetensors(bytes, name); });
}

TEST_CASE("the parse-from-memory readers agree with the file readers", "[regression][data][io]") {
  const auto csv = kSource / "tests/fuzz/corpus/digits_csv/valid_3rows.csv";
  data::Digits from_file = data::read_digits_csv(csv.string());
  data::Digits from_text = data::parse_digits_csv(read_bytes(csv), "x");
  CHECK(from_text.images.to_vector() == from_file.images.to_vector());
  CHECK(from_text.labels.to_vector() == std::vector<float>{0.0f, 1.0f, 2.0f});
  CHECK(data::parse_split_indices("3\n1\n", "x", 5) == std::vector<int64_t>{3, 1});
  CHECK(data::parse_batch_order("2 0 1\n", "x", 3, 1) == std::vector<std::vector<int64_t>>{{2, 0, 1}});
  REQUIRE_THROWS_WITH(data::parse_split_indices("7\n", "splits.txt", 5),
                      Catch::Contains("splits.txt, line 1, column 1: row index 7 is out of range"));
  const auto st = kSource / "tests/fuzz/corpus/safetensors/valid_f32_i64.safetensors";
  nn::StateDict state = io::parse_safetensors(read_bytes(st), "x");
  REQUIRE(state.size() == 2);
  CHECK(state[0].value.to_vector() == io::load_safetensors(st.string())[0].value.to_vector());
  CHECK(state[1].dtype == DType::I64);
  CHECK(state[1].value.to_vector() == std::vector<float>{7.0f});
}

}  // namespace test_regressions
