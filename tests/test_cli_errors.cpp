// The digits program answers every bad option and every broken input file with exit code 2,
// one line on stderr naming the option and its value or the file, line and column, no
// signal, and no output file written or touched. Table-driven: one row per bad input.
#include <fstream>
#include <functional>

#include "minidl/io/safetensors.hpp"
#include "support/check.hpp"
#include "support/digits_cli.hpp"

namespace test_cli_errors {

using namespace minidl;
using minidl::testing::DigitsScratch;
using minidl::testing::slurp;

namespace {

struct BadInput {
  std::string what;                                      // the case, for the report
  std::vector<std::string> args;                         // options after --quiet and the output options
  std::vector<std::string> message;                      // each must appear in the single stderr line
  std::function<void(DigitsScratch&)> break_files = {};  // corrupts the scratch data first
  int exit_code = 2;
};

// Replaces line `line` (1-based) of a text file in the scratch data.
void replace_line(const std::filesystem::path& path, int line, const std::string& text) {
  std::istringstream in(slurp(path));
  std::string out, current;
  for (int n = 1; std::getline(in, current); ++n) out += (n == line ? text : current) + "\n";
  std::ofstream(path, std::ios::binary) << out;
}

// Line `line` of digits.csv with field `column` (1-based) replaced; column 0 keeps all fields.
std::string csv_line_with(const std::filesystem::path& csv, int line, int column, const std::string& field) {
  std::istringstream in(slurp(csv));
  std::string text;
  for (int n = 0; n < line; ++n) std::getline(in, text);
  std::vector<std::string> fields;
  std::istringstream split(text);
  for (std::string f; std::getline(split, f, ',');) fields.push_back(f);
  if (column > 0) fields[size_t(column - 1)] = field;
  std::string joined;
  for (size_t i = 0; i < fields.size(); ++i) joined += (i ? "," : "") + fields[i];
  return joined;
}

void break_csv(DigitsScratch& s, int line, int column, const std::string& field) {
  const auto csv = s.data() / "digits.csv";
  replace_line(csv, line, csv_line_with(csv, line, column, field));
}

// A valid checkpoint of deep_net(none) with the default sizes, from a 1-epoch run.
std::string good_none_checkpoint(DigitsScratch& s) {
  auto result = s.run({"--quiet", "--seeds", "0", "--norm", "none", "--epochs", "1", "--save", s.file("good")});
  REQUIRE(result.exit_code == 0);
  return slurp(s.file("good") + "/none.safetensors");
}

void write_init(DigitsScratch& s, const std::string& bytes) {
  std::filesystem::create_directories(s.file("init"));
  std::ofstream(s.file("init") + "/none.safetensors", std::ios::binary) << bytes;
}

std::vector<BadInput> bad_inputs() {
  return {
      {"unknown norm", {"--norm", "none,bogus"}, {"unknown norm \"bogus\"", "none, batch, layer, rms, group"}},
      {"empty norm list", {"--norm", ""}, {"--norm"}},
      {"norm twice", {"--norm", "batch,batch"}, {"\"batch\" twice"}},
      {"zero epochs", {"--epochs", "0"}, {"epochs", "got 0"}},
      {"negative epochs", {"--epochs", "-3"}, {"epochs", "got -3"}},
      {"zero lr", {"--lr", "0"}, {"lr", "got 0"}},
      {"negative lr", {"--lr", "-0.5"}, {"lr", "got -0.5"}},
      {"nan lr", {"--lr", "nan"}, {"lr must be a positive number, got nan"}},
      {"infinite lr", {"--lr", "inf"}, {"lr must be a positive number, got inf"}},
      {"zero batch size", {"--batch-size", "0"}, {"--batch-size must be at least 1, got 0"}},
      {"negative batch size", {"--batch-size", "-64"}, {"--batch-size must be at least 1, got -64"}},
      {"zero depth", {"--depth", "0"}, {"depth", "got 0"}},
      {"negative width", {"--width", "-1"}, {"width", "got -1"}},
      {"zero groups", {"--norm", "group", "--groups", "0"}, {"groups", "got 0"}},
      {"groups not dividing width",
       {"--norm", "group", "--width", "60", "--groups", "8"},
       {"groups 8 does not divide width 60"}},
      {"zero threads", {"--threads", "0"}, {"--threads", "got 0"}},
      {"zero jobs", {"--jobs", "0"}, {"--jobs", "got 0"}},
      {"non-numeric jobs", {"--jobs", "two"}, {"--jobs: ", "two"}},
      {"unknown flag", {"--bogus"}, {"bogus"}},
      {"unexpected argument", {"stray"}, {"\"stray\""}},
      {"non-numeric epochs", {"--epochs", "five"}, {"--epochs: ", "five"}},
      {"non-numeric lr", {"--epochs", "5", "--lr=5x"}, {"--lr: \"5x\" is not a number"}},
      {"empty lr", {"--lr", ""}, {"--lr: \"\" is not a number"}},
      {"fractional batch size", {"--batch-size", "6.4"}, {"--batch-size: ", "6.4"}},
      {"negative seed", {"--seeds", "-1"}, {"--seeds \"-1\": \"\" is not a seed"}},
      {"seed range backwards", {"--seeds", "3-1"}, {"--seeds \"3-1\": the range 3-1 runs backwards (write 1-3)"}},
      {"seed not a number", {"--seeds", "x"}, {"--seeds \"x\": \"x\" is not a seed", "range such as 0-4"}},
      {"empty seed list", {"--seeds", ""}, {"--seeds is empty: give seeds such as 0-4 or 0,3,7"}},
      {"empty seed in a list", {"--seeds", "0,,2"}, {"--seeds \"0,,2\": \"\" is not a seed"}},
      {"seed repeated", {"--seeds", "0-4,3"}, {"--seeds \"0-4,3\": seed 3 is listed twice"}},
      {"too many seeds", {"--seeds", "0-5000"}, {"--seeds \"0-5000\": more than 1000 seeds"}},
      {"BatchNorm alone with a last batch of one",
       {"--norm", "batch", "--seeds", "0", "--batch-size", "2"},
       {"run \"batch\" (BatchNorm1d, seed 0) refused: batch size 2 on the 1437-example training split leaves a last "
        "batch of one example",
        "pass --drop-last or choose another batch size"}},
      {"BatchNorm alone at batch size 1",
       {"--norm", "batch", "--seeds", "0", "--batch-size", "1", "--drop-last"},
       {"run \"batch\" (BatchNorm1d, seed 0) refused: batch size 1 puts one example in every batch"}},
      {"missing option value", {"--epochs"}, {"epochs"}},
      {"missing data dir",
       {"--data", "/nonexistent/minidl-data"},
       {"/nonexistent/minidl-data/digits.csv", "cannot open"}},
      {"val curves in a missing directory",
       {"--val-curves", "/nonexistent/dir/v.csv"},
       {"--val-curves /nonexistent/dir/v.csv: the directory /nonexistent/dir does not exist"}},
      {"csv missing field",
       {},
       {"digits.csv, line 5, column 7", "missing value"},
       [](DigitsScratch& s) { break_csv(s, 5, 7, ""); }},
      {"csv not a number",
       {},
       {"digits.csv, line 9, column 12", "\"x1\" is not a number"},
       [](DigitsScratch& s) { break_csv(s, 9, 12, "x1"); }},
      {"csv pixel out of range",
       {},
       {"digits.csv, line 3, column 64", "pixel value 17 is outside 0..16"},
       [](DigitsScratch& s) { break_csv(s, 3, 64, "17"); }},
      {"csv bad label",
       {},
       {"digits.csv, line 1797, column 65", "label 10 is outside 0..9"},
       [](DigitsScratch& s) { break_csv(s, 1797, 65, "10"); }},
      {"csv wrong column count",
       {},
       {"digits.csv, line 2", "expected 65 comma-separated columns", "got 66"},
       [](DigitsScratch& s) {
         const auto csv = s.data() / "digits.csv";
         replace_line(csv, 2, csv_line_with(csv, 2, 0, "") + ",0");
       }},
      {"csv field with a NUL byte",
       {},
       {"digits.csv, line 9, column 12", "\"1\\02\" is not a number"},
       [](DigitsScratch& s) {
         break_csv(s, 9, 12,
                   std::string("1\0"
                               "2",
                               3));
       }},
      {"csv pixel as a fraction",
       {},
       {"digits.csv, line 9, column 12", "\"0.5\" is not a plain integer"},
       [](DigitsScratch& s) { break_csv(s, 9, 12, "0.5"); }},
      {"csv is a directory",
       {},
       {"digits.csv: is a directory, not a file"},
       [](DigitsScratch& s) {
         std::filesystem::remove(s.data() / "digits.csv");
         std::filesystem::create_directories(s.data() / "digits.csv");
       }},
      {"csv too large",
       {},
       {"digits.csv: the file holds more than 67108864 bytes (64 MiB)"},
       [](DigitsScratch& s) { std::ofstream(s.data() / "digits.csv") << std::string((size_t(64) << 20) + 10, '1'); }},
      {"splits overlap",
       {},
       {"digits_test_indices.txt, line 1: row index", "is also in the training split"},
       [](DigitsScratch& s) {
         std::istringstream train(slurp(s.data() / "digits_train_indices.txt"));
         std::string first;
         std::getline(train, first);
         replace_line(s.data() / "digits_test_indices.txt", 1, first);
       }},
      {"split index out of range",
       {},
       {"digits_train_indices.txt, line 4, column 1", "row index 1797 is out of range"},
       [](DigitsScratch& s) { replace_line(s.data() / "digits_train_indices.txt", 4, "1797"); }},
      {"split index not a number",
       {},
       {"digits_test_indices.txt, line 1, column 1", "\"12a\" is not an integer"},
       [](DigitsScratch& s) { replace_line(s.data() / "digits_test_indices.txt", 1, "12a"); }},
      {"batch order too short a line",
       {"--epochs", "1", "--batch-order", "@order.txt"},
       {"order.txt, line 1", "expected 1437 indices"},
       [](DigitsScratch& s) { std::ofstream(s.file("order.txt")) << "0 1 2\n"; }},
      {"batch order index out of range",
       {"--epochs", "1", "--batch-order", "@order.txt"},
       {"order.txt, line 1, column 3", "index 1437 is out of range 0..1436"},
       [](DigitsScratch& s) { std::ofstream(s.file("order.txt")) << "0 1 1437\n"; }},
      {"batch order wrong epoch count",
       {"--epochs", "2", "--batch-order", "@order.txt"},
       {"order.txt", "expected 2 lines"},
       [](DigitsScratch& s) {
         std::string line;
         for (int i = 0; i < 1437; ++i) line += std::to_string(i) + " ";
         std::ofstream(s.file("order.txt")) << line << "\n";
       }},
      {"missing batch order", {"--epochs", "1", "--batch-order", "@absent.txt"}, {"absent.txt", "cannot open"}},
      {"batch order is a directory",
       {"--epochs", "1", "--batch-order", "@orders"},
       {"orders: is a directory, not a file"},
       [](DigitsScratch& s) { std::filesystem::create_directories(s.file("orders")); }},
      {"init is a directory",
       {"--norm", "none", "--init-from", "@init"},
       {"none.safetensors: is a directory, not a checkpoint"},
       [](DigitsScratch& s) { std::filesystem::create_directories(s.file("init") + "/none.safetensors"); }},
      {"empty epochs",
       {"--epochs", ""},
       {"--epochs: \"\" is not a whole number (expected a decimal integer, at least 1)"}},
      {"hexadecimal epochs", {"--epochs", "0x10"}, {"--epochs: \"0x10\" is not a whole number"}},
      {"hexadecimal lr", {"--lr", "0x10"}, {"--lr: \"0x10\" is not a number"}},
      {"epochs with a sign", {"--epochs", "+5"}, {"--epochs: \"+5\" is not a whole number"}},
      {"norm list ending in a comma", {"--norm", "batch,"}, {"--norm \"batch,\" has an empty item"}},
      {"an option given twice", {"--epochs", "2", "--epochs", "3"}, {"--epochs is given more than once: give it once"}},
      {"too many threads", {"--threads", "5000"}, {"--threads must be at most 1024, got 5000"}},
      {"batch size past int64", {"--batch-size", "99999999999999999999"}, {"--batch-size must be at most"}},
      {"drop-last leaving no batch",
       {"--batch-size", "2000", "--drop-last"},
       {"batch size 2000 with --drop-last leaves no batch of the 1437-example training split to train on"}},
      {"init missing",
       {"--norm", "none", "--init-from", "@init"},
       {"none.safetensors", "cannot open"},
       [](DigitsScratch& s) { std::filesystem::create_directories(s.file("init")); }},
      {"init truncated",
       {"--norm", "none", "--init-from", "@init"},
       {"init/none.safetensors", "out of range"},
       [](DigitsScratch& s) {
         const std::string good = good_none_checkpoint(s);
         write_init(s, good.substr(0, good.size() - 100));
       }},
      {"init corrupt header",
       {"--norm", "none", "--init-from", "@init"},
       {"init/none.safetensors", "not valid JSON"},
       [](DigitsScratch& s) {
         std::string bytes = good_none_checkpoint(s);
         bytes[9] = '#';
         write_init(s, bytes);
       }},
      {"init of another model",
       {"--norm", "batch", "--init-from", "@init"},
       {"init/batch.safetensors", "does not fit"},
       [](DigitsScratch& s) {
         write_init(s, good_none_checkpoint(s));
         std::filesystem::rename(s.file("init") + "/none.safetensors", s.file("init") + "/batch.safetensors");
       }},
      {"init of other sizes",
       {"--norm", "none", "--width", "32", "--init-from", "@init"},
       {"init/none.safetensors", "does not fit"},
       [](DigitsScratch& s) { write_init(s, good_none_checkpoint(s)); }},
  };
}

}  // namespace

TEST_CASE("digits: each bad option or input file is one clear line and exit code 2, nothing written", "[cli]") {
  for (const BadInput& bad : bad_inputs()) {
    DYNAMIC_SECTION(bad.what) {
      DigitsScratch s;
      if (bad.break_files) bad.break_files(s);
      // Output targets: curves already there (must stay intact), summary and save absent.
      const std::string old_curves = "run,epoch,step,loss\nold,1,1,2.3\n";
      std::ofstream(s.file("curves.csv")) << old_curves;
      std::vector<std::string> args{
          "--quiet", "--curves", s.file("curves.csv"), "--summary", s.file("summary.json"), "--save", s.file("saved")};
      for (const std::string& a : bad.args) args.push_back(a.starts_with("@") ? s.file(a.substr(1)) : a);

      testing::ProcessResult result = s.run(args);
      INFO("stderr: " << result.err);
      CHECK(result.signal == 0);
      CHECK(result.exit_code == bad.exit_code);
      CHECK(result.out == "");
      REQUIRE(result.err.ends_with("\n"));
      CHECK(std::count(result.err.begin(), result.err.end(), '\n') == 1);
      CHECK(result.err.starts_with("digits: "));
      for (const std::string& piece : bad.message) CHECK_THAT(result.err, Catch::Contains(piece));
      CHECK(slurp(s.file("curves.csv")) == old_curves);
      CHECK_FALSE(std::filesystem::exists(s.file("summary.json")));
      CHECK_FALSE(std::filesystem::exists(s.file("saved")));
    }
  }
}

TEST_CASE("digits: --help prints the options and exits 0", "[cli]") {
  DigitsScratch s;
  testing::ProcessResult result = s.run({"--help"});
  CHECK(result.exit_code == 0);
  CHECK(result.err == "");
  for (const char* option :
       {"--norm", "--epochs", "--lr", "--batch-size", "--depth", "--width", "--groups", "--seeds", "--threads",
        "--data", "--curves", "--val-curves", "--summary", "--save", "--init-from", "--batch-order", "--drop-last"})
    CHECK_THAT(result.out, Catch::Contains(option));
}

}  // namespace test_cli_errors
