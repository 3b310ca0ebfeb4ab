#pragma once
// What experiments share: a training run as a record, figures over seeds, Markdown tables
// and gnuplot pictures.
#include <string>
#include <vector>

#include "lab.hpp"
#include "lesson/seeds.hpp"
#include "lesson/train_run.hpp"

namespace minidl::lab {

/// Trains one run and returns its record: the given keys, then norm, seed, status ("ok",
/// "diverged", "refused" or "failed"), steps, train_loss, val_loss, val_accuracy (NaN when the
/// run did not finish).
Record train_record(const Context& context, const lesson::TrainOptions& options, Record keys = {});
/// A job for train_record, its cost the examples it trains on.
Job train_job(const Context& context, const lesson::TrainOptions& options, Record keys = {});

/// The lesson's training (5 epochs; 1 with --quick).
lesson::TrainOptions lesson_training(const Settings& settings);

/// The norms the lesson's network is built with, in report order.
std::vector<lesson::NormKind> all_norms();

/// The records whose text field `key` equals `value` (and so on for each pair).
std::vector<Record> where(const std::vector<Record>& records,
                          const std::vector<std::pair<std::string, std::string>>& match);
/// The records whose number field `key` equals `value`.
std::vector<Record> where_num(const std::vector<Record>& records, const std::string& key, double value);
/// The spread over records of a figure (NaN values are left out; count says how many went in).
lesson::Spread spread(const std::vector<Record>& records, const std::string& figure);

/// The mean of a figure over records, a run that did not finish counting as `failed_as`.
double mean_counting_failures(const std::vector<Record>& records, const std::string& figure, double failed_as);
/// The spread of a figure over records, a run that did not finish counting as `failed_as`.
lesson::Spread spread_counting_failures(const std::vector<Record>& records, const std::string& figure,
                                        double failed_as);
/// How many of the records have that status ("ok", "diverged", "refused", "failed").
size_t count_status(const std::vector<Record>& records, const std::string& status);
/// Per norm, a line "$name x mean min max" per value of the key, for plotting against it.
std::string series_block(const std::string& name, const std::vector<Record>& records, const std::string& key,
                         const std::vector<double>& keys, const std::string& figure);
/// "0.961 [0.950, 0.970]" (mean and range), "n/a" when no value went in; digits after the point.
std::string mean_range(const lesson::Spread& s, int digits = 3);
/// A number with that many digits after the point, or "n/a" for NaN.
std::string fixed(double value, int digits = 3);
/// A number as the shortest text that reads back the same ("0.05", "2").
std::string plain(double value);

/// A Markdown table.
std::string markdown_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);

/// True when `gnuplot --version` runs.
bool gnuplot_available();
/// Runs gnuplot on script (which refers to its output as the PNG named) in out_dir, writing
/// the PNG there; throws naming the picture and gnuplot's exit status when it fails.
void draw(const std::string& out_dir, const std::string& png, const std::string& script);
/// The script's opening: a pngcairo terminal of that size writing png, with a grid.
std::string plot_header(const std::string& png, int width = 900, int height = 540);
/// The script's opening for two panels side by side under one title.
std::string two_panels(const std::string& png, const std::string& title, int width = 1100, int height = 480);
/// GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces as '-'.
std::string anchor(const std::string& heading);
/// " with yerrorlines lw 2 lc rgb '#...' title 'LayerNorm'": one colour per norm in every picture.
std::string norm_line(lesson::NormKind norm);
/// A gnuplot datablock "$name << EOD ... EOD" holding rows of space-separated columns.
std::string datablock(const std::string& name, const std::vector<std::vector<double>>& rows);

}  // namespace minidl::lab
