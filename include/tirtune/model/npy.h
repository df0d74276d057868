// NumPy .npy files (format versions 1 to 3, C order, little endian) for model inputs and outputs:
// float32 ('<f4'), float64 ('<f8'), int32 ('<i4'), int64 ('<i8'), uint8 ('|u1') and bool ('|b1').
#pragma once

#include <string>

#include "tirtune/support/ndarray.h"

namespace tirtune::model {

/// The array in the .npy file at `path`. UserError naming the file for one that cannot be read,
/// is not a .npy file, is Fortran-ordered, big-endian or of another element type.
NDArray ReadNpy(const std::string& path);

/// Writes `array` as a version 1.0 .npy file. UserError when the file cannot be written.
void WriteNpy(const std::string& path, const NDArray& array);

}  // namespace tirtune::model
