#pragma once
/// \file text_file.hpp
/// A small text file written whole or not at all: the text goes to
/// `PATH.tmp`, which is renamed to PATH once complete (atomic on POSIX in one
/// folder), so that a reader or a crash never sees a half-written file.

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

namespace dem {

/// Writes `text` to `path` through `path.tmp`. Throws std::runtime_error
/// "cannot write 'PATH.tmp'" or "cannot rename 'PATH.tmp' to 'PATH': why";
/// the temporary is removed then.
inline void write_text_file(const std::filesystem::path& path, std::string_view text) {
  std::filesystem::path tmp = path;
  tmp += ".tmp";
  std::error_code ec;
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      std::filesystem::remove(tmp, ec);
      throw std::runtime_error("cannot write '" + tmp.string() + "'");
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    const std::string why = ec.message();
    std::filesystem::remove(tmp, ec);
    throw std::runtime_error("cannot rename '" + tmp.string() + "' to '" + path.string() + "': " + why);
  }
}

}  // namespace dem
