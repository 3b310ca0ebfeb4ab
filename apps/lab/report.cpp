#include "report.hpp"

#include <filesystem>
#include <fstream>

#include "minidl/tensor/error.hpp"
#include "registry.hpp"
#include "report_page.hpp"
#include "runs/seeds.hpp"
#include "tools.hpp"

namespace fs = std::filesystem;

namespace minidl::lab {

namespace {

void write_file(const fs::path& path, const std::string& text) {
  const fs::path temporary = path.string() + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary);
    if (!(out << text) || !out.flush()) throw Error(cat("cannot write ", path.string()));
  }
  fs::rename(temporary, path);
}

constexpr const char* kVerdictMark = "<!-- verdict: ";

}  // namespace

std::string section_markdown(const Experiment& e, size_t number, const Settings& s, const Outcome& outcome) {
  std::string md = cat(kVerdictMark, verdict_text(outcome.decision.verdict), " -->\n");
  md += cat("## ", number, ". ", e.title(), "\n\n");
  md += cat("**Claim** (", e.source(), "): ", e.claim(), "\n\n");
  md += cat("**Set-up**: ", e.setup(s), " Seeds ", lesson::seeds_text(e.seeds_used(s)), s.quick ? " (--quick)" : "",
            "; `lab run ", e.name(), "`; every run's figures in [", e.name(), ".csv](", e.name(), ".csv).\n\n");
  md += cat("**Rule** (fixed before the numbers): ", e.rule(), "\n\n");
  md += outcome.description.table + "\n";
  for (const std::string& png : outcome.description.pictures) md += cat("![", e.name(), "](", png, ")\n\n");
  md += cat("**Verdict: ", verdict_text(outcome.decision.verdict), "**. ", outcome.decision.why, "\n");
  return md;
}

void write_experiment(const Experiment& e, size_t number, const Settings& s, const std::vector<Record>& records,
                      const Outcome& outcome) {
  const fs::path dir(s.out_dir);
  write_file(dir / (e.name() + ".csv"), records_csv(records));
  std::vector<apps::RunLog> curves;
  for (const Record& record : records)
    if (record.curves) curves.push_back(*record.curves);
  std::string md = section_markdown(e, number, s, outcome);
  if (!curves.empty()) {  // the runs' curves to explore: zoom, toggle, hover (docs/comparing-runs.md)
    write_file(dir / (e.name() + ".html"), apps::report_page(e.title(), curves, outcome.description.table));
    md += cat("\nEvery run's loss and accuracy curves, to zoom into and compare: [", e.name(), ".html](", e.name(),
              ".html).\n");
  }
  write_file(dir / (e.name() + ".md"), md);
}

void write_readme(const std::string& out_dir, const std::string& timing) {
  const fs::path dir(out_dir);
  const std::string table_head = "| # | experiment | claim | verdict |\n| ---: | --- | --- | --- |\n";
  std::string overview, sections;
  size_t number = 0;
  for (const Chapter& chapter : chapters()) {
    if (chapter.experiments.empty()) continue;
    overview += cat("**", chapter.title, "**\n\n", table_head);
    sections += cat("# ", chapter.title, "\n\n");
    for (const auto& e : chapter.experiments) {
      ++number;
      const fs::path section = dir / (e->name() + ".md");
      std::string verdict = "not run";
      if (fs::exists(section)) {
        const std::string text = read_file(section);
        const size_t at = text.find(kVerdictMark);
        if (at != std::string::npos) {
          const size_t from = at + std::string(kVerdictMark).size();
          verdict = text.substr(from, text.find(" -->", from) - from);
        }
        sections += text.substr(text.find('\n') + 1) + "\n";
      }
      overview += cat("| ", number, " | [", e->title(), "](#", anchor(cat(number, ". ", e->title())), ") | ",
                      e->claim(), " | **", verdict, "** |\n");
    }
    overview += "\n";
  }
  std::string md =
      "# The lab: the lesson's claims about normalization, measured\n\n"
      "The first chapter's experiments mostly train the lesson's network (8 x [Linear(64), norm, Tanh], then "
      "Linear(10); SGD lr "
      "0.05, batch 64, 5 epochs on the digits), changing one thing at a time, over several seeds; others check "
      "a layer exactly, or train the digits' CNN, residual MLPs, or the lesson on several processes under "
      "mpirun. The sequence chapter trains `charlm`, a character-level transformer (docs/charlm.md), on the "
      "word list. Every verdict is computed by the program from the figures, by the rule printed before "
      "them. A rule never decides on which side of a threshold a figure of training runs sits when the figure is "
      "within its margin of it (2 standard errors of its mean over seeds, at least a floor the rule names): such "
      "a verdict reads \"inconclusive\", so the last bits of chaotic runs, which change with the BLAS kernel, "
      "do not change a verdict (the ctest `lab.run_all_quick` compares the quick lab's verdicts under each "
      "OpenBLAS core type the CPU runs). Regenerate with `build/apps/lab/lab run all` (or one experiment: `lab run "
      "depth`); "
      "`lab list` names them. A new experiment is a file in `apps/lab/experiments/` (the sequence chapter's "
      "in `experiments/sequence/`) defining an `Experiment` (name, claim, lesson source, set-up, rule, plan of "
      "jobs, judgement), its factory declared in `experiments/experiments.hpp` and called in its chapter's list "
      "in `apps/lab/registry.cpp`.\n\n";
  // The timing of the last `lab run all` stays until the next one.
  const fs::path timing_file = dir / "run_all_timing.txt";
  if (!timing.empty()) write_file(timing_file, timing);
  if (fs::exists(timing_file)) md += read_file(timing_file) + "\n\n";
  md += overview + sections;
  write_file(dir / "README.md", md);
}

}  // namespace minidl::lab
