// charlm's diagnostic outputs as a user runs them: --stats (every module's statistics through
// the library's recorder), --attention WORD,FILE (each layer's and head's weights for a word),
// their refusals, and the scripts that draw them.
#ifdef MINIDL_CHARLM_EXE
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "attention_dump.hpp"
#include "minidl/io/safetensors.hpp"
#include "support/charlm_cli.hpp"
#include "support/skip.hpp"

namespace test_charlm_outputs {

using namespace minidl::testing;

namespace {

// A CSV's rows after the header, each split at the commas.
std::vector<std::vector<std::string>> csv_rows(const std::string& text, const std::string& header) {
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  REQUIRE(line == header);
  std::vector<std::vector<std::string>> rows;
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, ',');) fields.push_back(cell);
    rows.push_back(fields);
  }
  return rows;
}

const std::string kAttentionHeader = "run,seed,layer,head,query,key,query_token,key_token,weight";

ProcessResult run_script(const std::string& name, std::vector<std::string> args, const TempDir& dir) {
  args.insert(args.begin(), {"/bin/bash", std::string(MINIDL_SOURCE_DIR) + "/scripts/" + name});
  return run_process(args, dir.path());
}

}  // namespace

TEST_CASE("charlm --stats: a row per recorded step and module, finite, the losses of a run without", "[charlm]") {
  TempDir dir;
  const std::string words = dir.write("words.txt", charlm_word_list());
  const ProcessResult recorded = run_charlm(dir, {"--data", words, "--steps", "7", "--stats", dir.file("s.csv"),
                                                  "--stats-every", "3", "--curves", dir.file("c1.csv")});
  INFO(recorded.err);
  REQUIRE(recorded.exit_code == 0);
  REQUIRE(run_charlm(dir, {"--data", words, "--steps", "7", "--curves", dir.file("c2.csv")}).exit_code == 0);
  CHECK(slurp(dir.file("c1.csv")) == slurp(dir.file("c2.csv")));  // the hooks only read

  std::set<std::string> steps, outputs, parameters;
  std::map<std::string, int> seen;         // "step layer quantity statistic"
  std::map<std::string, double> data_std;  // "step layer"
  const auto rows = csv_rows(slurp(dir.file("s.csv")), "run,seed,step,layer,quantity,statistic,value");
  for (const auto& row : rows)
    if (row.size() == 7 && row[5] == "data_std") data_std[row[2] + " " + row[3]] = std::stod(row[6]);
  for (const auto& row : rows) {
    REQUIRE(row.size() == 7);
    CHECK(row[0] == "layer-pre");
    // Finite, but for the ratios to a parameter whose values are all equal (a norm's ones and
    // zeros before its first update): x / 0.
    const bool over_zero = row[5].ends_with("_to_data") && data_std[row[2] + " " + row[3]] == 0.0;
    INFO(row[2] << " " << row[3] << " " << row[5] << " " << row[6]);
    CHECK(std::isfinite(std::stod(row[6])) != over_zero);
    steps.insert(row[2]);
    (row[4] == "parameter" ? parameters : outputs).insert(row[3]);
    ++seen[row[2] + " " + row[3] + " " + row[4] + " " + row[5]];
  }
  CHECK(steps == std::set<std::string>{"1", "3", "6", "7"});  // the first, every 3rd, the last
  CHECK(outputs == std::set<std::string>{"transformer.wte", "transformer.wpe", "transformer.h.0",
                                         "transformer.h.0.ln_1", "transformer.h.0.attn", "transformer.h.0.attn.c_attn",
                                         "transformer.h.0.attn.c_proj", "transformer.h.0.ln_2",
                                         "transformer.h.0.mlp.c_fc", "transformer.h.0.mlp.c_proj", "transformer.ln_f",
                                         "lm_head"});
  CHECK(parameters.size() == 2 + 12 + 2 + 1);  // the state_dict's parameters
  for (const std::string& step : steps) {
    INFO("step " << step);
    CHECK(seen[step + " transformer.h.0.ln_1 output mean"] == 1);
    CHECK(seen[step + " transformer.h.0.attn.c_attn output_grad std"] == 1);
    CHECK(seen[step + " transformer.h.0.mlp.c_fc.weight parameter update_to_data"] == 1);
  }
}

TEST_CASE("charlm --attention: after training and from --init-from, causal, rows of 1, the saved model's", "[charlm]") {
  TempDir dir;
  const std::string words = dir.write("words.txt", charlm_word_list());
  const std::vector<std::string> runs{"--data", words, "--norm", "layer,rms", "--norm-position", "pre,post"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), runs.begin(), runs.end());
    return more;
  };
  const ProcessResult trained =
      run_charlm(dir, with({"--steps", "5", "--save", dir.file("ck"), "--attention", "hello," + dir.file("a.csv")}));
  INFO(trained.err);
  REQUIRE(trained.exit_code == 0);
  const ProcessResult loaded = run_charlm(
      dir, with({"--steps", "0", "--init-from", dir.file("ck"), "--attention", "hello," + dir.file("b.csv")}));
  INFO(loaded.err);
  REQUIRE(loaded.exit_code == 0);
  const std::string text = slurp(dir.file("a.csv"));
  CHECK(slurp(dir.file("b.csv")) == text);

  // 4 runs x 1 layer x 2 heads x 6 queries x 6 keys, for ".hello".
  const auto rows = csv_rows(text, kAttentionHeader);
  REQUIRE(rows.size() == 4 * 2 * 6 * 6);
  minidl::Generator gen(0);
  minidl::charlm::CharTransformer model({.block_size = 32, .layers = 1, .heads = 2, .width = 16}, gen);
  model.load_state_dict(minidl::io::load_safetensors(dir.file("ck/layer-pre.safetensors")), /*strict=*/true);
  const minidl::Tensor saved = minidl::charlm::attention_weights(model, "hello")[0];  // (H, T, T)
  std::map<std::string, double> row_sums;
  for (const auto& row : rows) {
    const int head = std::stoi(row[3]), query = std::stoi(row[4]), key = std::stoi(row[5]);
    const double weight = std::stod(row[8]);
    INFO(row[0] << " head " << head << " query " << query << " key " << key);
    CHECK(row[6] == std::string(1, ".hello"[query]));
    CHECK(row[7] == std::string(1, ".hello"[key]));
    if (key > query) CHECK(row[8] == "0");
    row_sums[row[0] + row[3] + row[4]] += weight;
    // The test computes in its own process (another thread count, so other GEMM blockings):
    // the bound of test_charlm_attention.cpp.
    if (row[0] == "layer-pre") CHECK(std::abs(weight - saved.data()[(head * 6 + query) * 6 + key]) <= 1e-4);
  }
  for (const auto& [row, sum] : row_sums) CHECK(std::abs(sum - 1.0) <= 1e-5);  // T + 2 roundings
}

