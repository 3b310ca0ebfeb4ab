#pragma once
// Writing a file so that a crash never leaves it half-written.
#include <string>
#include <string_view>

namespace minidl::io {

/// Writes bytes so that readers see the old file or the complete new one, never a part:
/// into a hidden temporary file in the target's directory (".<name>.tmp.XXXXXX", the name
/// shortened to fit the filesystem's limit), fsynced, renamed over the target, and the
/// directory fsynced. What "the target" is:
/// - a symlink to a regular file (or a chain of them): the file it points to is replaced,
///   the link stays;
/// - an existing file that is not a regular file (a character device such as /dev/null, a
///   FIFO, a terminal): written directly, in place, since replacing it would destroy it;
///   such a write is not atomic, and is what the caller asked for;
/// - otherwise the path itself.
/// A replaced file keeps its permission bits; a new one gets 0666 less the umask. Before
/// writing, temporaries of the same target left by a killed writer (older than this
/// process) are removed. Throws minidl::Error naming the path and the system's reason on
/// failure (the temporary file is removed, the target untouched).
void write_file_atomically(const std::string& path, std::string_view bytes);

}  // namespace minidl::io
