// digits --stats: the layers' statistics of every run as CSV, their options' checks, and
// that recording them changes no figure of the runs.
#ifdef MINIDL_DIGITS_EXE
#include <map>
#include <set>
#include <sstream>

#include "support/check.hpp"
#include "support/digits_cli.hpp"
#include "support/process.hpp"
#include "support/skip.hpp"
#include "support/temp_dir.hpp"

namespace test_digits_stats {

using minidl::testing::ProcessResult;
using minidl::testing::slurp;

namespace {

// Runs digits in dir's scratch directory, on its own copy of the data.
ProcessResult run_in_scratch(const minidl::testing::DigitsScratch& dir, const std::vector<std::string>& args) {
  ProcessResult result = dir.run(args);
  REQUIRE(result.signal == 0);
  return result;
}

struct Row {
  std::string run, seed;
  int64_t step;
  std::string layer, quantity, statistic;
  double value;
};

std::vector<Row> read_rows(const std::string& csv) {
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  REQUIRE(line == "run,seed,step,layer,quantity,statistic,value");
  std::vector<Row> rows;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    Row r;
    std::string step, value;
    std::getline(fields, r.run, ',');
    std::getline(fields, r.seed, ',');
    std::getline(fields, step, ',');
    std::getline(fields, r.layer, ',');
    std::getline(fields, r.quantity, ',');
    std::getline(fields, r.statistic, ',');
    std::getline(fields, value);
    r.step = std::stoll(step);
    r.value = std::stod(value);
    rows.push_back(r);
  }
  return rows;
}

const std::vector<std::string> kSmall{"--depth", "2",       "--width", "16",     "--epochs",  "2",
                                      "--quiet", "--seeds", "0,1",     "--norm", "none,batch"};

}  // namespace

TEST_CASE("digits --stats writes every run's snapshots as CSV and changes no figure", "[lesson][stats]") {
  const minidl::testing::DigitsScratch dir;
  ProcessResult o = run_in_scratch(
      dir, minidl::testing::with_options(
               kSmall, {"--stats", dir.file("s.csv"), "--stats-every", "5", "--curves", dir.file("with.csv")}));
  INFO(o.err);
  REQUIRE(o.exit_code == 0);
  const std::vector<Row> rows = read_rows(slurp(dir.file("s.csv")));
  // 23 steps an epoch: every 5th of the 46, and each epoch's last (23, 46).
  const std::set<int64_t> expected_steps{5, 10, 15, 20, 23, 25, 30, 35, 40, 45, 46};
  std::map<std::string, std::set<int64_t>> steps;
  std::map<std::string, double> histogram_area;  // run seed step layer quantity -> sum density * width
  std::map<std::string, int> count;
  for (const Row& r : rows) {
    const std::string run = r.run + " " + r.seed;
    steps[run].insert(r.step);
    ++count[r.layer + " " + r.quantity];
    if (r.statistic.rfind("bin:", 0) == 0) {
      const size_t colon = r.statistic.find(':', 4);
      const double low = std::stod(r.statistic.substr(4, colon - 4)), high = std::stod(r.statistic.substr(colon + 1));
      histogram_area[run + " " + std::to_string(r.step) + " " + r.layer + " " + r.quantity] += r.value * (high - low);
    }
    if (r.quantity == "output" && r.statistic == "saturated") CHECK((r.value >= 0.0 && r.value <= 1.0));
    if (r.statistic == "update_to_data") CHECK((r.value > 0.0 && r.value < 1.0));
  }
  CHECK(steps == std::map<std::string, std::set<int64_t>>{{"batch 0", expected_steps},
                                                          {"batch 1", expected_steps},
                                                          {"none 0", expected_steps},
                                                          {"none 1", expected_steps}});
  // Per run and step: 2 tanh layers x (3 + 40 bins) outputs and (2 + 40) gradients, 3 weights x 5.
  const int snapshots = 4 * int(expected_steps.size());
  CHECK(count == std::map<std::string, int>{{"tanh1 output", 43 * snapshots},
                                            {"tanh1 output_grad", 42 * snapshots},
                                            {"tanh2 output", 43 * snapshots},
                                            {"tanh2 output_grad", 42 * snapshots},
                                            {"linear1.weight parameter", 5 * snapshots},
                                            {"linear2.weight parameter", 5 * snapshots},
                                            {"linear3.weight parameter", 5 * snapshots}});
  for (const auto& [key, area] : histogram_area) {
    INFO(key);
    CHECK(area == Approx(1.0).epsilon(1e-6));
  }
  // The same runs without the recorder: the same losses, bit for bit (9 significant digits).
  ProcessResult plain =
      run_in_scratch(dir, minidl::testing::with_options(kSmall, {"--curves", dir.file("without.csv")}));
  REQUIRE(plain.exit_code == 0);
  CHECK(slurp(dir.file("without.csv")) == slurp(dir.file("with.csv")));
  CHECK(plain.out == o.out);
}