TEST_CASE("charlm refuses bad --stats and --attention: one line naming the option, exit 2", "[charlm]") {
  TempDir dir;
  const std::string words = dir.write("words.txt", charlm_word_list());
  const std::string example = "(e.g. --attention hello,attention.csv)";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"--stats-every", "5"}, "--stats-every needs --stats FILE: it says how often --stats records"},
      {{"--stats", "s.csv", "--stats-every", "0"}, "--stats-every must be at least 1, got 0"},
      {{"--attention", "hello"}, "--attention takes WORD,FILE " + example + ", got \"hello\""},
      {{"--attention", ",a.csv"}, "--attention \",a.csv\" has no word before the comma " + example},
      {{"--attention", "hello,"}, "--attention \"hello,\" has no file after the comma " + example},
      {{"--attention", "Hello,a.csv"},
       "--attention: the word \"Hello\" has a character outside a-z, the model's vocabulary: give a lowercase a-z "
       "word"},
      {{"--attention", "abcdef,a.csv", "--block-size", "6"},
       "--attention: the word \"abcdef\" has 6 letters, more than the 5 --block-size 6 allows: choose a shorter word"},
      {{"--attention", "hello,c.csv", "--curves", "c.csv"}, "--attention c.csv is also the output of --curves"},
      {{"--attention", "hello," + dir.file("no/such/a.csv")}, "does not exist"},
      {{"--stats", words}, "--stats " + words + " is the input " + words + " (--data)"},
  };
  for (const auto& [args, message] : cases) {
    std::vector<std::string> argv{"--data", words, "--steps", "1"};
    argv.insert(argv.end(), args.begin(), args.end());
    const ProcessResult r = run_charlm(dir, argv);
    INFO("charlm " << args.front() << " " << args[1] << ": stderr " << r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::StartsWith("charlm: ") && Catch::Contains(message));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_FALSE(std::filesystem::exists(dir.file("a.csv")));
    CHECK_FALSE(std::filesystem::exists(dir.file("s.csv")));
  }
  const ProcessResult help = run_charlm(dir, {"--help"}, /*small=*/false);
  CHECK_THAT(help.out, Catch::Contains("--stats FILE") && Catch::Contains("--stats-every N") &&
                           Catch::Contains("--attention WORD,FILE"));
}

TEST_CASE("scripts/plot_attention.sh and plot_stats.sh draw charlm's --attention and --stats", "[charlm]") {
  if (!minidl::testing::gnuplot_or_skip()) return;
  TempDir dir;
  const std::string words = dir.write("words.txt", charlm_word_list());
  const ProcessResult trained =
      run_charlm(dir, {"--data", words, "--steps", "4", "--norm-position", "pre,post", "--stats", dir.file("s.csv"),
                       "--attention", "hello," + dir.file("a.csv")});
  REQUIRE(trained.exit_code == 0);
  const ProcessResult drawn = run_script("plot_attention.sh", {"--run", "layer-post", dir.file("a.csv")}, dir);
  INFO(drawn.err);
  REQUIRE(drawn.exit_code == 0);
  CHECK(std::filesystem::file_size(dir.file("a.png")) > 1000);
  const ProcessResult no_run = run_script("plot_attention.sh", {"--run", "rms-pre", dir.file("a.csv")}, dir);
  CHECK(no_run.exit_code == 2);
  CHECK(no_run.err ==
        "plot_attention.sh: --run: no run \"rms-pre\" in " + dir.file("a.csv") + " (it has: layer-pre layer-post)\n");
  const ProcessResult not_attention = run_script("plot_attention.sh", {dir.file("s.csv"), dir.file("x.png")}, dir);
  CHECK(not_attention.exit_code == 2);
  CHECK_THAT(not_attention.err, Catch::Contains("expected the header " + kAttentionHeader));

  const ProcessResult stats =
      run_script("plot_stats.sh", {"--layers", "mlp[.]c_fc", dir.file("s.csv"), dir.path().string()}, dir);
  INFO(stats.err);
  REQUIRE(stats.exit_code == 0);
  for (const char* png :
       {"stats_1_activations.png", "stats_2_gradients.png", "stats_3_grad_depth.png", "stats_4_update_ratio.png"})
    CHECK(std::filesystem::file_size(dir.file(png)) > 1000);
}

}  // namespace test_charlm_outputs
#endif
