// 9. RMSNorm keeps an offset that LayerNorm removes; the lesson's worked numbers.
#include "experiments/experiments.hpp"
#include "minidl/nn/norm/batch_norm.hpp"
#include "minidl/nn/norm/layer_norm.hpp"
#include "minidl/nn/norm/rms_norm.hpp"
#include "minidl/ops/binary.hpp"

namespace minidl::lab {

namespace {

constexpr double kCentered = 1e-4;  // LayerNorm's output mean must be 0 within this
constexpr double kKept = 0.9;       // RMSNorm's output mean at offsets 10 and 100 must exceed this

std::vector<double> offsets() { return {0.0, 1.0, 10.0, 100.0}; }

double mean_of(const Tensor& t) {
  double sum = 0.0;
  for (int64_t i = 0; i < t.numel(); ++i) sum += t.data()[i];
  return sum / double(t.numel());
}

std::vector<double> values(const Tensor& t) {
  const std::vector<float> v = t.to_vector();
  return {v.begin(), v.end()};
}

// digits < 0: as short as the number allows (the lesson's own digits).
std::string list(const std::vector<double>& v, int digits) {
  std::string text = "[";
  for (size_t i = 0; i < v.size(); ++i) text += (i ? ", " : "") + (digits < 0 ? plain(v[i]) : fixed(v[i], digits));
  return text + "]";
}

bool matches(const Record& worked) { return worked.num("largest_difference") <= worked.num("tolerance"); }

class RmsOffset : public Experiment {
 public:
  RmsOffset()
      : Experiment({"rms_offset", "RMSNorm keeps an offset",
                    "RMSNorm drops the mean centering, so a large constant offset passes through scaled but unshifted, "
                    "where LayerNorm removes it; and the lesson's worked numbers",
                    "study guide, \"Traps\"; lesson, \"RMSNorm: skip the mean\"; chapter 34, the numpy example"}) {}
  std::string setup(const Settings&) const override {
    return "Random normal (32, 64) inputs per seed plus an offset of 0, 1, 10 or 100, through LayerNorm(64) and "
           "RMSNorm(64) as initialized (weight 1, bias 0): the mean of all outputs. Then the lesson's worked "
           "examples through minidl's layers.";
  }
  std::string rule() const override {
    return cat("held when on every seed LayerNorm's output mean is within ", kCentered,
               " of 0 at every offset, RMSNorm's output mean exceeds ", kKept,
               " at offsets 10 and 100 (for x = z + c the mean is about c / sqrt(1 + c^2)), and every worked "
               "example matches the lesson's printed digits (within half a unit of the last digit); held partly "
               "when the offset part or the worked examples hold but not both; else did not hold.",
               exact_rule());
  }
  std::vector<Job> plan(const Context& c) const override {
    std::vector<Job> jobs = seed_jobs(c.settings.seeds, 50.0, [](uint64_t seed) {
      std::vector<Record> out;
      for (double offset : offsets()) {
        const OffsetMeans m = measure_offset(offset, seed);
        out.push_back({{"part", "offset"},
                       {"seed", double(seed)},
                       {"offset", offset},
                       {"input_mean", m.input_mean},
                       {"layer_norm_mean", m.layer_norm_mean},
                       {"rms_norm_mean", m.rms_norm_mean}});
      }
      return out;
    });
    jobs.push_back({10.0, [] {
                      std::vector<Record> out;
                      for (const WorkedExample& w : worked_examples()) {
                        double worst = 0.0;
                        for (size_t i = 0; i < w.expected.size(); ++i)
                          worst = std::max(worst, std::fabs(w.expected[i] - w.computed[i]));
                        out.push_back({{"part", "worked"},
                                       {"example", w.name},
                                       {"expected", list(w.expected, -1)},
                                       {"computed", list(w.computed, 4)},
                                       {"largest_difference", worst},
                                       {"tolerance", w.tolerance}});
                      }
                      return out;
                    }});
    return jobs;
  }
  Decision decide(const std::vector<Record>& records, const Settings&) const override {
    bool offset_part = true, worked_part = true;
    for (double offset : offsets()) {
      const auto mine = where_num(where(records, {{"part", "offset"}}), "offset", offset);
      const lesson::Spread ln = spread(mine, "layer_norm_mean"), rms = spread(mine, "rms_norm_mean");
      offset_part = offset_part && std::max(std::fabs(ln.min), std::fabs(ln.max)) <= kCentered;
      if (offset >= 10.0) offset_part = offset_part && rms.min > kKept;
    }
    for (const Record& r : where(records, {{"part", "worked"}})) worked_part = worked_part && matches(r);
    return {verdict_of({truth_of(offset_part), truth_of(worked_part)}),
            cat(offset_part ? "LayerNorm centers every offset away; RMSNorm passes it through, scaled"
                            : "the offset part failed its rule",
                "; ", worked_part ? "every worked example matches" : "a worked example does not match", ".")};
  }
  Description describe(const std::vector<Record>& records, const Settings& s) const override {
    std::vector<std::vector<std::string>> rows;
    std::vector<std::vector<double>> points;  // offset + 0.1 (to show 0 on a log axis), the two means
    for (double offset : offsets()) {
      const auto mine = where_num(where(records, {{"part", "offset"}}), "offset", offset);
      const lesson::Spread in = spread(mine, "input_mean"), ln = spread(mine, "layer_norm_mean"),
                           rms = spread(mine, "rms_norm_mean");
      rows.push_back({plain(offset), mean_range(in), mean_range(ln, 6), mean_range(rms, 4),
                      fixed(offset / std::sqrt(1.0 + offset * offset), 4)});
      points.push_back({offset + 0.1, ln.mean, rms.mean});
    }
    std::string table =
        "Output means, mean [min, max] over seeds:\n\n" +
        markdown_table({"offset c", "input mean", "LayerNorm output mean", "RMSNorm output mean", "c / sqrt(1 + c^2)"},
                       rows);
    std::vector<std::vector<std::string>> worked;
    for (const Record& r : where(records, {{"part", "worked"}}))
      worked.push_back({r.text("example"), r.text("expected"), r.text("computed"), matches(r) ? "yes" : "no"});
    table += "\nThe lesson's worked examples:\n\n" + markdown_table({"example", "lesson", "minidl", "matches"}, worked);
    const std::string script =
        datablock("m", points) +
        "set title 'A constant offset c added to the input: mean of the normalized output'\n"
        "set logscale x\nset xlabel 'offset c (+0.1 to show 0 on a log axis)'\nset ylabel 'output mean'\n"
        "set yrange [-0.2:1.2]\nset xrange [0.08:150]\nset key top left\n"
        "plot $m using 1:2 with linespoints lw 2 title 'LayerNorm', "
        "$m using 1:3 with linespoints lw 2 title 'RMSNorm', "
        "(x-0.1)/sqrt(1+(x-0.1)**2) dt 2 lc 'gray' title 'c / sqrt(1 + c^2)'\n";
    return {table, {draw_plot(s.out_dir, "rms_offset.png", script, 800, 460)}};
  }
};

}  // namespace

OffsetMeans measure_offset(double offset, uint64_t seed) {
  Generator gen(seed);
  const Tensor x = Tensor::randn({32, 64}, gen) + float(offset);  // (N, 64)
  nn::LayerNorm layer_norm(nn::LayerNormOptions{.normalized_shape = {64}});
  nn::RMSNorm rms_norm(nn::RMSNormOptions{.normalized_shape = {64}});
  NoGradGuard no_grad;
  return {offset, mean_of(x), mean_of(layer_norm(x)), mean_of(rms_norm(x))};
}

std::vector<WorkedExample> worked_examples() {
  NoGradGuard no_grad;
  std::vector<WorkedExample> out;
  const Tensor x = Tensor::from_vector({2, 4, 4, 10}, {1, 4});
  nn::LayerNorm ln0(nn::LayerNormOptions{.normalized_shape = {4}, .eps = 0.0});
  out.push_back({"LayerNorm of [2, 4, 4, 10], eps 0", {-1, -0.333, -0.333, 1.667}, values(ln0(x)), 5e-4});
  nn::RMSNorm rms4(nn::RMSNormOptions{.normalized_shape = {4}});
  out.push_back({"RMSNorm of [2, 4, 4, 10]", {0.343, 0.686, 0.686, 1.715}, values(rms4(x)), 5e-4});
  nn::RMSNorm rms2(nn::RMSNormOptions{.normalized_shape = {2}});
  out.push_back({"RMSNorm of [3, 4]", {0.849, 1.131}, values(rms2(Tensor::from_vector({3, 4}, {1, 2}))), 5e-4});
  out.push_back({"RMSNorm of [1, 7] (rms 5)", {0.2, 1.4}, values(rms2(Tensor::from_vector({1, 7}, {1, 2}))), 5e-3});
  nn::BatchNorm1d bn1(nn::BatchNormOptions{.num_features = 1, .eps = 0.0});
  bn1.train();
  out.push_back({"BatchNorm of one feature [0, 2, 4], eps 0",
                 {-1.225, 0, 1.225},
                 values(bn1(Tensor::from_vector({0, 2, 4}, {3, 1}))),
                 5e-4});
  const Tensor grid = Tensor::from_vector({1, 5, 3, 2, 2, 8}, {2, 3});
  nn::BatchNorm1d bn3(3);
  bn3.train();
  out.push_back({"BatchNorm of [[1, 5, 3], [2, 2, 8]]", {-1, 1, -1, 1, -1, 1}, values(bn3(grid)), 5e-3});
  nn::LayerNorm ln3(nn::LayerNormOptions{.normalized_shape = {3}});
  out.push_back({"LayerNorm of [[1, 5, 3], [2, 2, 8]]", {-1.22, 1.22, 0, -0.71, -0.71, 1.41}, values(ln3(grid)), 5e-3});
  nn::RMSNorm rms3(nn::RMSNormOptions{.normalized_shape = {3}});
  out.push_back({"RMSNorm of [[1, 5, 3], [2, 2, 8]]", {0.29, 1.46, 0.88, 0.41, 0.41, 1.63}, values(rms3(grid)), 5e-3});
  return out;
}

std::shared_ptr<const Experiment> rms_offset_experiment() { return std::make_shared<RmsOffset>(); }

}  // namespace minidl::lab
