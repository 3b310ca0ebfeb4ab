// The same seed and options give byte-identical curves and checkpoints: run after run, at
// 1 and at 2 threads, with --jobs. And a run whose loss blows up stops with a message naming run, epoch
// and step; the other runs go on and the exit code is 1.
#include <algorithm>
#include <fstream>
#include <limits>

#include "minidl/io/safetensors.hpp"
#include "support/check.hpp"
#include "support/difference.hpp"
#include "support/digits_cli.hpp"

namespace test_determinism {

using namespace minidl;
using minidl::testing::DigitsScratch;
using minidl::testing::slurp;

namespace {

const std::vector<std::string> kNorms = {"none", "batch", "layer", "rms", "group"};

struct Outputs {
  std::string curves;
  std::vector<std::string> checkpoints;  // bytes of <run>.safetensors in kNorms order
};

Outputs train(const DigitsScratch& s, const std::string& tag, std::vector<std::string> extra) {
  const std::string curves = s.file(tag + ".csv"), save = s.file(tag);
  std::vector<std::string> args{"--quiet", "--norm", "none,batch,layer,rms,group", "--epochs", "2", "--curves", curves,
                                "--save",  save};
  if (std::find(extra.begin(), extra.end(), "--seeds") == extra.end()) extra.insert(extra.end(), {"--seeds", "0"});
  args.insert(args.end(), extra.begin(), extra.end());
  testing::ProcessResult result = s.run(args);
  INFO("stderr: " << result.err);
  REQUIRE(result.exit_code == 0);
  Outputs out{slurp(curves), {}};
  for (const std::string& norm : kNorms) out.checkpoints.push_back(slurp(save + "/" + norm + ".safetensors"));
  REQUIRE(out.curves.size() > 1000);
  return out;
}

void require_identical(const Outputs& a, const Outputs& b) {
  CHECK(testing::bytes_difference(a.curves, b.curves) == "");
  for (size_t i = 0; i < kNorms.size(); ++i) {
    INFO("checkpoint " << kNorms[i]);
    CHECK(a.checkpoints[i].size() > 100);
    CHECK(testing::bytes_difference(a.checkpoints[i], b.checkpoints[i]) == "");
  }
}

}  // namespace

TEST_CASE("digits: the same seed gives byte-identical curves and checkpoints, run after run", "[cli][determinism]") {
  DigitsScratch s;
  const Outputs first = train(s, "first", {"--threads", "1"});
  require_identical(first, train(s, "second", {"--threads", "1"}));
  // A different seed must change them, or the test above could not fail.
  const Outputs other = train(s, "other", {"--threads", "1", "--seeds", "1"});
  CHECK(other.curves != first.curves);
  CHECK(other.checkpoints[0] != first.checkpoints[0]);
}

TEST_CASE("digits: 1 and 2 threads give byte-identical curves and checkpoints", "[cli][determinism]") {
  DigitsScratch s;
  const Outputs one = train(s, "one", {"--threads", "1"});
  require_identical(one, train(s, "two", {"--threads", "2"}));
  require_identical(one, train(s, "two_again", {"--threads", "2"}));
}

TEST_CASE("digits: --jobs 2 gives byte-identical curves and checkpoints to one run at a time", "[cli][determinism]") {
  DigitsScratch s;
  const Outputs serial = train(s, "serial", {"--threads", "1", "--jobs", "1"});
  require_identical(serial, train(s, "jobs2", {"--threads", "1", "--jobs", "2"}));
  require_identical(serial, train(s, "jobs5", {"--jobs", "5"}));
}

TEST_CASE("digits: every run whose loss turns NaN or infinite stops with its message", "[cli][divergence]") {
  DigitsScratch s;
  // lr 1e38 blows up every run; each is stopped and reported, and the later runs still run.
  testing::ProcessResult result = s.run({"--quiet", "--seeds", "0", "--norm", "none,batch,layer", "--epochs", "2",
                                         "--lr", "1e38", "--curves", s.file("c.csv"), "--summary", s.file("s.json")});
  INFO("stdout: " << result.out << "\nstderr: " << result.err);
  CHECK(result.signal == 0);
  CHECK(result.exit_code == 1);
  for (const char* name : {"no normalization", "BatchNorm1d", "LayerNorm"})
    CHECK_THAT(result.out, Catch::Contains(std::string(name) + " ") && Catch::Contains("diverged: loss"));
  for (const char* run : {"\"none\"", "\"batch\"", "\"layer\""})
    CHECK_THAT(result.err, Catch::Contains(std::string("digits: run ") + run));
  CHECK_THAT(result.err, Catch::Contains("at epoch 1, step") && Catch::Contains("Try a lower learning rate"));
  CHECK(std::count(result.err.begin(), result.err.end(), '\n') == 3);
  CHECK(slurp(s.file("c.csv")).starts_with("run,seed,epoch,step,loss\n"));
  CHECK_THAT(slurp(s.file("s.json")), Catch::Contains("\"error\""));
}

TEST_CASE("digits: a diverging run stops, the run after it trains and saves, exit code 1", "[cli][divergence]") {
  DigitsScratch s;
  // Start "none" from weights with an infinity in them (its loss is NaN at once) and "batch"
  // from sound ones: only "none" may stop.
  REQUIRE(
      s.run({"--quiet", "--seeds", "0", "--norm", "none,batch", "--epochs", "1", "--save", s.file("init")}).exit_code ==
      0);
  nn::StateDict none = io::load_safetensors(s.file("init") + "/none.safetensors");
  none[0].value.data()[0] = std::numeric_limits<float>::infinity();
  io::save_safetensors(s.file("init") + "/none.safetensors", none);

  testing::ProcessResult result =
      s.run({"--quiet", "--seeds", "0", "--norm", "none,batch", "--epochs", "2", "--init-from", s.file("init"),
             "--save", s.file("saved"), "--curves", s.file("c.csv")});
  INFO("stdout: " << result.out << "\nstderr: " << result.err);
  CHECK(result.signal == 0);
  CHECK(result.exit_code == 1);
  CHECK_THAT(result.out, Catch::Contains("no normalization  diverged: loss nan at epoch 1, step 1"));
  CHECK_THAT(result.out, Catch::Contains("BatchNorm1d       training loss"));
  CHECK(result.err ==
        "digits: run \"none\" (no normalization, seed 0): the loss became nan at epoch 1, step 1; training stopped. "
        "Try a lower learning rate than 0.05.\n");
  CHECK_FALSE(std::filesystem::exists(s.file("saved") + "/none.safetensors"));
  CHECK_NOTHROW(io::load_safetensors(s.file("saved") + "/batch.safetensors"));
  const std::string curves = slurp(s.file("c.csv"));
  CHECK_THAT(curves, Catch::Contains("\nbatch,0,2,46,"));
  CHECK_THAT(curves, !Catch::Contains("\nnone,0,1,2,"));  // none stopped at its first step
}

}  // namespace test_determinism