TEST_CASE("digits --stats records about 30 snapshots a run by default", "[lesson][stats]") {
  const minidl::testing::DigitsScratch dir;
  auto recorded = [&](const std::string& epochs) {
    ProcessResult o = run_in_scratch(
        dir, minidl::testing::with_options(kSmall, {"--epochs", epochs, "--seeds", "0", "--norm", "layer", "--stats",
                                                    dir.file("s" + epochs + ".csv")}));
    INFO(o.err);
    REQUIRE(o.exit_code == 0);
    std::set<int64_t> steps;
    for (const Row& r : read_rows(slurp(dir.file("s" + epochs + ".csv")))) steps.insert(r.step);
    return steps;
  };
  CHECK(recorded("1").size() == 23);             // a short run: every step
  const std::set<int64_t> five = recorded("5");  // 115 steps: every 3rd and each epoch's last
  CHECK(five.size() == 38 + 4);                  // 3, 6, ..., 114, and 23, 46, 92, 115 (69 is a 3rd)
  CHECK(five.count(23) == 1);
  CHECK(five.count(115) == 1);
}

TEST_CASE("digits --stats watches the layers nested in the CNN and the residual MLPs", "[lesson][stats]") {
  // Every activation's output and every Linear's and Conv2d's weight, however deep inside
  // the model's blocks, named by kind in the order the forward pass meets them.
  const minidl::testing::DigitsScratch dir;
  auto layers = [&](const std::vector<std::string>& arch) {
    const std::string csv = dir.file("arch.csv");
    ProcessResult o = run_in_scratch(
        dir, minidl::testing::with_options(arch, {"--epochs", "1", "--quiet", "--seeds", "0", "--stats", csv}));
    INFO(o.err);
    REQUIRE(o.exit_code == 0);
    std::set<std::string> seen;
    for (const Row& r : read_rows(slurp(csv))) seen.insert(r.layer + " " + r.quantity);
    return seen;
  };
  const std::set<std::string> cnn = layers({"--arch", "cnn", "--norm", "batch"});
  CHECK(cnn == std::set<std::string>{"relu1 output", "relu1 output_grad", "relu2 output", "relu2 output_grad",
                                     "relu3 output", "relu3 output_grad", "conv1.weight parameter",
                                     "conv2.weight parameter", "conv3.weight parameter", "linear1.weight parameter"});
  // resmlp-pre, 2 blocks: the input Linear, each block's two Linears around a GELU, the head.
  const std::set<std::string> resmlp = layers({"--arch", "resmlp-pre", "--blocks", "2", "--width", "8"});
  CHECK(resmlp.count("gelu2 output_grad") == 1);
  CHECK(resmlp.count("gelu3 output") == 0);
  CHECK(resmlp.count("linear6.weight parameter") == 1);
  CHECK(resmlp.count("linear7.weight parameter") == 0);
}

TEST_CASE("digits --stats and --stats-every are checked as the other options", "[lesson][stats]") {
  const minidl::testing::DigitsScratch dir;
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"--stats-every", "5"}, "--stats-every needs --stats FILE: it says how often --stats records"},
      {{"--stats", "s.csv", "--stats-every", "0"}, "--stats-every must be at least 1, got 0"},
      {{"--stats", "s.csv", "--stats-every", "0x10"}, "--stats-every: \"0x10\" is not a whole number"},
      {{"--stats", "s.csv", "--stats", "t.csv"}, "--stats is given more than once"},
      {{"--stats", "c.csv", "--curves", "c.csv"}, "--stats c.csv is also the output of --curves"},
      {{"--stats", dir.file("no/such/dir/s.csv")}, "does not exist"},
  };
  for (const auto& [args, message] : cases) {
    ProcessResult o = run_in_scratch(dir, minidl::testing::with_options(args, {"--quiet"}));
    INFO("digits " << args.front() << " ...: stderr " << o.err);
    CHECK(o.exit_code == 2);
    CHECK_THAT(o.err, Catch::StartsWith("digits: ") && Catch::Contains(message));
    CHECK_FALSE(std::filesystem::exists(dir.file("s.csv")));
  }
  ProcessResult help = run_in_scratch(dir, {"--help"});
  CHECK_THAT(help.out, Catch::Contains("--stats FILE") && Catch::Contains("--stats-every N"));
}

TEST_CASE("scripts/plot_stats.sh draws the four pictures from digits --stats", "[lesson][stats]") {
  if (!minidl::testing::gnuplot_or_skip()) return;
  const minidl::testing::DigitsScratch dir;
  ProcessResult o = run_in_scratch(dir, minidl::testing::with_options(kSmall, {"--stats", dir.file("s.csv"), "--curves",
                                                                               dir.file("c.csv"), "--seeds", "0"}));
  REQUIRE(o.exit_code == 0);
  const std::string script = std::string(MINIDL_SOURCE_DIR) + "/scripts/plot_stats.sh";
  ProcessResult plot = minidl::testing::run_process(
      {"/bin/bash", script, "--curves", dir.file("c.csv"), dir.file("s.csv"), dir.dir.path().string()}, dir.dir.path());
  INFO(plot.err);
  REQUIRE(plot.exit_code == 0);
  for (const char* png :
       {"stats_1_activations.png", "stats_2_gradients.png", "stats_3_grad_depth.png", "stats_4_update_ratio.png"})
    CHECK(std::filesystem::file_size(dir.file(png)) > 1000);
  ProcessResult wrong =
      minidl::testing::run_process({"/bin/bash", script, dir.file("c.csv"), dir.dir.path().string()}, dir.dir.path());
  CHECK(wrong.exit_code == 2);
  CHECK_THAT(wrong.err, Catch::Contains("expected the header run,seed,step,layer,quantity,statistic,value"));
}

}  // namespace test_digits_stats
#endif
