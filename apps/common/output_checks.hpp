#pragma once
// Where a program writes, checked before anything trains: every output in a
// directory that exists and takes a write, none of them an input or another output.
#include <string>
#include <vector>

namespace minidl::apps {

/// A file the program reads or writes, and the option (or "--data") it came from.
struct NamedFile {
  std::string option;
  std::string path;
};

/// Throws UsageError naming the option and the path when an output is an input or another
/// output (same resolved path or same file), is a directory, has a name too long for its
/// filesystem, or lies in a directory that does not exist or takes no new file. Outputs of
/// the option "--save" are files in save_dir, which need not exist yet. Creates nothing:
/// call it before reading the inputs.
void check_outputs(const std::vector<NamedFile>& inputs, const std::vector<NamedFile>& outputs,
                   const std::string& save_dir);

/// Creates the --save directory (if any) and checks it takes a file; throws UsageError
/// naming it otherwise. The last check before training, so a refusal creates nothing.
void prepare_save_directory(const std::string& save_dir);

}  // namespace minidl::apps
