// The sequence chapter's charlm_sync judgement on constructed records: each verdict its rule
// can give, so a rule that always said "held" fails here.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "experiments/experiments.hpp"

namespace test_lab_charlm_sync {

using namespace minidl::lab;

namespace {

// The quick grid (ranks 1 and 2) over seeds 0-2.
Settings quick() {
  Settings s;
  s.quick = true;
  s.seeds = {0, 1, 2};
  return s;
}

// Step losses 3.3, 3.2, ... moved by `shift` on more than one rank.
std::string early(double shift) {
  std::string text;
  for (int step = 0; step < 20; ++step) text += (text.empty() ? "" : " ") + std::to_string(3.3 - 0.01 * step + shift);
  return text;
}

// One run's record as the experiment writes it.
Record run(const char* norm, int ranks, double seed, double val_loss, double step_shift) {
  return Record()
      .set("ranks", double(ranks))
      .set("rank_batch", 32.0 / ranks)
      .set("norm", norm)
      .set("seed", seed)
      .set("status", "ok")
      .set("train_loss", val_loss - 0.05)
      .set("val_loss", val_loss + 0.002 * (seed - 1.0))
      .set("early_losses", early(ranks > 1 ? step_shift : 0.0));
}

// Per norm: on two ranks its validation loss moves by `val_shift` and its step losses by `step_shift`.
struct Moves {
  double val_shift, step_shift;
};
std::vector<Record> records(Moves layer, Moves batch, Moves sync) {
  std::vector<Record> out;
  for (int ranks : {1, 2})
    for (double seed : {0.0, 1.0, 2.0}) {
      out.push_back(run("layer", ranks, seed, 2.2 + (ranks > 1 ? layer.val_shift : 0.0), layer.step_shift));
      out.push_back(run("batch", ranks, seed, 2.3 + (ranks > 1 ? batch.val_shift : 0.0), batch.step_shift));
      out.push_back(run("sync_batch", ranks, seed, 2.3 + (ranks > 1 ? sync.val_shift : 0.0), sync.step_shift));
    }
  return out;
}

Verdict verdict_of(const std::vector<Record>& r) { return charlm_sync_experiment()->decide(r, quick()).verdict; }

}  // namespace

TEST_CASE("lab charlm_sync: each verdict its rule can give", "[lab][charlm]") {
  const Moves same{0.0, 1e-6}, other_model{0.0, 0.05}, worse{0.2, 1e-6};
  CHECK(verdict_of(records(same, other_model, same)) == Verdict::Held);
  CHECK(verdict_of(records(same, same, same)) == Verdict::HeldPartly);                // local BatchNorm did not differ
  CHECK(verdict_of(records(same, other_model, worse)) == Verdict::HeldPartly);        // SyncBatchNorm's loss moved
  CHECK(verdict_of(records(same, same, other_model)) == Verdict::DidNotHold);         // neither (b) nor (c)
  CHECK(verdict_of(records(other_model, other_model, same)) == Verdict::DidNotHold);  // LayerNorm's steps moved
  CHECK(verdict_of(records(worse, other_model, same)) == Verdict::DidNotHold);        // LayerNorm's loss moved
  const Decision held = charlm_sync_experiment()->decide(records(same, other_model, same), quick());
  CHECK(held.why.find("(a) holds; (b) holds; (c) holds") != std::string::npos);
}

TEST_CASE("lab charlm_sync: a run missing from one rank's side is no evidence of the same model", "[lab][charlm]") {
  std::vector<Record> r = records({0.0, 1e-6}, {0.0, 0.05}, {0.0, 1e-6});
  r.front().set("early_losses", "");  // LayerNorm's one-rank seed 0 lost its curve
  CHECK(verdict_of(r) == Verdict::DidNotHold);
}

TEST_CASE("lab charlm_sync: without MPI it is not run", "[lab][charlm]") {
  const std::vector<Record> r{Record().set("ranks", 1.0).set("status", "not run")};
  CHECK(verdict_of(r) == Verdict::NotRun);
  CHECK(charlm_sync_experiment()->describe(r, quick()).table.starts_with("Not run: MPI support not built"));
}

}  // namespace test_lab_charlm_sync
