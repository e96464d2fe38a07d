//===- Error.h - The runtime's exception type -------------------*- C++ -*-===//
//
// Every recoverable failure in the runtime (bad artifact, bad manifest, bad or
// missing data file, unwritable results directory) is reported by throwing
// RuntimeError with a message that names the file or field at fault, so that
// a tool can print it and exit instead of crashing.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_ERROR_H
#define MBT_RUNTIME_ERROR_H

#include <stdexcept>
#include <string>

namespace mbt {
namespace runtime {

/// The single exception type the runtime throws for bad input or environment.
/// Deriving from std::runtime_error lets callers that only know the standard
/// library catch it too.
class RuntimeError : public std::runtime_error {
public:
  explicit RuntimeError(const std::string &message)
      : std::runtime_error(message) {}
};

/// A run that TrainOptions::interrupted stopped between two steps, after
/// writing its checkpoint.
class RunInterrupted : public RuntimeError {
public:
  using RuntimeError::RuntimeError;
};

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_ERROR_H
