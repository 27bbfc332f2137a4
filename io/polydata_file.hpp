#pragma once
/// \file polydata_file.hpp
/// One VTK PolyData file (.vtp) written the way every frame of this
/// engine is: appended raw binary, zlib-compressed (libdeflate where the
/// build has it), 64-bit block headers, to `path.tmp` and renamed to
/// `path`, so that a failed write leaves no half file.

#include <filesystem>

class vtkPolyData;

namespace dem {

/// Writes `data` to `path` at the given zlib compression level (1..9).
/// Throws std::runtime_error naming the file on failure (the temporary
/// file removed).
void write_polydata(vtkPolyData* data, const std::filesystem::path& path, int compression_level);

}  // namespace dem
