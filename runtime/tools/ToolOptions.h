//===- ToolOptions.h - what the runtime's tools share of CLI11 -*- C++ -*-===//
//
// mbt-run, mbt-data and mbt-gpu-check parse their options with CLI11 in one
// style: counts go through one validator, a usage error is one line
// "TOOL: error: ..." and a hint on stderr with exit status 2, and --help is
// CLI11's, on stdout, with exit status 0.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_TOOLS_TOOLOPTIONS_H
#define MBT_RUNTIME_TOOLS_TOOLOPTIONS_H

#include <CLI/CLI.hpp>

#include <charconv>
#include <cstdint>
#include <iostream>
#include <optional>
#include <string>

namespace mbt::runtime::tools {

/// Counts (epochs, steps, token budgets): an integer of at least `least`
/// (0 or 1), said as plainly.
inline CLI::Validator countValidator(int64_t least = 0) {
  return CLI::Validator(
      [least](std::string &value) -> std::string {
        int64_t n = 0;
        const char *end = value.data() + value.size();
        auto [stop, error] = std::from_chars(value.data(), end, n);
        if (value.empty() || error != std::errc() || stop != end || n < least)
          return std::string("expects a ") +
                 (least > 0 ? "positive" : "non-negative") + " integer, got '" +
                 value + "'";
        return "";
      },
      "");
}

/// An option that takes a count N (at least `least`) into `field`.
inline CLI::Option *addCount(CLI::App &app, const std::string &name,
                             int64_t &field, const std::string &help,
                             int64_t least = 0) {
  return app.add_option(name, field, help)
      ->check(countValidator(least))
      ->type_name("N");
}

/// Reports a usage error as the tools do: one line naming the problem, a
/// hint, exit status 2.
inline int usageError(const std::string &tool, const std::string &message) {
  std::cerr << tool << ": error: " << message << "\n"
            << "Run with --help for more information.\n";
  return 2;
}

/// Parses the command line into `app`'s options. Returns the exit status to
/// stop with (0 after --help, 2 after a usage error, reported), or nothing
/// to go on.
inline std::optional<int> parseCommandLine(CLI::App &app, int argc, char **argv,
                                           const std::string &tool) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success &help) {
    return app.exit(help);
  } catch (const CLI::ParseError &error) {
    return usageError(tool, error.what());
  }
  return std::nullopt;
}

} // namespace mbt::runtime::tools

#endif // MBT_RUNTIME_TOOLS_TOOLOPTIONS_H
