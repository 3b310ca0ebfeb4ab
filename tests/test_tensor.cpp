// Tensor: factories, random streams, views, element access, copying, printing.
#include <cmath>
#include <cstdint>

#include "support/check.hpp"

namespace test_tensor {

using namespace minidl;
using Catch::Contains;
using minidl::testing::check_close;

TEST_CASE("constant factories fill the requested shape", "[tensor]") {
  Tensor z = Tensor::zeros({2, 3});
  CHECK(z.shape() == Shape{2, 3});
  CHECK(z.numel() == 6);
  CHECK(z.dim() == 2);
  check_close(z, std::vector<float>(6, 0.0f), 0, 0);
  check_close(Tensor::ones({4}), std::vector<float>(4, 1.0f), 0, 0);
  check_close(Tensor::full({3, 1}, -2.5f), std::vector<float>(3, -2.5f), 0, 0);
  Tensor s = Tensor::scalar(7.0f);
  CHECK(s.dim() == 0);
  CHECK(s.numel() == 1);
  CHECK(s.item() == 7.0f);
  CHECK(Tensor::zeros({0, 5}).numel() == 0);
  REQUIRE_THROWS_WITH(Tensor::zeros({2, -1}), Contains("negative dimension in shape [2, -1]"));
}

TEST_CASE("a shape whose element count overflows, or too large to allocate, is an error naming it", "[tensor]") {
  const int64_t huge = int64_t(1) << 62;
  REQUIRE_THROWS_WITH(Tensor::zeros({huge, 4}),
                      Contains("shape [4611686018427387904, 4] has more elements than a 64-bit count can hold"));
  REQUIRE_THROWS_WITH(numel(Shape{huge, huge}), Contains("more elements than a 64-bit count can hold"));
  REQUIRE_THROWS_WITH(Tensor::empty({huge}),
                      Contains("cannot allocate a tensor of shape [4611686018427387904]") && Contains(" bytes, "));
  REQUIRE_THROWS_WITH(Tensor::empty({int64_t(1) << 45}),  // 128 TiB: more than any machine here
                      Contains("cannot allocate a tensor of shape [35184372088832]: 35184372088832 floats (") &&
                          Contains("GiB) is more memory than this machine gives"));
  CHECK(Tensor::empty({huge, 0}).numel() == 0);  // zero elements: nothing to allocate
}

TEST_CASE("arange counts like torch.arange", "[tensor]") {
  check_close(Tensor::arange(5), {0, 1, 2, 3, 4}, 0, 0);
  check_close(Tensor::arange(1.0f, 2.0f, 0.25f), {1.0f, 1.25f, 1.5f, 1.75f}, 0, 0);
  check_close(Tensor::arange(3.0f, 0.0f, -1.0f), {3, 2, 1}, 0, 0);
  CHECK(Tensor::arange(0.0f, 1.0f, 0.3f).numel() == 4);  // 0, 0.3, 0.6, 0.9
  CHECK(Tensor::arange(1.0f, 1.0f).numel() == 0);
  // PyTorch refuses a step that moves away from the end instead of returning nothing.
  REQUIRE_THROWS_WITH(Tensor::arange(1.0f, 0.0f, 1.0f),
                      Contains("upper bound and larger bound inconsistent with step sign"));
  REQUIRE_THROWS_WITH(Tensor::arange(0.0f, 1.0f, -1.0f),
                      Contains("upper bound and larger bound inconsistent with step sign"));
  REQUIRE_THROWS_WITH(Tensor::arange(2.0f, 1.0f), Contains("upper bound and larger bound inconsistent with step sign"));
  REQUIRE_THROWS_WITH(Tensor::arange(0.0f, 1.0f, 0.0f), Contains("step must be nonzero"));
}

TEST_CASE("from_vector keeps row-major order and checks the count", "[tensor]") {
  Tensor t = Tensor::from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(t.at({0, 2}) == 3.0f);
  CHECK(t.at({1, 0}) == 4.0f);
  CHECK(Tensor::from_vector({1, 2, 3}).shape() == Shape{3});
  REQUIRE_THROWS_WITH(Tensor::from_vector({1, 2, 3}, {2, 2}), Contains("shape [2, 2] needs 4 values, got 3"));
}

TEST_CASE("Generator(0) produces the pinned PCG32 stream", "[tensor]") {
  // Values from an independent PCG32 (pcg32_srandom_r(0x853c49e6748fea9b ^ seed, seed)).
  Generator gen(0);
  CHECK(gen.next_u32() == 1774745655u);
  CHECK(gen.next_u32() == 1721023772u);
  CHECK(gen.next_u32() == 2742778566u);
  CHECK(gen.next_u32() == 1462576236u);
  Generator uniform(0);
  CHECK(uniform.uniform() == 0.41321516036987305f);
  CHECK(uniform.uniform() == 0.40070706605911255f);
  Generator normal(0);  // Box-Muller on the first two draws: cos, then the spare sin
  CHECK(normal.normal() == Approx(-1.0790502727471312).epsilon(1e-6));
  CHECK(normal.normal() == Approx(0.7766750609467679).epsilon(1e-6));
  // manual_seed restarts the stream.
  gen.manual_seed(0);
  CHECK(gen.next_u32() == 1774745655u);
}

TEST_CASE("random factories: same seed same numbers, different seed different", "[tensor]") {
  auto draw = [](uint64_t seed) {
    Generator gen(seed);
    return std::vector<std::vector<float>>{Tensor::rand({50}, gen).to_vector(), Tensor::randn({50}, gen).to_vector(),
                                           Tensor::randint(0, 1000, {50}, gen).to_vector()};
  };
  auto a = draw(7), b = draw(7), c = draw(8);
  for (size_t k = 0; k < 3; ++k) {
    CHECK(a[k] == b[k]);
    CHECK(a[k] != c[k]);
  }
  // The process-wide generator follows manual_seed.
  manual_seed(3);
  std::vector<float> first = Tensor::rand({5}, default_generator()).to_vector();
  manual_seed(3);
  CHECK(Tensor::rand({5}, default_generator()).to_vector() == first);
}

TEST_CASE("rand and randint stay at or above low and below high", "[tensor]") {
  Generator gen(1);
  Tensor u = Tensor::rand({10000}, gen, -2.0f, 3.0f);
  float lo = 1e9f, hi = -1e9f;
  for (float v : u.to_vector()) lo = std::min(lo, v), hi = std::max(hi, v);
  CHECK(lo >= -2.0f);
  CHECK(hi < 3.0f);
  CHECK(lo < -1.99f);
  CHECK(hi > 2.99f);
  Tensor r = Tensor::randint(-3, 4, {10000}, gen);
  std::vector<int> counts(7, 0);
  for (float v : r.to_vector()) {
    REQUIRE(v == std::floor(v));
    REQUIRE(v >= -3.0f);
    REQUIRE(v < 4.0f);
    counts[size_t(v + 3)]++;
  }
  for (int n : counts) CHECK(n > 1200);  // each of 7 values about 1429 times
  REQUIRE_THROWS_WITH(Tensor::randint(5, 5, {2}, gen), Contains("expected low < high, got low 5, high 5"));
}

TEST_CASE("randn has the requested mean and standard deviation", "[tensor]") {
  Generator gen(2);
  Tensor x = Tensor::randn({100000}, gen, 3.0f, 2.0f);
  double s = 0, s2 = 0;
  for (float v : x.to_vector()) s += v, s2 += double(v) * v;
  const double mean = s / 1e5, std = std::sqrt(s2 / 1e5 - mean * mean);
  CHECK(mean == Approx(3.0).margin(0.03));
  CHECK(std == Approx(2.0).margin(0.03));
}

TEST_CASE("data() is 64-byte aligned", "[tensor]") {
  for (int64_t n : {1, 3, 17, 1000, 4097}) {
    Tensor t = Tensor::empty({n});
    CHECK(reinterpret_cast<std::uintptr_t>(t.data()) % 64 == 0);
  }
}

TEST_CASE("reshape is a view that shares storage", "[tensor]") {
  Tensor t = Tensor::arange(6);
  Tensor v = t.reshape({2, 3});
  CHECK(v.shape() == Shape{2, 3});
  CHECK(v.data() == t.data());
  v.set({1, 2}, 42.0f);
  CHECK(t.at({5}) == 42.0f);
  CHECK(t.reshape({3, -1}).shape() == Shape{3, 2});
  CHECK(t.reshape({-1}).shape() == Shape{6});
  CHECK(Tensor::scalar(1.0f).reshape({1, 1}).shape() == Shape{1, 1});
  CHECK(reshape(t, {1, 6, 1}).shape() == Shape{1, 6, 1});
  REQUIRE_THROWS_WITH(t.reshape({4, 2}), Contains("shape [4, 2] is invalid for input of shape [6] (6 elements)"));
  REQUIRE_THROWS_WITH(t.reshape({4, -1}), Contains("shape [4, -1] is invalid for input of shape [6]"));
  REQUIRE_THROWS_WITH(t.reshape({-1, -1}), Contains("only one dimension can be -1, got [-1, -1]"));
  REQUIRE_THROWS_WITH(t.reshape({-2, 3}), Contains("reshape: invalid shape [-2, 3]"));
}

TEST_CASE("element access, item and their errors", "[tensor]") {
  Tensor t = Tensor::from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(t.at({1, 1}) == 5.0f);
  t.set({0, 1}, -1.0f);
  CHECK(t.to_vector() == std::vector<float>{1, -1, 3, 4, 5, 6});
  CHECK(t.size(0) == 2);
  CHECK(t.size(-1) == 3);
  REQUIRE_THROWS_WITH(t.at({2, 0}), Contains("index 2 is out of bounds for dimension 0 with size 2 (shape [2, 3])"));
  REQUIRE_THROWS_WITH(t.at({0, -4}), Contains("index -4 is out of bounds for dimension 1 with size 3"));
  REQUIRE_THROWS_WITH(t.at({-3, 0}), Contains("index -3 is out of bounds for dimension 0 with size 2"));
  REQUIRE_THROWS_WITH(t.set({0, 3}, 1.0f), Contains("index 3 is out of bounds for dimension 1"));
  REQUIRE_THROWS_WITH(t.at({1}), Contains("index [1] has 1 entries but the tensor of shape [2, 3] has 2 dimensions"));
  REQUIRE_THROWS_WITH(t.size(2), Contains("dimension out of range (expected to be in range of [-2, 1], but got 2)"));
  REQUIRE_THROWS_WITH(t.item(), Contains("expected a tensor with one element, got shape [2, 3]"));
  CHECK(Tensor::full({1, 1}, 4.0f).item() == 4.0f);
  REQUIRE_THROWS_WITH(Tensor().shape(), Contains("undefined tensor"));
}

TEST_CASE("clone copies, copy_ and fill_ write in place", "[tensor]") {
  Tensor t = Tensor::from_vector({1, 2, 3, 4}, {2, 2});
  Tensor c = t.clone();
  CHECK(c.data() != t.data());
  c.set({0, 0}, 9.0f);
  CHECK(t.at({0, 0}) == 1.0f);
  Tensor dst = Tensor::zeros({2, 2});
  float* before = dst.data();
  dst.copy_(t);
  CHECK(dst.data() == before);
  CHECK(dst.to_vector() == t.to_vector());
  dst.fill_(0.5f);
  check_close(dst, {0.5f, 0.5f, 0.5f, 0.5f}, 0, 0);
  REQUIRE_THROWS_WITH(dst.copy_(Tensor::zeros({4})), Contains("expected a source of shape [2, 2], got [4]"));
}

TEST_CASE("detach shares storage and drops the graph", "[tensor][autograd]") {
  Tensor x = Tensor::ones({3}).requires_grad_();
  Tensor y = x * 2.0f;
  Tensor d = y.detach();
  CHECK(d.data() == y.data());
  CHECK_FALSE(d.requires_grad());
  CHECK(d.grad_fn() == nullptr);
  CHECK(d.is_leaf());
}

TEST_CASE("printing matches PyTorch", "[tensor]") {
  // Expected strings printed by PyTorch 1.13 for the same values.
  CHECK(Tensor::from_vector({1, 2, 3}).to_string() == "tensor([1., 2., 3.])");
  CHECK(Tensor::from_vector({1.5f, -2, 3, 4.25f}, {2, 2}).to_string() ==
        "tensor([[ 1.5000, -2.0000],\n        [ 3.0000,  4.2500]])");
  CHECK(Tensor::scalar(3.5f).to_string() == "tensor(3.5000)");
  CHECK(Tensor::scalar(3.0f).to_string() == "tensor(3.)");
  CHECK(Tensor::arange(8).reshape({2, 2, 2}).to_string() ==
        "tensor([[[0., 1.],\n         [2., 3.]],\n\n        [[4., 5.],\n         [6., 7.]]])");
  CHECK(Tensor::zeros({0, 3}).to_string() == "tensor([], size=(0, 3))");
  CHECK(Tensor::zeros({0}).to_string() == "tensor([])");
  CHECK(Tensor::from_vector({1e-5f, 1}).to_string() == "tensor([1.0000e-05, 1.0000e+00])");
  CHECK(Tensor::from_vector({1e9f, 1}).to_string() == "tensor([1.0000e+09, 1.0000e+00])");
  CHECK(Tensor::from_vector({NAN, 1.5f, INFINITY}).to_string() == "tensor([   nan, 1.5000,    inf])");
  CHECK(Tensor::from_vector({NAN, 1, -INFINITY}).to_string() == "tensor([nan, 1., -inf])");
  CHECK((Tensor::arange(30) / 7.0f).to_string() ==
        "tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000, 1.1429,\n"
        "        1.2857, 1.4286, 1.5714, 1.7143, 1.8571, 2.0000, 2.1429, 2.2857, 2.4286,\n"
        "        2.5714, 2.7143, 2.8571, 3.0000, 3.1429, 3.2857, 3.4286, 3.5714, 3.7143,\n"
        "        3.8571, 4.0000, 4.1429])");
  CHECK(Tensor::arange(2000).to_string() ==
        "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n        1.9990e+03])");
  Tensor big = Tensor::arange(1100) + 1000.0f;  // over the threshold: summarized
  CHECK(big.reshape({100, 11}).to_string() ==
        "tensor([[1000., 1001., 1002.,  ..., 1008., 1009., 1010.],\n"
        "        [1011., 1012., 1013.,  ..., 1019., 1020., 1021.],\n"
        "        [1022., 1023., 1024.,  ..., 1030., 1031., 1032.],\n"
        "        ...,\n"
        "        [2067., 2068., 2069.,  ..., 2075., 2076., 2077.],\n"
        "        [2078., 2079., 2080.,  ..., 2086., 2087., 2088.],\n"
        "        [2089., 2090., 2091.,  ..., 2097., 2098., 2099.]])");
  CHECK(big.reshape({10, 10, 11}).to_string() ==
        "tensor([[[1000., 1001., 1002.,  ..., 1008., 1009., 1010.],\n"
        "         [1011., 1012., 1013.,  ..., 1019., 1020., 1021.],\n"
        "         [1022., 1023., 1024.,  ..., 1030., 1031., 1032.],\n"
        "         ...,\n"
        "         [1077., 1078., 1079.,  ..., 1085., 1086., 1087.],\n"
        "         [1088., 1089., 1090.,  ..., 1096., 1097., 1098.],\n"
        "         [1099., 1100., 1101.,  ..., 1107., 1108., 1109.]],\n"
        "\n"
        "        [[1110., 1111., 1112.,  ..., 1118., 1119., 1120.],\n"
        "         [1121., 1122., 1123.,  ..., 1129., 1130., 1131.],\n"
        "         [1132., 1133., 1134.,  ..., 1140., 1141., 1142.],\n"
        "         ...,\n"
        "         [1187., 1188., 1189.,  ..., 1195., 1196., 1197.],\n"
        "         [1198., 1199., 1200.,  ..., 1206., 1207., 1208.],\n"
        "         [1209., 1210., 1211.,  ..., 1217., 1218., 1219.]],\n"
        "\n"
        "        [[1220., 1221., 1222.,  ..., 1228., 1229., 1230.],\n"
        "         [1231., 1232., 1233.,  ..., 1239., 1240., 1241.],\n"
        "         [1242., 1243., 1244.,  ..., 1250., 1251., 1252.],\n"
        "         ...,\n"
        "         [1297., 1298., 1299.,  ..., 1305., 1306., 1307.],\n"
        "         [1308., 1309., 1310.,  ..., 1316., 1317., 1318.],\n"
        "         [1319., 1320., 1321.,  ..., 1327., 1328., 1329.]],\n"
        "\n"
        "        ...,\n"
        "\n"
        "        [[1770., 1771., 1772.,  ..., 1778., 1779., 1780.],\n"
        "         [1781., 1782., 1783.,  ..., 1789., 1790., 1791.],\n"
        "         [1792., 1793., 1794.,  ..., 1800., 1801., 1802.],\n"
        "         ...,\n"
        "         [1847., 1848., 1849.,  ..., 1855., 1856., 1857.],\n"
        "         [1858., 1859., 1860.,  ..., 1866., 1867., 1868.],\n"
        "         [1869., 1870., 1871.,  ..., 1877., 1878., 1879.]],\n"
        "\n"
        "        [[1880., 1881., 1882.,  ..., 1888., 1889., 1890.],\n"
        "         [1891., 1892., 1893.,  ..., 1899., 1900., 1901.],\n"
        "         [1902., 1903., 1904.,  ..., 1910., 1911., 1912.],\n"
        "         ...,\n"
        "         [1957., 1958., 1959.,  ..., 1965., 1966., 1967.],\n"
        "         [1968., 1969., 1970.,  ..., 1976., 1977., 1978.],\n"
        "         [1979., 1980., 1981.,  ..., 1987., 1988., 1989.]],\n"
        "\n"
        "        [[1990., 1991., 1992.,  ..., 1998., 1999., 2000.],\n"
        "         [2001., 2002., 2003.,  ..., 2009., 2010., 2011.],\n"
        "         [2012., 2013., 2014.,  ..., 2020., 2021., 2022.],\n"
        "         ...,\n"
        "         [2067., 2068., 2069.,  ..., 2075., 2076., 2077.],\n"
        "         [2078., 2079., 2080.,  ..., 2086., 2087., 2088.],\n"
        "         [2089., 2090., 2091.,  ..., 2097., 2098., 2099.]]])");
  CHECK(Tensor::arange(1100).reshape({100, 11}).to_string() ==
        "tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 8.0000e+00, 9.0000e+00,\n"
        "         1.0000e+01],\n"
        "        [1.1000e+01, 1.2000e+01, 1.3000e+01,  ..., 1.9000e+01, 2.0000e+01,\n"
        "         2.1000e+01],\n"
        "        [2.2000e+01, 2.3000e+01, 2.4000e+01,  ..., 3.0000e+01, 3.1000e+01,\n"
        "         3.2000e+01],\n"
        "        ...,\n"
        "        [1.0670e+03, 1.0680e+03, 1.0690e+03,  ..., 1.0750e+03, 1.0760e+03,\n"
        "         1.0770e+03],\n"
        "        [1.0780e+03, 1.0790e+03, 1.0800e+03,  ..., 1.0860e+03, 1.0870e+03,\n"
        "         1.0880e+03],\n"
        "        [1.0890e+03, 1.0900e+03, 1.0910e+03,  ..., 1.0970e+03, 1.0980e+03,\n"
        "         1.0990e+03]])");
  Tensor x = Tensor::from_vector({1, 2}).requires_grad_();
  CHECK(x.to_string() == "tensor([1., 2.], requires_grad=True)");
  CHECK((x * 2.0f).to_string() == "tensor([2., 4.], grad_fn=<MulBackward0>)");
  // Suffixes wrap onto a new line past 80 columns.
  Tensor sevenths = (Tensor::arange(8) / 7.0f).requires_grad_();
  CHECK(sevenths.to_string() ==
        "tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000],\n       requires_grad=True)");
  CHECK((sevenths * 1.0f).to_string() ==
        "tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000],\n       grad_fn=<MulBackward0>)");
  CHECK((Tensor::arange(30) / 7.0f)
            .requires_grad_()
            .to_string()
            .ends_with("3.8571, 4.0000, 4.1429], requires_grad=True)"));
  CHECK(Tensor::from_vector({123456.7f, 1}).to_string() == "tensor([1.2346e+05, 1.0000e+00])");
  CHECK(Tensor::from_vector({1e-4f, 1}).to_string() == "tensor([1.0000e-04, 1.0000e+00])");
  CHECK(Tensor::from_vector({-0.0f, 0}).to_string() == "tensor([-0., 0.])");
  CHECK(Tensor::zeros({3}).to_string() == "tensor([0., 0., 0.])");
  std::ostringstream out;
  out << Tensor::from_vector({0.5f});
  CHECK(out.str() == "tensor([0.5000])");
}

TEST_CASE("at and set take negative indices as Python: -1 is the last", "[tensor]") {
  // PyTorch: x = torch.arange(6.).reshape(2, 3); x[-1, -1] == 5, x[0, -3] == 0,
  // x[1, -4] raises "index -4 is out of bounds for dimension 1 with size 3".
  Tensor t = Tensor::arange(6).reshape({2, 3});
  CHECK(t.at({-1, -1}) == 5.0f);
  CHECK(t.at({0, -3}) == 0.0f);
  CHECK(t.at({-2, 1}) == 1.0f);
  t.set({-1, 0}, 9.0f);
  CHECK(t.at({1, 0}) == 9.0f);
  REQUIRE_THROWS_WITH(t.at({1, -4}), Contains("index -4 is out of bounds for dimension 1 with size 3"));
  REQUIRE_THROWS_WITH(t.set({-3, 0}, 1.0f), Contains("index -3 is out of bounds for dimension 0 with size 2"));
  Tensor v = Tensor::from_vector({1, 2, 3});
  CHECK(v.at({-1}) == 3.0f);
  REQUIRE_THROWS_WITH(v.at({5}), Contains("index 5 is out of bounds for dimension 0 with size 3"));
}

TEST_CASE("Tensor::randn(shape) draws from the global generator, x.sum() and x.mean(axes) reduce", "[tensor]") {
  default_generator().manual_seed(11);
  const Tensor a = Tensor::randn({2, 3});
  Generator same(11);
  minidl::testing::check_close(a, Tensor::randn({2, 3}, same), 0.0, 0.0);
  const Tensor x = Tensor::from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  minidl::testing::check_close(x.sum(), {21.0f}, 0.0, 0.0);
  minidl::testing::check_close(x.mean({0}), {2.5f, 3.5f, 4.5f}, 0.0, 0.0);
  CHECK(x.mean({1}, true).shape() == Shape{2, 1});
  minidl::testing::check_close(x.sum({1}), sum(x, {1}), 0.0, 0.0);
}

}  // namespace test_tensor
